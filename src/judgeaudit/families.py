"""Model families: one maintained table from model names to vendor families, and the rules that
compare them (generator/verifier/audited judges, C8 evaluator vs. judges, CAP within-family L1).

A family is a string naming one vendor (``"openai"``) or several joined by ``+`` in sorted order
(``"google+skywork"``: an ensemble, or a fine-tune whose name names its base model and its
trainer), ``None`` when unknown, or ``REFERENCE`` for an instrument that is not a model.

Rules:

* The family comes only from the tables below (never from the shape of a name), read from the model
  name after dropping every path prefix (LiteLLM providers such as ``openai/`` or ``openrouter/``, hub
  organisations such as ``google/``): ``LINES`` (fine-tune lines whose name does not say their base:
  ``orca-2`` is Llama 2 trained by Microsoft, ``meta+microsoft``), then the tokens of what is left
  (``MODEL_TOKENS``: the vendors whose pretrained weights the token names; ``TRAINER_TOKENS``: a
  trainer's line that names no base). A user's ``family=`` replaces the tables.
* A model's family needs its base: a name that names no base (only a trainer's line, or nothing the
  tables know) is unknown, whatever hub organisation hosts it. The organisation just before the
  name (``ORGANISATIONS``; provider prefixes are not in it, because ``openai/<model>`` is any
  OpenAI-compatible server) and trainer tokens add the trainer's vendor to a known base.
* A brand that also fine-tunes other vendors' bases (NVIDIA's Nemotron, Skywork, InternVL) is a
  trainer token: its name without a base is unknown, its own pretrained lines are listed in
  ``LINES``. A distill whose base depends on a tag the name does not explain (Ollama's
  ``deepseek-r1:7b`` is DeepSeek-R1 distilled into Qwen2.5-7B, ``deepseek-r1:70b`` into Llama 3.3
  70B) is read from ``OLLAMA_TAGS``; a size the table does not list is unknown.
* A model folder on disk (``hf:./my-model``) adds what its model card's ``base_model`` and its
  ``config.json`` establish (``local_family``).
* A fine-tuned model belongs to every vendor its name names: the base model's (shared pretraining
  is what the disjointness rules guard against) and its trainer's when the table lists the
  trainer (``Skywork-Reward-Gemma-2-27B`` -> ``google+skywork``; ``GRM-Gemma-2B`` -> ``google``;
  ``nvidia/AceMath-72B-RM`` -> ``alibaba+nvidia``).
* Unknown (``None``) is never equal to anything: it is never half of a within-family pair, and a
  disjointness rule involving it cannot be decided (callers refuse and ask for ``family=``).
* Two families are disjoint when their vendor sets do not intersect; an ensemble with an unknown
  member is unknown. ``REFERENCE`` has no vendors: disjoint from everything, and never in a
  family comparison such as the CAP L1 table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from judgeaudit.errors import InputError
from judgeaudit.specs import join, split

#: The family value of a reference instrument (``reference:*``): not a model, no vendor.
REFERENCE = "reference"

#: Vendor -> tokens of model names that carry its pretrained weights. A pattern matches one whole
#: token of the lower-cased name (tokens are split at every non-alphanumeric character), optionally
#: followed by a version (``gpt4o``, ``llama3``, ``qwen2``, ``qwen2p5``, ``palm2``).
MODEL_TOKENS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt", "chatgpt", "davinci", "babbage", "curie"),
    "anthropic": ("claude",),
    "google": ("gemini", "gemma", "codegemma", "recurrentgemma", "shieldgemma", "palm", "bison", "bard", "t5",
               "mt5", "flan", "ul2"),
    "meta": ("llama", "codellama", "opt", "galactica"),
    "mistral": ("mistral", "mixtral", "codestral", "ministral", "mathstral", "pixtral", "magistral",
                "devstral"),
    "alibaba": ("qwen", "qwq", "codeqwen"),
    "deepseek": ("deepseek",),
    "microsoft": ("phi",),
    "cohere": ("command", "c4ai", "aya"),
    "xai": ("grok",),
    "01-ai": ("yi",),
    "shanghai-ai-lab": ("internlm",),
    "tii": ("falcon",),
    "zhipu": ("glm", "chatglm"),
    "allenai": ("olmo", "olmoe"),
    "ibm": ("granite",),
    "baichuan": ("baichuan",),
    "moonshot": ("kimi", "moonshot"),
    "ai21": ("jamba", "jurassic"),
    "stability": ("stablelm",),
    "databricks": ("dbrx", "mpt"),
    "amazon": ("nova", "titan"),
    "minimax": ("minimax", "abab"),
    "baidu": ("ernie",),
    "tencent": ("hunyuan",),
    "snowflake": ("arctic",),
    "eleutherai": ("pythia",),
}

#: OpenAI's reasoning models (``o1``, ``o3-mini``, ``o4-mini``): only as the first token of a name
#: (``Skywork-o1-Open-Llama-3.1-8B`` is a Llama).
LEADING_TOKENS: dict[str, tuple[str, ...]] = {"openai": ("o[1-9]",)}

#: Vendor -> tokens of a trainer's fine-tune line that name no base model: they add the trainer to a
#: base the name states (``Nous-Hermes-2-Mixtral-8x7B`` -> ``mistral+nous``), never a family alone.
#: A brand that fine-tunes other vendors' bases as well as its own is a trainer token, its own
#: pretrained lines are in ``LINES`` (``Nemotron-4-340B`` is NVIDIA's; ``OpenReasoning-Nemotron-7B``
#: is a Qwen2.5, ``Skywork-OR1-32B`` a DeepSeek-R1 distill of Qwen2.5, ``InternVL3-8B`` a Qwen2.5).
TRAINER_TOKENS: dict[str, tuple[str, ...]] = {
    "nous": ("nous", "hermes"), "nomic": ("gpt4all",), "nvidia": ("nemotron",), "skywork": ("skywork",),
    "shanghai-ai-lab": ("internvl",),
}

#: Fine-tune lines whose names do not say their base: a pattern over the lower-cased name with
#: every run of other characters made one ``-``, matched at ``-`` boundaries -> base and trainer
#: vendors. The matched part is not read again as tokens (``gpt4all-j`` is GPT-J, not OpenAI's).
LINES: tuple[tuple[str, str], ...] = (
    (r"orca-2", "meta+microsoft"),                                   # Orca 2: Llama 2
    (r"wizardlm-?2-(?:8x22b|7b)", "microsoft+mistral"),              # WizardLM-2: Mixtral 8x22B, Mistral 7B
    (r"wizardlm-?2-70b", "meta+microsoft"),                          # WizardLM-2 70B: Llama 2
    (r"wizardlm(?:-\d+b)?(?:-v1-\d+)?", "meta+microsoft"),            # WizardLM 1.x: LLaMA, Llama 2
    (r"mai-ds-r1", "deepseek+microsoft"),                            # MAI-DS-R1: DeepSeek-R1
    (r"tulu(?:-?v?\d+)?", "allenai+meta"),                           # Tulu 1-3: LLaMA, Llama 2, Llama 3.1
    (r"ace(?:math|instruct)", "alibaba+nvidia"),                     # AceMath, AceInstruct: Qwen2.5
    (r"gpt4all-j", "eleutherai+nomic"),                              # GPT4All-J: GPT-J
    (r"gpt-(?:j|neo|neox)|gptj", "eleutherai"),
    (r"dolly(?:-v\d+)?", "databricks+eleutherai"),                   # Dolly: GPT-J, Pythia
    (r"prometheus-(?:7b|8x7b)-v2(?:-\d+)?", "kaist+mistral"),        # Prometheus 2: Mistral 7B, Mixtral
    (r"prometheus-(?:7b|13b)-v1(?:-\d+)?", "kaist+meta"),            # Prometheus 1: Llama 2
    (r"flow-judge", "flowai+microsoft"),                             # Flow-Judge v0.1: Phi-3.5-mini
    (r"starling-rm-7b", "berkeley+meta"),                            # Starling-RM-7B: Llama 2 7B chat
    (r"starling-lm-7b", "berkeley+mistral"),                         # Starling-LM-7B: OpenChat 3.5 (Mistral)
    (r"starling-rm-34b", "01-ai+nexusflow"),                         # Starling-RM-34B: Yi-34B chat
    (r"ultrarm", "meta+openbmb"),                                    # UltraRM-13B: Llama 2 13B
    (r"zephyr-(?:7b|orpo-141b)", "huggingface+mistral"),             # Zephyr: Mistral 7B, Mixtral 8x22B
    (r"vicuna", "lmsys+meta"),                                       # Vicuna: LLaMA, Llama 2
    (r"alpaca", "meta+stanford"),                                    # Alpaca: LLaMA
    (r"koala", "berkeley+meta"),                                     # Koala: LLaMA
    # a brand's own pretraining, where the brand also fine-tunes other vendors' bases
    (r"nemotron-(?:4|3|mini|h|nano-(?:9b|12b)-v2)", "nvidia"),       # Nemotron-4/-3/-Mini/-H, Nano v2
    (r"minitron", "nvidia"),                                         # Minitron: pruned Nemotron-4 15B
    (r"skywork-(?:\d+b|moe)", "skywork"),                            # Skywork-13B, Skywork-MoE
    (r"aya-101", "cohere+google"),                                   # Aya 101: mT5-XXL
    (r"kimi-dev", "alibaba+moonshot"),                               # Kimi-Dev-72B: Qwen2.5-72B
    (r"open-llama-\d+b(?:-v\d+)?", "openlm"),                        # OpenLLaMA 3B/7B/13B: from scratch
)

#: Ollama library names whose weights depend on the tag, where the name does not say the base:
#: name -> {tag's size (or ``latest``) -> family}. A tag of another size is unknown; a tag that
#: names its base (``8b-llama-distill-q4_K_M``) is read as a name. Read only for ``name:tag`` or an
#: ``ollama/`` / ``ollama_chat/`` model (no tag: ``latest``).
OLLAMA_TAGS: dict[str, dict[str, str]] = {
    # DeepSeek-R1 distills: Qwen2.5 1.5B/7B/14B/32B, Llama 3.1 8B and Llama 3.3 70B; the 8b tag
    # (and latest) moved from the Llama 3.1 8B distill to DeepSeek-R1-0528-Qwen3-8B: both bases
    "deepseek-r1": {"1.5b": "alibaba+deepseek", "7b": "alibaba+deepseek", "14b": "alibaba+deepseek",
                    "32b": "alibaba+deepseek", "8b": "alibaba+deepseek+meta", "latest": "alibaba+deepseek+meta",
                    "70b": "deepseek+meta", "671b": "deepseek"},
    # Llama-3.1-Nemotron-70B-Instruct
    "nemotron": {"70b": "meta+nvidia", "latest": "meta+nvidia"},
}
OLLAMA_PROVIDERS = ("ollama", "ollama_chat")

#: Hub organisation (the path component just before a model name) -> vendor: the trainer, added to
#: a base the name states (never a family on its own).
ORGANISATIONS: dict[str, str] = {
    "google": "google", "meta-llama": "meta", "facebook": "meta", "qwen": "alibaba",
    "mistralai": "mistral", "deepseek-ai": "deepseek", "microsoft": "microsoft", "nvidia": "nvidia",
    "01-ai": "01-ai", "internlm": "shanghai-ai-lab", "skywork": "skywork", "cohereforai": "cohere",
    "coherelabs": "cohere", "xai-org": "xai", "tiiuae": "tii", "thudm": "zhipu", "zai-org": "zhipu",
    "allenai": "allenai", "ibm-granite": "ibm", "baichuan-inc": "baichuan", "moonshotai": "moonshot",
    "ai21labs": "ai21", "stabilityai": "stability", "databricks": "databricks", "mosaicml": "databricks",
    "nousresearch": "nous", "wizardlmteam": "microsoft", "minimaxai": "minimax", "baidu": "baidu",
    "tencent": "tencent", "snowflake": "snowflake", "prometheus-eval": "kaist", "kaist-ai": "kaist",
    "flowaicom": "flowai", "berkeley-nest": "berkeley", "nexusflow": "nexusflow", "openbmb": "openbmb",
    "huggingfaceh4": "huggingface", "lmsys": "lmsys", "nomic-ai": "nomic", "eleutherai": "eleutherai",
    "openlm-research": "openlm",
}

_VERSION = r"(?:\d+(?:p\d+)?[a-z]?\d*)?"


def _token_patterns(table: dict[str, tuple[str, ...]]) -> dict[str, re.Pattern[str]]:
    return {vendor: re.compile(r"(?:%s)%s" % ("|".join(pats), _VERSION)) for vendor, pats in table.items()}


_TOKEN = _token_patterns(MODEL_TOKENS)
_LEADING = _token_patterns(LEADING_TOKENS)
_TRAINER = _token_patterns(TRAINER_TOKENS)
_LINES = [(re.compile(rf"(?<![a-z0-9])(?:{pat})(?![a-z0-9])"), fam.split("+")) for pat, fam in LINES]
_VENDORS = (set(MODEL_TOKENS) | set(TRAINER_TOKENS) | set(ORGANISATIONS.values())
            | {v for _, fam in LINES for v in fam.split("+")})
_UNKNOWN_WORDS = {"", "unknown", "none", "null", "?"}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]


def family_of(model: str | None) -> str | None:
    """The family of a model name from the tables (``None`` when they do not know its base).

    ``family_of("openrouter/openai/o3-mini") == "openai"``; ``family_of("google/gemma-2-9b-it") ==
    "google"``; ``family_of("microsoft/Orca-2-13b") == "meta+microsoft"``; ``family_of("openai/my-finetune")``
    and ``family_of("microsoft/rho-math-7b")`` are ``None`` (a transport or a hub says nothing of the base)."""
    if not model:
        return None
    parts = [p for p in str(model).strip().split("/") if p]
    if not parts:
        return None
    tagged = _ollama_family(parts)
    if tagged is not _NOT_OLLAMA:
        return tagged
    name = "-".join(_tokens(parts[-1]))
    base: set[str] = set()
    for rx, fam in _LINES:
        if rx.search(name):
            base.update(fam)
            name = rx.sub("-", name)
    toks = _tokens(name)
    base |= {vendor for tok in toks for vendor, rx in _TOKEN.items() if rx.fullmatch(tok)}
    if toks and parts[-1].lower().startswith(toks[0]):
        base |= {vendor for vendor, rx in _LEADING.items() if rx.fullmatch(toks[0])}
    if not base:
        return None
    base |= {vendor for tok in toks for vendor, rx in _TRAINER.items() if rx.fullmatch(tok)}
    if len(parts) > 1 and parts[-2].lower() in ORGANISATIONS:
        base.add(ORGANISATIONS[parts[-2].lower()])
    return "+".join(sorted(base))


_NOT_OLLAMA = object()
_SIZE = re.compile(r"\d+(?:\.\d+)?[bm]")


def _ollama_family(parts: list[str]) -> str | None | object:
    """The family of an ``OLLAMA_TAGS`` name (``deepseek-r1:7b``, ``ollama/deepseek-r1``), or
    ``_NOT_OLLAMA`` for any other model."""
    name, colon, tag = parts[-1].lower().partition(":")
    if name not in OLLAMA_TAGS or not (colon or (len(parts) > 1 and parts[-2].lower() in OLLAMA_PROVIDERS)):
        return _NOT_OLLAMA
    size, _, rest = (tag or "latest").partition("-")
    if rest:
        # a tag that names its base is read as a name (``8b-llama-distill-q4_K_M``, ``8b-0528-qwen3``)
        named = family_of(f"{name}-{rest}")
        if named is not None and vendors(named) - (vendors(family_of(name)) or frozenset()):
            return named
    if not _SIZE.fullmatch(size) and size != "latest":
        return None
    return OLLAMA_TAGS[name].get(size)


def parse_family(value: str | None) -> str | None:
    """A family given by a user (``family=``, ``--generator-family``, a replay ``family`` column) in
    canonical form: each ``+``-separated part is lower-cased, a part the table knows as a model line
    maps to its vendor (``gpt`` -> ``openai``, ``gemma`` -> ``google``), any other part is kept as a
    vendor name of its own; empty or ``unknown`` is ``None``."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in _UNKNOWN_WORDS:
        return None
    if text == REFERENCE:
        return REFERENCE
    out: set[str] = set()
    for part in (p.strip() for p in text.split("+")):
        if part in _UNKNOWN_WORDS:
            return None
        if part in _VENDORS:
            out.add(part)
        else:
            trainer = [vendor for vendor, rx in _TRAINER.items() if rx.fullmatch(part)]
            out.update(trainer or (family_of(part) or part).split("+"))
    return "+".join(sorted(out))


def resolve(model: str | None, override: str | None = None, *, local: bool = False) -> str | None:
    """The user's ``family=`` when given, else the table's family of ``model`` (with ``local``, of
    the model folder on disk when ``model`` is one: ``local_family``)."""
    if override is not None and str(override).strip():
        return parse_family(override)
    if local and model and Path(model).is_dir():
        return local_family(model)
    return family_of(model)


#: ``model_type`` values of architectures that many vendors pretrain their own weights in (Yi 1,
#: DeepSeek LLM, SOLAR, TinyLlama and OpenLLaMA are ``llama``): they say nothing of the base.
GENERIC_ARCHITECTURES = frozenset({"llama", "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "bert",
                                   "roberta", "t5"})
_HEAD = re.compile(r"(?:For(?:CausalLM|SequenceClassification|TokenClassification|ConditionalGeneration|"
                   r"QuestionAnswering)|Model|LMHeadModel)$")


def _front_matter(readme: Path) -> dict[str, Any]:
    """The YAML front matter of a model card (``---`` … ``---`` at its top), or ``{}``."""
    from judgeaudit.yamlfile import load_yaml

    text = readme.read_text(encoding="utf-8", errors="replace")
    m = re.match(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", text, flags=re.S)
    if not m:
        return {}
    data = load_yaml(m.group(1), readme)[1]
    return data if isinstance(data, dict) else {}


def local_family(folder: str | Path) -> str | None:
    """The family of a model folder on disk (``hf:./my-model``): the vendors that the folder's name,
    its model card's ``base_model`` (README.md front matter) and its ``config.json``'s
    ``_name_or_path`` establish (each read with ``family_of``), else the vendor of its architecture
    (``model_type``, or the first of ``architectures``; not one of ``GENERIC_ARCHITECTURES``).

    A card that names a base the table does not know makes the model unknown (that base may carry any
    vendor's weights, whatever the architecture); nothing established is unknown (``None``)."""
    import json

    root = Path(folder)
    found: set[str] = set(vendors(family_of(str(folder).rstrip("/\\"))) or ())
    readme, config = root / "README.md", root / "config.json"
    card = _front_matter(readme) if readme.is_file() else {}
    bases = card.get("base_model")
    for base in [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []:
        fam = vendors(family_of(str(base)))
        if fam is None:
            return None
        found |= fam
    cfg: dict[str, Any] = {}
    if config.is_file():
        try:
            loaded = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(f"unreadable config.json ({e})", path=config) from None
        cfg = loaded if isinstance(loaded, dict) else {}
    if isinstance(cfg.get("_name_or_path"), str):
        found |= vendors(family_of(cfg["_name_or_path"])) or set()
    if not found:
        archs = cfg.get("architectures")
        kind = cfg.get("model_type") or (_HEAD.sub("", archs[0]) if isinstance(archs, list) and archs
                                         and isinstance(archs[0], str) else None)
        if isinstance(kind, str) and kind.lower() not in GENERIC_ARCHITECTURES:
            found |= vendors(family_of(kind.lower().replace("_", "-"))) or set()
    return "+".join(sorted(found)) if found else None


def split_spec_family(argument: str) -> tuple[str, str | None]:
    """Split a ``?family=`` option off a judge spec's argument (``openai/my-ft?family=openai`` ->
    ``("openai/my-ft", "openai")``). Raises ``InputError`` for any other ``?`` option."""
    name, opts = split(argument, field="judge")
    family = opts.pop("family", None)
    if opts:
        raise InputError(f"unknown judge spec option(s) {join('', opts)[1:]!r}; only ?family=<vendor> is read "
                         "here", field="judge")
    return name, family


def vendors(family: str | None) -> frozenset[str] | None:
    """The vendor set of a family: ``None`` when unknown, empty for ``REFERENCE``."""
    if family is None or (isinstance(family, float) and family != family):
        return None
    text = str(family).strip().lower()
    if text in _UNKNOWN_WORDS:
        return None
    if text == REFERENCE:
        return frozenset()
    return frozenset(p for p in text.split("+") if p)


def combine(families: Iterable[str | None]) -> str | None:
    """The family of an ensemble: the union of its members' vendors; unknown when any member is
    unknown; ``REFERENCE`` when every member is a reference instrument."""
    out: set[str] = set()
    for f in families:
        v = vendors(f)
        if v is None:
            return None
        out |= v
    return "+".join(sorted(out)) if out else REFERENCE


def shared(a: str | None, b: str | None) -> frozenset[str] | None:
    """Vendors two families share (empty: disjoint); ``None`` when either is unknown, i.e. the
    disjointness rule cannot be decided."""
    va, vb = vendors(a), vendors(b)
    if va is None or vb is None:
        return None
    return va & vb


def same_family(a: str | None, b: str | None) -> bool:
    """Whether two judges form a within-family pair: both model families known and equal (unknown
    and reference instruments are never in such a pair)."""
    va, vb = vendors(a), vendors(b)
    return bool(va) and va == vb


def model_key(model: str | None) -> str | None:
    """A model's identity for "same model" tests: its lower-cased name without path prefixes
    (``openai/gpt-4o`` and ``openrouter/openai/gpt-4o`` are one model)."""
    if model is None or (isinstance(model, float) and model != model):
        return None
    parts = [p for p in str(model).strip().lower().split("/") if p]
    return parts[-1] if parts else None


def unknown_family_message(role: str, judge: str | None = None) -> str:
    """The refusal text of a disjointness rule that meets an unknown family."""
    who = f"{role} {judge!r}" if judge else role
    return (f"the model family of the {who} is unknown to the family table; give it with family=<vendor> "
            "(e.g. api:openai/my-model?family=openai, or family: openai in YAML)")


class _Spec(Protocol):
    family: str | None


class _Specified(Protocol):
    """What ``judge_family`` reads of a judge (``judges.base.Judge`` has it): its spec's family."""

    spec: _Spec


def judge_family(judge: _Specified) -> str | None:
    """A judge's family (its spec's; the backends set it from the table or the user's ``family=``)."""
    return judge.spec.family

"""Model families: one maintained table from model names to vendor families, and the rules that
compare them (generator/verifier/audited judges, C8 evaluator vs. judges, CAP within-family L1).

A family is a string naming one vendor (``"openai"``) or several joined by ``+`` in sorted order
(``"google+skywork"``: an ensemble, or a fine-tune whose name names its base model and its
trainer), ``None`` when unknown, or ``REFERENCE`` for an instrument that is not a model.

Rules:

* The family comes only from the table below (never from the shape of a name), matched on the
  tokens of the model name after dropping every path prefix (LiteLLM providers such as
  ``openai/`` or ``openrouter/``, hub organisations such as ``google/``), plus the hub
  organisation just before the name (``ORGANISATIONS``; provider prefixes are not in it, because
  ``openai/<model>`` is any OpenAI-compatible server). A user's ``family=`` replaces the table.
* A fine-tuned model belongs to every vendor its name names: the base model's (shared pretraining
  is what the disjointness rules guard against) and its trainer's when the table lists the
  trainer (``Skywork-Reward-Gemma-2-27B`` -> ``google+skywork``; ``GRM-Gemma-2B`` -> ``google``).
* Unknown (``None``) is never equal to anything: it is never half of a within-family pair, and a
  disjointness rule involving it cannot be decided (callers refuse and ask for ``family=``).
* Two families are disjoint when their vendor sets do not intersect; an ensemble with an unknown
  member is unknown. ``REFERENCE`` has no vendors: disjoint from everything, and never in a
  family comparison such as the CAP L1 table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from judgeaudit.errors import InputError

if TYPE_CHECKING:
    from judgeaudit.judges.base import Judge

#: The family value of a reference instrument (``reference:*``): not a model, no vendor.
REFERENCE = "reference"

#: Vendor -> tokens of model names that carry its weights or its training. A pattern matches one
#: whole token of the lower-cased name (tokens are split at every non-alphanumeric character),
#: optionally followed by a version (``gpt4o``, ``llama3``, ``qwen2``, ``palm2``).
MODEL_TOKENS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt", "chatgpt", "o[1-9]", "davinci", "babbage", "curie"),
    "anthropic": ("claude",),
    "google": ("gemini", "gemma", "codegemma", "recurrentgemma", "palm", "bison", "bard"),
    "meta": ("llama", "codellama"),
    "mistral": ("mistral", "mixtral", "codestral", "ministral", "mathstral", "pixtral", "magistral",
                "devstral"),
    "alibaba": ("qwen", "qwq", "codeqwen"),
    "deepseek": ("deepseek",),
    "microsoft": ("phi",),
    "cohere": ("command", "c4ai", "aya"),
    "xai": ("grok",),
    "nvidia": ("nemotron",),
    "01-ai": ("yi",),
    "shanghai-ai-lab": ("internlm", "internvl"),
    "skywork": ("skywork",),
    "tii": ("falcon",),
    "zhipu": ("glm", "chatglm"),
    "allenai": ("olmo", "tulu"),
    "ibm": ("granite",),
    "baichuan": ("baichuan",),
    "moonshot": ("kimi", "moonshot"),
    "ai21": ("jamba", "jurassic"),
    "stability": ("stablelm",),
    "databricks": ("dbrx",),
}

#: Hub organisation (the path component just before a model name) -> vendor.
ORGANISATIONS: dict[str, str] = {
    "google": "google", "meta-llama": "meta", "facebook": "meta", "qwen": "alibaba",
    "mistralai": "mistral", "deepseek-ai": "deepseek", "microsoft": "microsoft", "nvidia": "nvidia",
    "01-ai": "01-ai", "internlm": "shanghai-ai-lab", "skywork": "skywork", "cohereforai": "cohere",
    "coherelabs": "cohere", "xai-org": "xai", "tiiuae": "tii", "thudm": "zhipu", "zai-org": "zhipu",
    "allenai": "allenai", "ibm-granite": "ibm", "baichuan-inc": "baichuan", "moonshotai": "moonshot",
    "ai21labs": "ai21", "stabilityai": "stability", "databricks": "databricks",
}

_TOKEN = {vendor: re.compile(r"(?:%s)(?:\d+[a-z]*)?" % "|".join(pats)) for vendor, pats in MODEL_TOKENS.items()}
_UNKNOWN_WORDS = {"", "unknown", "none", "null", "?"}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]


def family_of(model: str | None) -> str | None:
    """The family of a model name from the table (``None`` when the table does not know it).

    ``family_of("openrouter/openai/o3-mini") == "openai"``; ``family_of("google/gemma-2-9b-it") ==
    "google"``; ``family_of("openai/my-finetune") is None`` (``openai/`` is only a transport)."""
    if not model:
        return None
    parts = [p for p in str(model).strip().split("/") if p]
    if not parts:
        return None
    found = {vendor for tok in _tokens(parts[-1]) for vendor, rx in _TOKEN.items() if rx.fullmatch(tok)}
    if len(parts) > 1 and parts[-2].lower() in ORGANISATIONS:
        found.add(ORGANISATIONS[parts[-2].lower()])
    return "+".join(sorted(found)) if found else None


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
        if part in MODEL_TOKENS or part in ORGANISATIONS.values():
            out.add(part)
        else:
            out.update((family_of(part) or part).split("+"))
    return "+".join(sorted(out))


def resolve(model: str | None, override: str | None = None) -> str | None:
    """The user's ``family=`` when given, else the table's family of ``model``."""
    return parse_family(override) if override is not None and str(override).strip() else family_of(model)


def split_spec_family(argument: str) -> tuple[str, str | None]:
    """Split a ``?family=`` option off a judge spec's argument (``openai/my-ft?family=openai`` ->
    ``("openai/my-ft", "openai")``). Raises ``InputError`` for any other ``?`` option."""
    if "?" not in argument:
        return argument, None
    name, _, query = argument.partition("?")
    opts = dict(parse_qsl(query, keep_blank_values=True))
    family = opts.pop("family", None)
    if opts:
        raise InputError(f"unknown judge spec option(s) {urlencode(opts)!r}; only ?family=<vendor> is read "
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


def judge_family(judge: Judge) -> str | None:
    """A judge's family (its spec's; the backends set it from the table or the user's ``family=``)."""
    return judge.spec.family

"""An experiment as one YAML file: ``judgeaudit run experiment.yaml``.

    analysis: validity            # the analysis to run
    out: out/validity
    probes: bundled               # or a probe JSONL path
    judges:
      - local
      - reference:constant
      - spec: api:openai/gpt-4o-mini
        family: openai
        temperature: 0
        api_base: http://127.0.0.1:8000/v1
    s_floor: 0.90
    bar: 0.75
    bootstrap: 2000
    allow_failures: false         # true: exit 0 even when a judge produced no usable verdict
    template: judgeaudit-geval    # every key of `judgeaudit validity run` (analyses.validity.options):
    ledger: ledger.yaml           #   template, ledger, strict_register, regrade, seed, store, concurrency, …

``analysis: cap`` takes every key of ``judgeaudit cap run`` (``analyses.cap.options``: ``sets``, ``published``,
``judges``, ``evaluator``, ``bootstrap``, ``failures``, ``template``, ``ledger``, …), generated as validity's are.

``analysis: world``, ``loop``, ``card`` and ``migrate`` take the options of ``judgeaudit world run``, ``loop run``,
``card`` and ``migrate`` under their option names (``set``, ``judges``, ``arms``, ``votes``, …; ``task``, ``data``,
``responder``, ``regulators``, …; ``judge``, ``from``, ``run_missing``, …; ``old``, ``new``, ``items``, ``labels``,
``margins`` as a mapping, ``regrade``, ``from`` or ``old_card``/``new_card``, …), and every analysis takes the call
options ``timeout``, ``retries``, ``rpm`` and ``api_base`` but ``vp``, which calls no judge.
``analysis: loop`` takes every key of ``judgeaudit loop run`` (``loop.options``: ``template``, ``nli``,
``temperature``, …); ``analysis: vp`` every key of ``judgeaudit vp audit`` (``analyses.validation_power.options``:
``sets`` as a list of data-set specs, their paths relative to the file, ``mode``, ``permutations``, ``ceilings``,
``ledger``, …).

``validity``, ``world`` and ``loop`` experiments also take the keys of their commands' ``--batch``,
``--batch-out``, ``--mlflow`` and ``--mlflow-experiment`` flags, with the same effect::

    batch: openai                 # or anthropic: write the provider's batch request file for every api: judge
    batch_out: batch.jsonl        #   call not yet in the store and make no call (default batch-openai.jsonl)
    mlflow: sqlite:///mlflow.db   # log the finished run's numbers, intervals and report files to MLflow
    mlflow_experiment: audit      #   (default experiment: judgeaudit)

``batch_out`` is relative to the experiment file, as ``out`` is; the MLflow URI is passed as it is written.
``judgeaudit run`` takes the same flags, which replace the file's keys.

A ``python:`` judge (the user's own code, alone or inside ``vote:``/``ensemble:``) named by the file is refused,
naming its line, unless the command line says ``--allow-code``: a file is data, and the consent to run its
code cannot be in it.

Validation errors name the file, the line and the field: the same rules as the command line
(``validate.OPTION_RULES``), an input file that is missing, and an error the run raises about one of its
options (``--votes`` is the file's ``votes``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, create_model,
                      field_validator)

from judgeaudit import options as opts
from judgeaudit.analyses.cap.options import OPTIONS as CAP_OPTIONS
from judgeaudit.analyses.cap.options import WRITES as CAP_WRITES
from judgeaudit.analyses.validation_power.options import OPTIONS as VP_OPTIONS
from judgeaudit.analyses.validation_power.options import WRITES as VP_WRITES
from judgeaudit.analyses.validity.options import OPTIONS as VALIDITY_OPTIONS
from judgeaudit.analyses.validity.options import WRITES as VALIDITY_WRITES
from judgeaudit.analyses.world.options import OPTIONS as WORLD_OPTIONS
from judgeaudit.loop.options import OPTIONS as LOOP_OPTIONS

from judgeaudit.consent import check_file_spec
from judgeaudit.errors import InputError
from judgeaudit.yamlfile import line_of, load_yaml
from judgeaudit.io import read_text
from judgeaudit.options import Option, Options, Rule
from judgeaudit.validate import OPTION_RULES, output_dir, set_inputs, spec_inputs


class JudgeEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    spec: str


class _Root(BaseModel):
    """What every experiment model has: its validation (the declared rules, else ``validate.OPTION_RULES``) and
    where it was read from; its fields come from the options' declarations (``file_fields``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    _rules: ClassVar[dict[str, Rule]] = {}
    _node: Any = PrivateAttr(default=None)
    _path: Path | None = PrivateAttr(default=None)

    @field_validator("*")
    @classmethod
    def _option_rules(cls, v: Any, info: ValidationInfo) -> Any:
        """The same rules as the command line's options (the declaration's, else ``validate.OPTION_RULES``)."""
        rule = cls._rules.get(info.field_name) or OPTION_RULES.get(info.field_name)
        if rule is not None and (msg := rule.problem(v)) is not None:
            raise ValueError(msg)
        return v

    @field_validator("judges", check_fields=False)
    @classmethod
    def _specs(cls, v: list[str | JudgeEntry]) -> list[str | JudgeEntry]:
        for j in v:
            if isinstance(j, str) and not j.strip():
                raise ValueError("a judge spec is empty")
        return v


_FILE_TYPES: dict[str, tuple[Any, Any]] = {"judges": (list[str | JudgeEntry], Field(min_length=1))}
"""Keys whose file type is richer than their command-line type: a judge entry may be a mapping of options."""


def file_fields(*options: Option) -> dict[str, Any]:
    """The pydantic fields of declared options (``pydantic.create_model``'s keyword form), by file key."""
    out: dict[str, Any] = {}
    for o in options:
        if o.name in _FILE_TYPES:
            typ, info = _FILE_TYPES[o.name]
            if not o.required:   # an optional list (a CAP run's live judges): absent, or not empty
                typ, info = Annotated[typ, info] | None, Field(o.default)
        else:
            typ, info = (o.file_type or o.type), Field(... if o.required else o.default)
        out[o.name] = (typ, info)
    return out


def file_model(name: str, analysis: str, options: Options, base: type[BaseModel]) -> type[BaseModel]:
    """The experiment model of ``analysis: <analysis>`` generated from its declared options (those an
    experiment file takes), their rules checked as the command line checks them."""
    model = create_model(name, __base__=base, __module__=__name__, analysis=(Literal[analysis], ...),
                         **file_fields(*options.in_file()))
    model._rules = {**base._rules, **options.rules()}
    return model


_Experiment = create_model("_Experiment", __base__=_Root, __module__=__name__,
                           **file_fields(opts.OUT, opts.API_BASE, opts.TIMEOUT, opts.RETRIES, opts.RPM,
                                         opts.ALLOW_FAILURES))
"""What every experiment file has: where it writes, the call options, the failure exit."""
_RunExperiment = create_model("_RunExperiment", __base__=_Experiment, __module__=__name__,
                              **file_fields(opts.STORE, opts.CONCURRENCY, opts.SEED))
"""An experiment whose command keeps a call store, bounds its concurrency and takes a seed."""
_CallingExperiment = create_model("_CallingExperiment", __base__=_RunExperiment, __module__=__name__,
                                  **file_fields(opts.BATCH, opts.BATCH_OUT, opts.MLFLOW, opts.MLFLOW_EXPERIMENT))
"""An experiment whose command calls judges and takes ``--batch``/``--mlflow``: the same keys here."""


ValidityExperiment = file_model("ValidityExperiment", "validity", VALIDITY_OPTIONS, _CallingExperiment)
"""``analysis: validity``: every option of ``judgeaudit validity run`` (``analyses.validity.options``) but the
run's own flags ``judgeaudit run`` takes (``--backend``, ``--ray-address``)."""

CapExperiment = file_model("CapExperiment", "cap", CAP_OPTIONS, _CallingExperiment)
"""``analysis: cap``: every option of ``judgeaudit cap run`` (``analyses.cap.options``) but the run's own flags
``judgeaudit run`` takes (``--backend``, ``--ray-address``)."""


WorldExperiment = file_model("WorldExperiment", "world", WORLD_OPTIONS, _CallingExperiment)
"""``analysis: world``: every option of ``judgeaudit world run`` (``analyses.world.options``) but the run's own
flags ``judgeaudit run`` takes."""


LoopExperiment = file_model("LoopExperiment", "loop", LOOP_OPTIONS, _CallingExperiment)
"""``analysis: loop``: every option of ``judgeaudit loop run`` (``loop.options``) but ``--backend`` and
``--ray-address``, which ``judgeaudit run`` takes."""


class CardExperiment(_Experiment):  # type: ignore[misc,valid-type]
    analysis: Literal["card"]
    judge: str
    from_: list[Path] = Field(default_factory=list, alias="from")
    ledger: Path | None = None
    run_missing: bool = False
    yes: bool = False
    bootstrap: int = 2000


class MigrateExperiment(_RunExperiment):  # type: ignore[misc,valid-type]
    analysis: Literal["migrate"]
    old: str
    new: str
    items: Path
    form: Literal["graded", "pairwise"] = "graded"
    labels: Path | None = None
    threshold: float | None = None
    margins: dict[str, float] = Field(default_factory=dict)
    regrade: int = 0
    link_method: Literal["equipercentile", "isotonic"] = "equipercentile"
    from_: list[Path] = Field(default_factory=list, alias="from")
    old_card: Path | None = None
    new_card: Path | None = None
    audit_margin: float | None = None
    bootstrap: int = 2000


VpExperiment = file_model("VpExperiment", "vp", VP_OPTIONS, _Root)
"""``analysis: vp``: every option of ``judgeaudit vp audit`` (``analyses.validation_power.options``) but
``--backend`` and ``--ray-address``, which ``judgeaudit run`` takes; it calls no judge (no call options)."""


EXPERIMENTS: dict[str, type[_Experiment]] = {"validity": ValidityExperiment, "world": WorldExperiment,
                                             "loop": LoopExperiment, "card": CardExperiment,
                                             "migrate": MigrateExperiment, "cap": CapExperiment, "vp": VpExperiment}
"""The analyses an experiment file can run, by its ``analysis:``."""

def _inputs(exp: _Experiment) -> list[tuple[tuple[Any, ...], Path]]:
    """(YAML location, path) of every input file or folder the experiment names, which must exist."""
    out: list[tuple[tuple[Any, ...], Path]] = []
    if isinstance(exp, ValidityExperiment) and exp.probes != "bundled":
        out.append((("probes",), Path(exp.probes)))
    if isinstance(exp, WorldExperiment):
        out += [(("set",), p) for p in set_inputs([exp.set])]
    if isinstance(exp, LoopExperiment):
        out.append((("data",), exp.data))
    if isinstance(exp, CapExperiment):
        out += [(("sets", i), p) for i, s in enumerate(exp.sets) for p in set_inputs([s])]
        out += [(("human",), exp.human)] if exp.human is not None else []
    if isinstance(exp, VpExperiment):
        out += [(("sets", i), p) for i, spec in enumerate(exp.sets) for p in set_inputs([spec])]
    if isinstance(exp, CardExperiment | MigrateExperiment):
        out += [(("from", i), f) for i, f in enumerate(exp.from_)]
    if isinstance(exp, CardExperiment):
        out += [(("ledger",), exp.ledger)] if exp.ledger is not None else []
    if isinstance(exp, MigrateExperiment):
        out.append((("items",), exp.items))
        out += [(("labels",), exp.labels)] if exp.labels is not None else []
        out += [((k,), getattr(exp, k)) for k in ("old_card", "new_card") if getattr(exp, k) is not None]
    return out


_WRITES = {"validity": VALIDITY_WRITES, "world": (), "loop": (), "card": (),
           "migrate": ("result.json", "link.json", "verdicts.parquet", "report.html"), "cap": CAP_WRITES,
           "vp": VP_WRITES}


def _relative(base: Path, v: Any) -> Any:
    if isinstance(v, Path):
        return v if v.is_absolute() else base / v
    if isinstance(v, list):
        return [_relative(base, x) for x in v]
    return v


def _relative_spec(base: Path, spec: str) -> str:
    """A data-set spec ``NAME:PATH?…`` with its path relative to the experiment file."""
    if ":" not in spec:
        return spec
    name, rest = spec.split(":", 1)
    where, sep, query = rest.partition("?")
    return f"{name}:{_relative(base, Path(where))}{sep}{query}"


def load_experiment(path: str | Path) -> _Experiment:
    p = Path(path)
    text = read_text(p)
    node, data = load_yaml(text, p)
    if not isinstance(data, dict):
        raise InputError("an experiment file is a YAML mapping", path=p, line=1)
    kind = data.get("analysis")
    if kind not in EXPERIMENTS:
        raise InputError(f"unknown analysis {kind!r}: experiment files run {', '.join(EXPERIMENTS)}",
                         path=p, line=line_of(node, ("analysis",)), field="analysis")
    try:
        exp = EXPERIMENTS[kind].model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = tuple(x for x in first["loc"] if not (isinstance(x, str) and x in ("str", "JudgeEntry")))
        msg = ("required field is missing" if first["type"] == "missing"
               else f"a {kind} experiment takes no {loc[0]!r}: its command has no such option"
               if first["type"] == "extra_forbidden" and len(loc) == 1
               else first["msg"].removeprefix("Value error, "))
        raise InputError(msg, path=p, line=line_of(node, loc), field=".".join(map(str, loc))) from None
    _check_code(exp, node, p)
    base = p.parent
    update = {name: _relative(base, getattr(exp, name))
              for name in ("out", "store", "data", "ledger", "from_", "batch_out", "items", "labels", "old_card",
                           "new_card", "human")
              if hasattr(exp, name)}
    if isinstance(exp, ValidityExperiment) and exp.probes != "bundled" and not Path(exp.probes).is_absolute():
        update["probes"] = str(base / exp.probes)
    if getattr(exp, "template", None) is not None:
        update["template"] = _template_path(exp.template, base, node, p)
    if isinstance(exp, WorldExperiment) and ":" in exp.set:
        update["set"] = _relative_spec(base, exp.set)
    if isinstance(exp, CapExperiment | VpExperiment):
        update["sets"] = [_relative_spec(base, spec) for spec in exp.sets]
    exp = exp.model_copy(update=update)
    _resolve_templates(exp, base, node, p)
    for loc, f in _inputs(exp):
        if not f.exists():
            raise InputError(f"{f}: not found", path=p, line=line_of(node, loc), field=str(loc[0]))
    try:
        output_dir(exp.out, writes=_WRITES[kind], inputs=[p, getattr(exp, "store", None),
                                                          *spec_inputs(judge_specs(exp))], kind=kind, quiet=True)
    except InputError as e:
        raise InputError(f"{e.path} {e.message}", path=p, line=line_of(node, ("out",)), field="out") from None
    exp._node, exp._path = node, p   # for errors the run raises (``yaml_error``)
    return exp


_SPEC_FIELDS = ("judge", "judge2", "responder", "rewriter", "old", "new", "evaluator", "generator", "matcher_judge",
                "second_matcher_judge")
"""The single judge-spec keys of an experiment (``judges`` is the list of them)."""


def _check_code(exp: _Experiment, node: yaml.Node, path: Path) -> None:
    """Refuse, naming the line, a judge spec of the file that runs Python code (``python:``, alone or in a
    composite) unless the command line consented (``judgeaudit.consent``): before anything is read or run."""
    found: list[tuple[tuple[Any, ...], str]] = []
    for i, j in enumerate(getattr(exp, "judges", None) or []):
        found.append((("judges", i), j) if isinstance(j, str) else (("judges", i, "spec"), j.spec))
    found += [((name,), getattr(exp, name)) for name in _SPEC_FIELDS if isinstance(getattr(exp, name, None), str)]
    for loc, spec in found:
        check_file_spec(spec, path=path, line=line_of(node, loc), field=".".join(map(str, loc)))


def _template_path(name: str, base: Path, node: yaml.Node, path: Path) -> str:
    """The experiment's ``template:`` (every api/local judge's): a built-in name, or a file relative to the
    experiment file, read and validated now."""
    from judgeaudit.judges.templates import get_template, library

    if name not in library():
        f = Path(name) if Path(name).is_absolute() else base / name
        if not f.is_file():
            raise InputError(f"{f}: not found (nor a built-in template)", path=path, line=line_of(node, ("template",)),
                             field="template")
        name = str(f)
    get_template(name)
    return name


def _resolve_templates(exp: _Experiment, base: Path, node: yaml.Node, path: Path) -> None:
    """A judge entry's ``template:`` (a built-in name, or a file relative to the experiment file), read
    and validated now: a bad template file fails with its own file and line before anything runs."""
    from judgeaudit.judges.templates import get_template, library

    for i, j in enumerate(getattr(exp, "judges", None) or []):
        name = getattr(j, "template", None) if isinstance(j, JudgeEntry) else None
        if name is None:
            continue
        if not isinstance(name, str):
            raise InputError("template is a built-in name or a file", path=path,
                             line=line_of(node, ("judges", i, "template")), field=f"judges.{i}.template")
        if name not in library():
            f = Path(name) if Path(name).is_absolute() else base / name
            if not f.is_file():
                raise InputError(f"{f}: not found (nor a built-in template)", path=path,
                                 line=line_of(node, ("judges", i, "template")), field=f"judges.{i}.template")
            j.template = str(f)   # type: ignore[attr-defined]
        get_template(j.template)   # type: ignore[attr-defined]


CALL_FLAGS = {"batch": "--batch", "batch_out": "--batch-out", "mlflow": "--mlflow",
              "mlflow_experiment": "--mlflow-experiment"}
"""The keys of a judge-calling experiment (``validity``, ``world``, ``loop``) that ``judgeaudit run`` also takes
as flags, by key: a flag given on the command line replaces the file's key."""


def command_options(exp: _Experiment, flags: dict[str, Any] | None = None, *, allow_failures: bool = False,
                    backend: str | None = None, ray_address: str | None = None) -> dict[str, Any]:
    """The options ``commands.common.command_calls`` puts around the experiment's run, by the command's parameter
    names: the file's call options and ``batch``/``mlflow`` keys, the command-line ``flags`` (``CALL_FLAGS``'
    keys; None: not given) over them. A flag the analysis's command does not take (``card``) is an
    ``InputError``."""
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if given and not isinstance(exp, _CallingExperiment):
        name = next(iter(given))
        raise InputError(f"a {getattr(exp, 'analysis', '')} experiment takes no {CALL_FLAGS[name]} (its command has "
                         "none; validity, world and loop experiments take it)", field=CALL_FLAGS[name])
    opts: dict[str, Any] = {"out": exp.out, "api_base": getattr(exp, "api_base", None),   # vp: no call options
                            "call_timeout": getattr(exp, "timeout", None), "call_retries": getattr(exp, "retries", None),
                            "call_rpm": getattr(exp, "rpm", None),
                            "allow_failures": allow_failures or getattr(exp, "allow_failures", False),
                            "backend": backend, "ray_address": ray_address}
    for key in CALL_FLAGS:
        opts[key] = given.get(key, getattr(exp, key, None))
    return opts


def yaml_error(exp: _Experiment, err: InputError, flags: dict[str, Any] | None = None) -> InputError:
    """An error the run raised about one of its options (``--max-items``), as the file's field and line;
    an error about a flag given on the command line (``flags``, as ``command_options`` takes them) or any other
    error (a data file's line) as it is."""
    if not (err.field or "").startswith("--") or err.path:
        return err
    if any(CALL_FLAGS.get(k) == err.field for k, v in (flags or {}).items() if v is not None):
        return err
    name = {"--set": "set", "--arm": "arms", "--judge": "judges" if hasattr(exp, "judges") else "judge",
            "--regulator": "regulators", "--from": "from"}.get(err.field, err.field[2:].replace("-", "_"))
    node, path = getattr(exp, "_node", None), getattr(exp, "_path", None)
    line = line_of(node, (name,)) if node is not None else None
    return InputError(err.message, path=path, line=line, field=name)


def judge_specs(exp: _Experiment) -> list[str | dict[str, Any]]:
    judges = getattr(exp, "judges", None) or []
    return [j if isinstance(j, str) else j.model_dump() for j in judges]

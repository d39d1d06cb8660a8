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

Validation errors name the file, the line and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from judgeaudit.errors import InputError
from judgeaudit.io import read_text
from judgeaudit.validate import option_problem, output_dir, spec_inputs


class JudgeEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    spec: str


class ValidityExperiment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    analysis: Literal["validity"]
    out: Path
    probes: str = "bundled"
    judges: list[str | JudgeEntry] = Field(min_length=1)
    s_floor: float = 0.90
    bar: float = 0.75
    bootstrap: int = 2000
    regrade: int = 48
    store: Path | None = None
    concurrency: int | None = None
    seed: int = 0
    allow_failures: bool = False

    @field_validator("s_floor", "bar", "bootstrap", "regrade", "concurrency")
    @classmethod
    def _option_rules(cls, v: Any, info: ValidationInfo) -> Any:
        """The same rules as the command line's options (``validate.OPTION_RULES``)."""
        msg = option_problem(info.field_name, v)
        if msg is not None:
            raise ValueError(msg)
        return v

    @field_validator("judges")
    @classmethod
    def _specs(cls, v: list[str | JudgeEntry]) -> list[str | JudgeEntry]:
        for j in v:
            if isinstance(j, str) and not j.strip():
                raise ValueError("a judge spec is empty")
        return v


def _line_of(node: yaml.Node, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (the deepest node found)."""
    line = node.start_mark.line + 1
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == key), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
        line = node.start_mark.line + 1
    return line


def load_experiment(path: str | Path) -> ValidityExperiment:
    p = Path(path)
    text = read_text(p)
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"malformed YAML ({getattr(e, 'problem', None) or e})", path=p,
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError("an experiment file is a YAML mapping", path=p, line=1)
    if data.get("analysis") != "validity":
        raise InputError(f"unknown analysis {data.get('analysis')!r}: experiment files run 'validity'; "
                         "use `judgeaudit vp audit` and `judgeaudit cap run` for the others",
                         path=p, line=_line_of(node, ("analysis",)), field="analysis")
    try:
        exp = ValidityExperiment.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = tuple(x for x in first["loc"] if not (isinstance(x, str) and x in ("str", "JudgeEntry")))
        msg = "required field is missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
        raise InputError(msg, path=p, line=_line_of(node, loc), field=".".join(map(str, loc))) from None
    base = p.parent
    exp = exp.model_copy(update={
        "out": exp.out if exp.out.is_absolute() else base / exp.out,
        "store": None if exp.store is None else (exp.store if exp.store.is_absolute() else base / exp.store),
        "probes": exp.probes if exp.probes == "bundled" or Path(exp.probes).is_absolute() else str(base / exp.probes),
    })
    try:
        output_dir(exp.out, writes=("result.json", "verdicts.parquet", "report.html"),
                   inputs=[p, None if exp.probes == "bundled" else exp.probes, exp.store,
                           *spec_inputs(judge_specs(exp))])
    except InputError as e:
        raise InputError(f"{e.path} {e.message}", path=p, line=_line_of(node, ("out",)), field="out") from None
    return exp


def judge_specs(exp: ValidityExperiment) -> list[str | dict[str, Any]]:
    return [j if isinstance(j, str) else j.model_dump() for j in exp.judges]

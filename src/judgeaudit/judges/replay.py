"""``replay:<path>`` — verdicts that already exist in a file, audited with zero calls.

The file is JSONL, CSV or Parquet with one row per verdict. Columns (``?col=name`` in the spec
renames one, e.g. ``replay:out.csv?request_id=id&score=grade&judge=gpt4``):

* ``request_id`` (or ``item_id``) — required; matched against the requests' ids;
* the verdict, at least one of: ``score`` (graded, or the world ``score`` form's 1–5), ``choice``
  (pairwise: ``A``, ``B`` or ``tie``), the world forms' ``label`` (true/false), ``unit_labels`` (a
  list of true/false, one per unit), ``defect_ids`` (a list of ids), ``defects`` (a list of
  ``{"span", "reason"}`` objects), or ``raw`` (the reply as the judge wrote it: a graded or pairwise row
  with neither ``score`` nor ``choice`` is read from it with the form's parser, as a live reply is, so a
  harness's raw outputs replay as they would have been parsed);
* optional: ``judge_id`` (several judges in one file: pick one with ``?judge=ID``; the CLI expands
  a file into one judge per id), ``epoch`` (default 0), ``rationale``, ``raw``, ``parse_ok``,
  ``error`` (a call that failed: its verdict has this error and no usable value), ``model``,
  ``family`` (else the family table's family of ``model`` or the judge id, see
  ``judgeaudit.families``; a ``family=`` option overrides both).
A request missing from the file gets a verdict with ``error='not in replay file'``, counted
like any failed call.

A world request (``world run``) reads its form's column through the world parser (the same schema
as a judge's reply: ``unit_labels`` must have one entry per unit, ``defect_ids`` only allowed ids,
``score`` a whole number 1–5); a row without that value reads ``raw`` with the world parser; a row
with neither is a parse failure, whatever its ``parse_ok`` says, so a file with no usable world
verdict fails the run. List cells in CSV are JSON text.

``replay:<format>:<file>`` reads a file of another tool through a registered replay format
(``register_format``): ``replay:inspect:<log>`` an Inspect AI eval log (``judgeaudit.interop.inspect``),
``replay:promptfoo:<results.json>`` a promptfoo eval's output (``judgeaudit.interop.promptfoo``). The modules
that define a format register it when imported (the command line imports them); a format from another package
registers through the ``judgeaudit.replay_formats`` entry point group.

``?template=NAME`` (or a command's ``--template``) reads the ``raw`` replies with that judge template's parser,
on its scale (a ``scale=`` given too must be the template's). An option the spec does not know (not a column,
``judge``, ``scale``, ``higher`` or ``template``) is an error naming it.

Scores lie on the judges' 1–9 scale, or on the scale the spec declares: ``?scale=1,10`` (whole
numbers; ``scale=pass_fail`` for 1/0), ``&higher=better`` (the default: a quality rating) or ``worse``
(a higher grade is more of the defect, as on the 1–9 scale); the validity analysis then reads the
frontier on that scale (``analyses.grade_scale``), and ``raw`` replies are parsed on it. An empty cell
is no score; an epoch is a whole number ≥ 0 (a
row without one is epoch 0). A score off the scale or not a number, an epoch that is text or blank,
and a (judge, request, epoch) given twice are errors naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.families import resolve
from judgeaudit.io import read_table
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.judges.elicit import SCALE, WORLD_TEMPLATE, ParseResult, is_world, parse_request, world_fields
from judgeaudit.judges.forms import family
from judgeaudit.judges.scale import Scale, declared_scale, parse_bounds
from judgeaudit.registry import Registry
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.specs import split

_COLUMNS = ("request_id", "score", "choice", "label", "unit_labels", "defect_ids", "defects", "judge_id", "epoch",
            "rationale", "raw", "parse_ok", "error", "model", "family")
#: the columns that hold a verdict (a file needs one)
_VALUES = ("score", "choice", "label", "unit_labels", "defect_ids", "defects", "raw")
#: world form -> the column of its verdict
_WORLD_COLUMN = {"label": "label", "sentences": "unit_labels", "typed": "defect_ids", "score": "score",
                 "defects": "defects"}
_LISTS = ("unit_labels", "defect_ids", "defects")


def parse_spec(argument: str) -> tuple[str, dict[str, str]]:
    return split(argument, field="judge")


def load_replay_table(path: str, mapping: dict[str, str] | None = None, scale: Scale | None = None) -> pd.DataFrame:
    """Read and normalise a replay file to the documented columns (InputError on bad input)."""
    return normalise_replay_table(read_table(path), path, mapping, scale)


def normalise_replay_table(df: pd.DataFrame, path: str, mapping: dict[str, str] | None = None,
                           scale: Scale | None = None) -> pd.DataFrame:
    """Check and normalise a table of verdicts read from ``path`` to the documented columns (scores on
    ``scale``, default the judges' 1–9); errors name the row by ``df.attrs["lines"]`` (InputError on bad
    input)."""
    mapping = dict(mapping or {})
    mapping.pop("judge", None)
    rename = {src: dst for dst, src in mapping.items() if dst in _COLUMNS}
    missing = [src for src in rename if src not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} named in the spec is not in the file", path=path, field=missing[0])
    df = df.rename(columns=rename)
    if "request_id" not in df.columns and "item_id" in df.columns:
        df = df.rename(columns={"item_id": "request_id"})
    if "request_id" not in df.columns:
        raise InputError("replay file needs a 'request_id' (or 'item_id') column", path=path, field="request_id")
    if not any(c in df.columns for c in _VALUES):
        raise InputError(f"replay file needs a verdict column: {', '.join(_VALUES)}", path=path, field="score")
    lines = df.attrs.get("lines") or list(range(1, len(df) + 1))

    def fail(row: int, msg: str, field: str) -> None:
        raise InputError(msg, path=path, line=lines[row], field=field)

    if "label" in df.columns:
        df["label"] = [_label(v, lambda v, row=row: fail(row, f"label must be true or false, got {v!r}", "label"))
                       for row, v in enumerate(df["label"])]
    for col in (c for c in _LISTS if c in df.columns):
        df[col] = [_json_list(v, lambda v, row=row, col=col: fail(row, f"{col} must be a JSON list, got {v!r}", col))
                   for row, v in enumerate(df[col])]

    if "choice" in df.columns:
        bad = ~df["choice"].isna() & ~df["choice"].isin(["A", "B", "tie"])
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            fail(row, f"choice must be A, B or tie, got {df['choice'].iloc[row]!r}", "choice")
    if "score" in df.columns:
        df["score"] = _numbers(df["score"], lambda row, v: fail(row, f"score must be a number, got {v!r}", "score"))
        lo, hi = (SCALE[0], SCALE[-1]) if scale is None else (scale.min, scale.max)
        out = df["score"].notna() & ~df["score"].between(lo, hi)
        if out.any():
            row = int(out.to_numpy().nonzero()[0][0])
            where = "the judges' 1–9 scale" if scale is None else f"the declared {scale.label()} scale"
            fail(row, f"score {float(df['score'].iloc[row])!r} is outside {where}", "score")
    ids = df["request_id"]
    bad = ids.map(lambda v: v is None or v != v or isinstance(v, bool) or (isinstance(v, str) and not v.strip()))
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        fail(row, f"request_id must be a non-empty string or a number, got {ids.iloc[row]!r}", "request_id")
    df["request_id"] = ids.astype(str)
    if "epoch" in df.columns:
        epochs = _numbers(df["epoch"], lambda row, v: fail(row, f"epoch must be a whole number ≥ 0, got {v!r}",
                                                           "epoch"), blank_text_is_missing=False)
        bad = (epochs < 0) | (epochs != epochs.round()) | (epochs.abs() == float("inf"))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            fail(row, f"epoch must be a whole number ≥ 0, got {df['epoch'].iloc[row]!r}", "epoch")
        df["epoch"] = epochs.fillna(0).astype(int)   # a row without an epoch is epoch 0
    else:
        df["epoch"] = 0
    key = df[[c for c in ("judge_id", "request_id", "epoch") if c in df.columns]].astype(str)
    dup = key.duplicated(keep="first")
    if dup.any():
        second = int(dup.to_numpy().nonzero()[0][0])
        first = int((key == key.iloc[second]).all(axis=1).to_numpy().nonzero()[0][0])
        fail(second, f"request {df['request_id'].iloc[second]!r} (epoch {df['epoch'].iloc[second]}) is given again; "
                     f"first on line {lines[first]}", "request_id")
    return df


def _numbers(col: pd.Series, fail: Any, *, blank_text_is_missing: bool = True) -> pd.Series:
    """A column as floats: a missing cell (None/NaN) stays NaN, and so does blank text when
    ``blank_text_is_missing``; any other value that is not a number calls ``fail(row, value)``."""
    def missing(v: Any) -> bool:
        return v is None or (isinstance(v, float) and v != v) or \
            (blank_text_is_missing and isinstance(v, str) and not v.strip())

    num = pd.to_numeric(col.map(lambda v: None if missing(v) or isinstance(v, str) and not v.strip() else v),
                        errors="coerce")
    bad = (num.isna() & ~col.map(missing)) | col.map(lambda v: isinstance(v, bool))
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        fail(row, col.iloc[row])
    return num.astype(float)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or v is pd.NA or v is pd.NaT


def _label(v: Any, fail: Any) -> bool | None:
    """A label cell as a bool (``true``/``false`` text as CSV writes it); None when missing."""
    if _missing(v) or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    fail(v)
    return None


def _json_list(v: Any, fail: Any) -> list | None:
    """A list cell as a list (JSON text as CSV writes it, a Parquet array); None when missing."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, list):
        return v
    if _missing(v) or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, str):
        try:
            out = json.loads(v)
        except json.JSONDecodeError:
            out = None
        if isinstance(out, list):
            return out
    fail(v)
    return None


def _judge_ids(df: pd.DataFrame) -> list[str]:
    return sorted(df["judge_id"].dropna().astype(str).unique()) if "judge_id" in df.columns else []




def _cell(row: dict[str, Any], column: str) -> Any:
    """A row's value, None where the column is absent or the cell is missing (None/NaN)."""
    value = row.get(column)
    return None if _missing(value) else value


def _world_reply(request: JudgeRequest, value: Any) -> str:
    """A world column's value as the reply a judge would have written for ``request``'s form, so that
    the world parser checks it (a defect's quote is its ``span`` or ``quote``)."""
    keys = family(WORLD_TEMPLATE).reply_keys or {}
    if request.form == "score" and isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps({keys[request.form]: value}, default=str)


class ReplayJudge(Judge):
    cacheable = False
    max_concurrency = 4096
    #: a template names the parser (and scale) the file's raw replies are read with
    takes_template = True

    def __init__(self, spec: JudgeSpec, table: pd.DataFrame, path: str, scale: Scale | None = None):
        super().__init__(spec)
        self.path = path
        self.declared = scale
        self._rows = {(r["request_id"], int(r["epoch"])): r for r in table.to_dict("records")}

    @property
    def scale(self) -> Scale | None:
        return self.declared

    def use_template(self, template: Any) -> None:
        """Read the file's raw replies with ``template``'s parser, on its scale: the file's scores are on the
        template's scale, so a scale the spec declared must be that one."""
        if template.scale is not None and self.declared is not None and template.scale != self.declared:
            raise InputError(f"the spec declares the {self.declared.label()} scale (a higher grade is "
                             f"{self.declared.higher}); template {template.name} grades on {template.scale.label()} "
                             f"({template.scale.higher}): give one scale", path=self.path, field="scale")
        if template.scale is not None and self.declared is None:
            outside = [r for r in self._rows.values() if (v := _cell(r, "score")) is not None
                       and not template.scale.min <= float(v) <= template.scale.max]
            if outside:
                raise InputError(f"score {float(outside[0]['score'])!r} is outside template {template.name}'s "
                                 f"{template.scale.label()} scale", path=self.path, field="score")
            self.declared = template.scale
            self.spec = self.spec.model_copy(update={"options": {**self.spec.options,
                                                                 "scale": template.scale.to_dict()}})
        self.template = template
        self.spec = self.spec.model_copy(update={"template": template.ref()})

    @property
    def provider(self) -> str:
        return "replay"

    def can_answer(self, request: JudgeRequest) -> bool:
        return request.epoch == 0 or (request.request_id, request.epoch) in self._rows

    def rows(self) -> list[dict[str, Any]]:
        """The file's rows of this judge, one per (request, epoch), in the documented columns."""
        return list(self._rows.values())

    def render(self, request: JudgeRequest) -> str:
        return f"{self.path}\x1f{request.request_id}"

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        row = self._rows.get((request.request_id, request.epoch))
        if row is None:
            return self.make_verdict(request, parse_ok=False, error="not in replay file", provider="replay")
        if is_world(request):
            return self._world_verdict(request, row)
        score = None if (v := _cell(row, "score")) is None else float(v)
        choice = None if (v := _cell(row, "choice")) is None else str(v)
        parse_ok = _cell(row, "parse_ok")
        rationale, raw, error = _cell(row, "rationale"), _cell(row, "raw"), _cell(row, "error")
        meta: dict[str, Any] = {}
        source = "replay" if score is not None else None
        if score is None and choice is None and raw is not None and error is None:
            # only the reply as the judge wrote it: read with the form's parser, as a live call is read
            if self.template is not None and self.template.form == request.form:
                parsed = self.template.parse(request, str(raw))
            else:
                parsed = parse_request(request, str(raw), self.declared)
            score, choice, source = parsed.score, parsed.choice, "parsed" if parsed.score is not None else None
            rationale = parsed.rationale if rationale is None else rationale
            parse_ok = parsed.ok if parse_ok is None else (bool(parse_ok) and parsed.ok)
            if not parsed.ok:
                meta["parse_error"] = parsed.error
        if parse_ok is None:
            parse_ok = score is not None if request.form == "graded" else choice is not None
        if error is not None:
            parse_ok = False
        return self.make_verdict(request, score=score, choice=choice, parse_ok=bool(parse_ok),
                             error=None if error is None else str(error), score_source=source,
                             rationale=None if rationale is None else str(rationale),
                             raw=None if raw is None else str(raw), provider="replay", meta=meta)

    def _world_verdict(self, request: JudgeRequest, row: dict[str, Any]) -> Verdict:
        """A world request's verdict: its form's column through the world parser, else ``raw``."""
        column = _WORLD_COLUMN[request.form]
        value, raw, error = _cell(row, column), _cell(row, "raw"), _cell(row, "error")
        if value is not None:
            parsed = parse_request(request, _world_reply(request, value))
        elif raw is not None:
            parsed = parse_request(request, str(raw))
        else:
            parsed = ParseResult(ok=False, error=f"no {column!r} value and no 'raw' reply for the world "
                                                 f"{request.form!r} form")
        ok = parsed.ok and error is None and _cell(row, "parse_ok") is not False
        fields = world_fields(request, parsed)
        if request.form == "score" and value is not None:
            fields["score_source"] = "replay" if parsed.ok else None
        rationale = _cell(row, "rationale")
        return self.make_verdict(request, parse_ok=ok, error=None if error is None else str(error),
                             defects=parsed.defects, rationale=None if rationale is None else str(rationale),
                             raw=None if raw is None else str(raw), provider="replay",
                             meta={} if parsed.ok else {"parse_error": parsed.error}, **fields)


def replay_judge(df: pd.DataFrame, path: str, wanted: str | None, spec_id: str, family: str | None,
                 scale: Scale | None = None) -> ReplayJudge:
    """The judge ``wanted`` of a normalised replay table (``normalise_replay_table``; the whole table when it
    has no judge_id column, or ``wanted`` is None), named ``spec_id``, its scores on ``scale`` (None: the judges'
    1–9), its family ``family`` or else the one the rows record or its model implies (``families.resolve``);
    ``InputError`` naming ``path`` when no row is the judge ``wanted``. Every replay format builds its judges
    with it (a plain file here, another tool's log in ``interop``)."""
    if wanted is not None and "judge_id" in df.columns:
        df = df[df["judge_id"].astype(str) == wanted]
        if df.empty:
            raise InputError(f"no rows for judge {wanted!r}", path=path, field="judge_id")
    model = str(df["model"].iloc[0]) if "model" in df.columns else wanted
    given = df["family"].dropna() if "family" in df.columns else ()
    family = resolve(model, family if family is not None else (given.iloc[0] if len(given) else None))
    options: dict[str, Any] = {"path": path, **({"scale": scale.to_dict()} if scale is not None else {})}
    return ReplayJudge(JudgeSpec(id=spec_id, backend="replay", model=model, family=family, options=options),
                       df, path, scale)


@dataclass(frozen=True)
class ReplayFormat:
    """A file format ``replay:<name>:<file>`` reads: ``judges(argument)`` every judge the file holds (the
    command line's expansion), ``judge(argument, options)`` the one ``make_judge`` builds; ``help`` one line."""

    name: str
    judges: Callable[[str], list[Judge]]
    judge: Callable[[str, dict[str, Any]], Judge]
    help: str


PLUGIN_GROUP = "judgeaudit.replay_formats"
"""The entry-point group of modules that register replay formats when imported (``judgeaudit.registry``)."""
FORMATS: Registry[ReplayFormat] = Registry("replay format", PLUGIN_GROUP)
"""The replay formats by name (judgeaudit's ``inspect`` and ``promptfoo`` are declared by the top package)."""


def parse_scale(text: str | None, path: str) -> tuple[float, float] | None:
    """A replay option ``scale=LO,HI`` (None when not given); ``InputError`` unless LO < HI."""
    if text is None:
        return None
    try:
        return parse_bounds(text)
    except ValueError as e:
        raise InputError(str(e), path=path, field="scale") from None


def replay_scale(mapping: dict[str, str], path: str) -> Scale | None:
    """The scale a plain replay file's scores are on: ``?scale=LO,HI`` (whole numbers; or ``scale=pass_fail``)
    with ``&higher=better`` (the default) or ``worse``; None (judgeaudit's 1–9) when not given."""
    text, higher = mapping.get("scale"), mapping.get("higher")
    if text is None:
        if higher is not None:
            raise InputError("higher= says which end of a declared scale is the defect; give scale=LO,HI too",
                             path=path, field="higher")
        return None
    if text != "pass_fail":
        parse_scale(text, path)
    try:
        return declared_scale(text, higher)
    except ValueError as e:
        raise InputError(str(e), path=path, field="higher" if "higher" in str(e) else "scale") from None


def register_format(name: str, *, judges: Callable[[str], list[Judge]],
                    judge: Callable[[str, dict[str, Any]], Judge], help: str) -> None:
    """Register a replay format under ``name`` (``replay:<name>:<file>``); a name is taken once
    (``Registry.register``: the same functions again is a no-op)."""
    have = FORMATS.loaded().get(name)
    if have is not None and (have.judges, have.judge, have.help) == (judges, judge, help):
        return
    FORMATS.register(name, ReplayFormat(name, judges, judge, help))


def formats() -> dict[str, ReplayFormat]:
    """The registered replay formats (those of installed plug-ins included)."""
    return FORMATS.items()


def _format_of(argument: str) -> tuple[ReplayFormat, str] | None:
    """The registered format an argument names (``<name>:<rest>``) and the rest, or None (a plain file)."""
    name, sep, rest = argument.partition(":")
    if not sep or "/" in name or "\\" in name or "." in name:
        return None
    return (FORMATS.get(name), rest) if name in FORMATS else None


OPTIONS = ("judge", "scale", "higher", "template", *_COLUMNS)
"""What a plain replay spec's ``?…`` may name: ``judge``, ``scale``, ``higher``, ``template`` and the columns
it renames."""


def check_options(mapping: dict[str, str], path: str, known: tuple[str, ...] = OPTIONS,
                  spec: str = "replay") -> None:
    """An option a spec does not know is an error naming it and the known ones, never ignored."""
    unknown = [k for k in mapping if k not in known]
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r} for {spec} (options: {', '.join(known)})", path=path,
                         field=unknown[0])


def use_template(judges: list[Judge], name: str | None) -> list[Judge]:
    """``judges``, each now rendering and reading with the template ``name`` (a built-in name or a file;
    ``Judge.use_template``, in place); unchanged when ``name`` is None. A replay spec's ``?template=``."""
    if name is None:
        return judges
    from judgeaudit.judges.templates import get_template

    template = get_template(name)
    for j in judges:
        j.use_template(template)
    return judges


def replay_judges(argument: str) -> list[Judge]:
    """Every judge a replay file holds, from one read of it: one per judge id, named by its id, or the
    file's single judge, named by the spec, when it has no judge ids (``build_judges`` on ``replay:<argument>``)."""
    if (fmt := _format_of(argument)) is not None:
        return fmt[0].judges(fmt[1])
    path, mapping = parse_spec(argument)
    check_options(mapping, path)
    template = mapping.pop("template", None)
    scale = replay_scale(mapping, path)
    df = load_replay_table(path, mapping, scale)
    ids = _judge_ids(df)
    if not ids:
        return use_template([replay_judge(df, path, None, f"replay:{argument}", None, scale)], template)
    return use_template([replay_judge(df, path, i, i, None, scale) for i in ids], template)


@register("replay", "verdicts from a JSONL/CSV/Parquet file: replay:<path>[?judge=ID&score=col…]; "
                    "another tool's file: replay:<format>:<file> (inspect: an Inspect AI eval log, promptfoo: a "
                    "promptfoo eval's output)")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if (fmt := _format_of(argument)) is not None:
        return fmt[0].judge(fmt[1], options)
    path, mapping = parse_spec(argument)
    if not path:
        raise InputError("replay judge needs a file: replay:<path>", field="judge")
    check_options(mapping, path)
    template = mapping.pop("template", None)
    scale = replay_scale(mapping, path)
    df = load_replay_table(path, mapping, scale)
    wanted = mapping.get("judge")
    if "judge_id" in df.columns:
        ids = _judge_ids(df)
        if wanted is None and len(ids) > 1:
            raise InputError(f"file holds {len(ids)} judges ({', '.join(ids[:5])}…); pick one with ?judge=ID",
                             path=path, field="judge_id")
        wanted = wanted or (ids[0] if ids else None)
    spec_id = options["id"] if wanted is None or options["id"] != f"replay:{argument}" else wanted
    judge, = use_template([replay_judge(df, path, wanted, spec_id, options.get("family"), scale)], template)
    return judge

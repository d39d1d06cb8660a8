"""The inputs of ``judgeaudit calibrate``: a judge's verdicts (any ``replay:`` spec, a run folder, or
its ``verdicts.parquet``) and a human labels file (CSV/JSONL/Parquet: ``id``, ``label``), turned into
the per-item table ``judgeaudit.analyses.calibrate.calibrate`` reads (``id``, ``yhat``, ``y``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.errors import InputError

WIN = {"A": 1.0, "B": 0.0, "tie": 0.5}
WIN_NAMES = {v: k for k, v in WIN.items()}
_TRUE = {"1", "1.0", "true", "pass", "yes", "correct", "y", "t"}
_FALSE = {"0", "0.0", "false", "fail", "no", "incorrect", "n", "f"}


@dataclass(frozen=True)
class Verdicts:
    """One judge's verdicts, one row per (request, epoch): ``request_id``, ``epoch``, ``score``,
    ``label``, ``choice``, ``error``, ``parse_ok`` (absent columns are missing values)."""

    judge: str
    table: pd.DataFrame
    source: str
    path: Path


def _pick(tables: dict[str, pd.DataFrame], judge: str | None, source: str, path: Path) -> Verdicts:
    if judge is None:
        if len(tables) > 1:
            raise InputError(f"holds {len(tables)} judges ({', '.join(sorted(tables))}); pick one with --judge",
                             path=path, field="--judge")
        judge = next(iter(tables))
    if judge not in tables:
        raise InputError(f"no verdicts of judge {judge!r}; it holds: {', '.join(sorted(tables))}", path=path,
                         field="--judge")
    return Verdicts(judge, tables[judge], source, path)


def read_verdicts(source: str, judge: str | None = None) -> Verdicts:
    """The verdicts of ``judge`` in ``source``: ``replay:<spec>`` (any replay format), a run folder
    (its ``verdicts.parquet``) or a verdict table file."""
    if source.startswith("replay:"):
        from judgeaudit.judges.replay import replay_judges
        from judgeaudit.specs import name_of

        path = Path(name_of(source.removeprefix("replay:").removeprefix("inspect:")))
        js = replay_judges(source.removeprefix("replay:"))
        return _pick({j.id: pd.DataFrame(j.rows()) for j in js}, judge, source, path)
    from judgeaudit.io import read_table

    path = Path(source)
    if path.is_dir():
        path = path / "verdicts.parquet"
        if not path.exists():
            raise InputError("a run folder holds verdicts.parquet; this one does not", path=path.parent,
                             field="--verdicts")
    df = read_table(path)
    if "request_id" not in df.columns:
        raise InputError("a verdict table needs a 'request_id' column (or give a replay: spec)", path=path,
                         field="request_id")
    df["request_id"] = df["request_id"].astype(str)
    if "judge_id" not in df.columns:
        return _pick({str(path): df}, judge, source, path)
    return _pick({str(k): g for k, g in df.groupby("judge_id", sort=True)}, judge, source, path)


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series([None] * len(df), index=df.index, dtype=object)


def verdict_values(v: Verdicts, target: str, threshold: float | None) -> tuple[pd.Series, set[str], int, str]:
    """``(value per request id, every request id, unusable verdicts, what the value is)``: each item's verdict as the
    number its target averages, the mean over its usable epochs. A verdict is unusable when its call
    failed, it did not parse, or it holds no value for the target."""
    df = v.table
    ok = _col(df, "error").isna() & ~_col(df, "parse_ok").map(lambda x: isinstance(x, bool | np.bool_) and not x)
    if target == "mean":
        value, what = pd.to_numeric(_col(df, "score"), errors="coerce"), "the judge's score"
    elif target == "win_rate":
        value, what = _col(df, "choice").map(WIN), "the judge's choice (A = 1, B = 0, tie = ½)"
    elif _col(df, "label").notna().any():
        value = _col(df, "label").map(lambda x: None if x is None or x != x else float(bool(x)))
        what = "the judge's label (true = 1)"
    else:
        if threshold is None:
            raise InputError(f"--target {target} on scored verdicts needs --threshold (a score at or above it "
                             "passes)", field="--threshold")
        s = pd.to_numeric(_col(df, "score"), errors="coerce")
        value = (s >= threshold).astype(float).where(s.notna())
        what = f"score ≥ {threshold:g} (1) or below (0)"
    value = pd.to_numeric(value, errors="coerce").where(ok)
    usable = value.notna()
    per_item = value[usable].groupby(df.loc[usable, "request_id"].astype(str)).mean()
    return per_item, set(df["request_id"].astype(str)), int((~usable).sum()), what


def _label(raw: object, target: str) -> float | None:
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return None
    text = str(raw).strip()
    if target == "win_rate":
        return WIN.get(text, WIN.get(text.lower()))
    if target == "mean":
        try:
            return float(text) if not isinstance(raw, bool) else None
        except ValueError:
            return None
    low = text.lower()
    return 1.0 if low in _TRUE else 0.0 if low in _FALSE else None


_LABEL_FORMS = {"mean": "a number", "win_rate": "A, B or tie",
                "pass_rate": "true/false (1/0, pass/fail, yes/no, correct/incorrect)"}


def read_labels(path: Path, target: str) -> pd.Series:
    """Human labels by item id (``id`` or ``request_id``/``item_id``, and ``label``), as numbers for
    ``target``. ``InputError`` naming the file, line and field for a missing column, a blank or
    repeated id, or a label that is not of the target's form."""
    from judgeaudit.io import read_table

    df = read_table(path)
    lines = df.attrs.get("lines") or list(range(1, len(df) + 1))
    idcol = next((c for c in ("id", "request_id", "item_id") if c in df.columns), None)
    if idcol is None:
        raise InputError("a labels file needs an 'id' column", path=path, field="id")
    if "label" not in df.columns:
        raise InputError("a labels file needs a 'label' column", path=path, field="label")
    if df.empty:
        raise InputError("holds no labels", path=path)
    out: dict[str, float] = {}
    first: dict[str, int] = {}
    form = _LABEL_FORMS.get(target, _LABEL_FORMS["pass_rate"])
    for row, (i, raw) in enumerate(zip(df[idcol], df["label"], strict=True)):
        if i is None or (isinstance(i, float) and np.isnan(i)) or not str(i).strip():
            raise InputError("blank id", path=path, line=lines[row], field=idcol)
        key = str(int(i)) if isinstance(i, float) and i.is_integer() else str(i)
        if key in out:
            raise InputError(f"id {key!r} is labelled again; first on line {first[key]}", path=path,
                             line=lines[row], field=idcol)
        y = _label(raw, target)
        if y is None or not np.isfinite(y):
            raise InputError(f"label {raw!r} is not {form} (--target {target})", path=path, line=lines[row],
                             field="label")
        out[key], first[key] = y, lines[row]
    s = pd.Series(out, dtype=float)
    s.attrs["lines"] = first
    return s


def join(values: pd.Series, all_ids: set[str], labels: pd.Series,
         labels_path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The per-item table (``id``, ``yhat``, ``y``) and the labelled ids left out because their verdict
    is unusable. A labelled id absent from the verdicts is an ``InputError`` (a wrong id file)."""
    known = set(values.index)
    lines = labels.attrs.get("lines", {})
    for i in labels.index:
        if i not in all_ids:
            raise InputError(f"id {i!r} has no verdict of this judge (not in the verdicts)", path=labels_path,
                             line=lines.get(i), field="id")
    dropped = [i for i in labels.index if i not in known]
    table = pd.DataFrame({"id": values.index.astype(str), "yhat": values.to_numpy(dtype=float)})
    table["y"] = table["id"].map(labels).astype(float)
    return table, dropped

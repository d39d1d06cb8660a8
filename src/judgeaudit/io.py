"""Reading and writing tables and record files, with errors that name file, line and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from pydantic import BaseModel, ValidationError

from judgeaudit.errors import InputError

M = TypeVar("M", bound=BaseModel)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file."""
    p = Path(path)
    try:
        fh = p.open(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read file ({e.strerror or e})", path=p) from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"malformed JSON ({e.msg} at column {e.colno})", path=p, line=n) from None
            if not isinstance(obj, dict):
                raise InputError("each line must be a JSON object", path=p, line=n)
            yield n, obj


def validation_message(err: ValidationError) -> tuple[str, str]:
    """(field, message) of a pydantic error's first problem."""
    first = err.errors()[0]
    field = ".".join(str(x) for x in first.get("loc", ())) or "?"
    msg = first.get("msg", "invalid value")
    if first.get("type") == "missing":
        msg = "required field is missing"
    return field, msg


def read_records(path: str | Path, model: type[M], *, rename: dict[str, str] | None = None) -> list[M]:
    """Read a JSONL file into validated records; the first bad line raises ``InputError``."""
    out: list[M] = []
    for n, obj in iter_jsonl(path):
        if rename:
            obj = {rename.get(k, k): v for k, v in obj.items()}
        try:
            out.append(model.model_validate(obj))
        except ValidationError as e:
            field, msg = validation_message(e)
            raise InputError(msg, path=path, line=n, field=field) from None
    if not out:
        raise InputError("file holds no records", path=path)
    return out


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a JSONL, CSV or Parquet table by its suffix."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    suffix = p.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            return pd.DataFrame([obj for _, obj in iter_jsonl(p)])
        if suffix == ".json":
            return pd.read_json(p)
        if suffix in (".csv", ".tsv"):
            return pd.read_csv(p, sep="\t" if suffix == ".tsv" else ",")
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(p)
    except InputError:
        raise
    except Exception as e:  # pandas/pyarrow parse errors
        raise InputError(f"cannot parse table ({e})", path=p) from None
    raise InputError(f"unsupported table format {suffix!r} (use .jsonl, .csv, .tsv or .parquet)", path=p)


def write_jsonl(path: str | Path, rows: list[dict[str, Any]] | pd.DataFrame) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(rows, pd.DataFrame):
        rows = json.loads(rows.to_json(orient="records", force_ascii=False))
    with p.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")


def write_parquet(path: str | Path, df: pd.DataFrame) -> Path:
    """Write a table to Parquet; dict and list-of-dict cells (meta, defects) are stored as JSON text."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, dict) or (
                isinstance(v, list) and any(isinstance(x, dict) for x in v))).any():
            out[col] = out[col].map(lambda v: None if v is None else json.dumps(v, default=str))
    out.to_parquet(p, index=False)
    return p


def write_json(path: str | Path, obj: Any) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default), encoding="utf-8")


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if np.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return str(o)

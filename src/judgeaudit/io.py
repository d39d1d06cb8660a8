"""Reading and writing tables and record files, with errors that name file, line and field."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from pydantic import BaseModel, ValidationError

from judgeaudit.errors import InputError

M = TypeVar("M", bound=BaseModel)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Bytes that are not UTF-8 and the non-JSON constants ``NaN``/``Infinity`` raise ``InputError``
    naming the line (and, for a constant, the field)."""
    p = Path(path)
    try:
        fh = p.open("rb")
    except OSError as e:
        raise InputError(f"cannot read file ({e.strerror or e})", path=p) from None
    with fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})",
                                 path=p, line=n) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line, parse_constant=_reject_constant)
            except json.JSONDecodeError as e:
                raise InputError(f"malformed JSON ({e.msg} at column {e.colno})", path=p, line=n) from None
            except _NonJSONConstant as e:
                raise InputError(f"{e.args[0]} is not a JSON number", path=p, line=n,
                                 field=_constant_field(line)) from None
            if not isinstance(obj, dict):
                raise InputError("each line must be a JSON object", path=p, line=n)
            yield n, obj


class _NonJSONConstant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonJSONConstant(name)


def _constant_field(line: str) -> str | None:
    """The top-level key whose value is ``NaN``/``Infinity`` on a JSONL line, if there is one."""
    marker = object()
    try:
        obj = json.loads(line, parse_constant=lambda _: marker)
    except ValueError:
        return None
    if isinstance(obj, dict):
        return next((str(k) for k, v in obj.items() if v is marker), None)
    return None


def read_text(path: str | Path) -> str:
    """A whole UTF-8 text file; ``InputError`` naming the line of the first byte that is not UTF-8."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read file ({e.strerror or e})", path=p) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[e.start]:02x} at column {e.start - line_start + 1})",
                         path=p, line=data.count(b"\n", 0, e.start) + 1) from None


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
    """Read a JSONL, CSV or Parquet table by its suffix.

    ``df.attrs["lines"]`` holds each row's line in the file (JSONL: its line; CSV: after the header;
    JSON and Parquet: the 1-based row), for errors that name the line."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    suffix = p.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            rows = list(iter_jsonl(p))
            df = pd.DataFrame([obj for _, obj in rows])
            df.attrs["lines"] = [n for n, _ in rows]
            return df
        if suffix == ".json":
            df = pd.read_json(io.StringIO(read_text(p)))
        elif suffix in (".csv", ".tsv"):
            df = pd.read_csv(io.StringIO(read_text(p)), sep="\t" if suffix == ".tsv" else ",")
            df.attrs["lines"] = [i + 2 for i in range(len(df))]
            return df
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(p)
        else:
            df = None
    except InputError:
        raise
    except Exception as e:  # pandas/pyarrow parse errors
        raise InputError(f"cannot parse table ({e})", path=p) from None
    if df is None:
        raise InputError(f"unsupported table format {suffix!r} (use .jsonl, .csv, .tsv or .parquet)", path=p)
    df.attrs["lines"] = [i + 1 for i in range(len(df))]
    return df


@contextmanager
def _replacing(path: str | Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write; renamed over ``path`` when the block ends without an
    error (removed otherwise), so a reader or a kill never meets a half-written file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)


def write_jsonl(path: str | Path, rows: list[dict[str, Any]] | pd.DataFrame) -> None:
    if isinstance(rows, pd.DataFrame):
        rows = json.loads(rows.to_json(orient="records", force_ascii=False))
    with _replacing(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")


def write_parquet(path: str | Path, df: pd.DataFrame) -> Path:
    """Write a table to Parquet; dict and list-of-dict cells (meta, defects) are stored as JSON text."""
    p = Path(path)
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, dict) or (
                isinstance(v, list) and any(isinstance(x, dict) for x in v))).any():
            out[col] = out[col].map(lambda v: None if v is None else json.dumps(v, default=str))
    with _replacing(p) as tmp:
        out.to_parquet(tmp, index=False)
    return p


def write_json(path: str | Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default)
    with _replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


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

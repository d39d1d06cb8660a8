"""Generic adapter: any JSONL / CSV / Parquet table with a column mapping.

Item mode (one response → its label): map ``text`` and ``label`` (required), ``group``,
``condition``, ``id`` and ``human`` (a column holding a list of labels, for the human ceiling).
Paired mode (two responses → which one is preferred): map ``response_a``, ``response_b`` and
``label`` (required), ``prompt``, ``group``, ``condition_a``, ``condition_b``, ``id``, ``human``.
Paired labels may be ``A``/``B``/``tie`` (any case), ``1``/``2``, ``a>b``/``b>a``/``a=b`` or
``model_a``/``model_b``/``tie``; anything else is an ``InputError`` naming the row and column.
A table with ``chosen`` and ``rejected`` columns (and no mapping of its own) is read as pairs,
the chosen side fixed by a hash of the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import hash_side
from judgeaudit.errors import InputError
from judgeaudit.io import read_table
from judgeaudit.records import PAIRWISE_COLUMNS

ITEM_KEYS = ("text", "label", "group", "condition", "id", "human")
PAIRED_KEYS = ("response_a", "response_b", "label", "prompt", "group", "condition_a", "condition_b", "id", "human")

_PAIR_LABELS = {"a": "A", "b": "B", "tie": "tie", "1": "A", "2": "B", "a>b": "A", "b>a": "B", "a=b": "tie",
                "model_a": "A", "model_b": "B", "tie (bothbad)": "tie", "1.0": "A", "2.0": "B"}


def pair_label(value: Any, *, path: str | Path | None = None, line: int | None = None,
               field: str = "label") -> str:
    """Normalise a paired label to ``'A'|'B'|'tie'`` (``InputError`` otherwise)."""
    key = str(value).strip().lower()
    if key not in _PAIR_LABELS:
        raise InputError(f"paired label must be A/B/tie (or 1/2, a>b/b>a), got {value!r}", path=path,
                         line=line, field=field)
    return _PAIR_LABELS[key]


def _col(df: pd.DataFrame, name: str, path: Path, key: str) -> pd.Series:
    if name not in df.columns:
        raise InputError(f"column {name!r} (mapped to {key}) not found; columns: {', '.join(map(str, df.columns))}",
                         path=path, field=name)
    return df[name]


def _mapped(df: pd.DataFrame, m: dict[str, str], key: str, path: Path) -> pd.Series | None:
    """The file's column mapped to ``key``, as strings; None where ``key`` is not mapped."""
    return _col(df, m[key], path, key).astype(str) if key in m else None


def _ids(df: pd.DataFrame, m: dict[str, str], path: Path) -> pd.Series | list[str]:
    """Row ids: the mapped ``id`` column, else ``<file stem>/<row>``."""
    ids = _mapped(df, m, "id", path)
    return ids if ids is not None else [f"{path.stem}/{i}" for i in range(len(df))]


def _values(s: pd.Series | None) -> Any:
    return None if s is None else s.values


def _row_line(path: Path, i: int) -> int:
    # JSONL rows are lines (blank lines aside); CSV rows are line i+2 (header first).
    return i + 2 if path.suffix.lower() in (".csv", ".tsv") else i + 1


def load_table(path: str | Path, mapping: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read ``path`` and return an item table or a paired table according to ``mapping``.

    Args:
        path: a .jsonl, .csv, .tsv or .parquet file.
        mapping: our field → the file's column (see module docstring). Without ``response_a``
            in it, the table is read in item mode (defaults: ``text``, ``label``).
    """
    path = Path(path)
    df = read_table(path)
    mapping = dict(mapping or {})
    unknown = [k for k in mapping if k not in set(ITEM_KEYS) | set(PAIRED_KEYS)]
    if unknown:
        raise InputError(f"unknown mapping key(s) {unknown}; item keys {list(ITEM_KEYS)}, paired keys "
                         f"{list(PAIRED_KEYS)}", field=unknown[0])
    if "response_a" not in mapping and "chosen" in df.columns and "rejected" in df.columns and "text" not in mapping:
        return _chosen_rejected(df, mapping, path)
    if "response_a" in mapping or "response_b" in mapping:
        return _paired(df, mapping, path)
    return _items(df, mapping, path)


def _items(df: pd.DataFrame, m: dict[str, str], path: Path) -> pd.DataFrame:
    text = _col(df, m.get("text", "text"), path, "text")
    label = _col(df, m.get("label", "label"), path, "label")
    bad = label.isna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise InputError("label is missing", path=path, line=_row_line(path, i), field=m.get("label", "label"))
    out = pd.DataFrame({
        "item_id": _ids(df, m, path),
        "text": text.astype(str),
        "label": label.astype(str),
        "group": _mapped(df, m, "group", path),
        "condition": _mapped(df, m, "condition", path),
    })
    if "human" in m:
        out["human_labels"] = [_as_list(v) for v in _col(df, m["human"], path, "human")]
    return out


def _as_list(v: Any) -> list[str] | None:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return None
    if isinstance(v, str):
        return [x.strip() for x in v.replace(";", ",").split(",") if x.strip()]
    return [str(x) for x in list(v)]


def _paired(df: pd.DataFrame, m: dict[str, str], path: Path) -> pd.DataFrame:
    a = _col(df, m.get("response_a", "response_a"), path, "response_a")
    b = _col(df, m.get("response_b", "response_b"), path, "response_b")
    lab_col = m.get("label", "label")
    labels = [pair_label(v, path=path, line=_row_line(path, i), field=lab_col)
              for i, v in enumerate(_col(df, lab_col, path, "label"))]
    prompt = _mapped(df, m, "prompt", path)
    pair_ids = _ids(df, m, path)
    group = _mapped(df, m, "group", path)
    out = pd.DataFrame({
        "pair_id": pair_ids,
        "prompt": prompt.values if prompt is not None else [""] * len(df),
        "response_a": a.astype(str).values, "response_b": b.astype(str).values,
        "label": labels,
        "group": _values(group if group is not None else prompt),
        "source_set": path.stem, "subset": None,
        "condition_a": _values(_mapped(df, m, "condition_a", path)),
        "condition_b": _values(_mapped(df, m, "condition_b", path)),
        "meta": [{} for _ in range(len(df))],
    }, columns=list(PAIRWISE_COLUMNS))
    if "human" in m:
        out["human_labels"] = [[pair_label(x, path=path, field=m["human"]) for x in (_as_list(v) or [])] or None
                               for v in _col(df, m["human"], path, "human")]
    return out


def _chosen_rejected(df: pd.DataFrame, m: dict[str, str], path: Path) -> pd.DataFrame:
    prompt_col = m.get("prompt", "prompt" if "prompt" in df.columns else None)
    rows = []
    for i, r in enumerate(df.itertuples(index=False)):
        d = r._asdict()
        p = str(d.get(prompt_col, "")) if prompt_col else ""
        pid = str(d.get(m.get("id", "id"), f"{path.stem}/{i}"))
        side = hash_side(f"{pid}|{p}")
        c, rj = str(d["chosen"]), str(d["rejected"])
        a, b = (c, rj) if side == "A" else (rj, c)
        rows.append({"pair_id": pid, "prompt": p, "response_a": a, "response_b": b, "label": side,
                     "group": str(d.get(m["group"])) if "group" in m else p, "source_set": path.stem,
                     "subset": str(d.get("subset")) if "subset" in d else None,
                     "condition_a": None, "condition_b": None, "meta": {}})
    return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))

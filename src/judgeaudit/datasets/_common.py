"""Shared pieces of the pairwise data-set adapters: the coverage declaration type, the
two-order published-judge table, and small readers that name file, line and field on error.

Each adapter (``judgebench``, ``llmbar``, ``rm_bench``) declares, per CAP condition, how its
items can measure it (conditional-accuracy-profiles.txt §3.2 Table 2, Appendix D).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.families import family_of, judge_family  # noqa: F401 - re-exported for the adapters
from judgeaudit.records import PAIRWISE_COLUMNS

CoverageStatus = Literal["direct", "approx", "augmented", "unavailable"]

#: Columns of the per-item two-order table of one judge (published or live). ``choice_ba`` is
#: already mapped back to the original frame (``'A'`` always means the set's ``response_a``).
TWO_ORDER_COLUMNS = (
    "pair_id", "judge_id", "family", "choice_ab", "choice_ba", "rationale_ab", "rationale_ba",
    "failure_ab", "failure_ba",
)
"""``failure_*``: None when the call produced a verdict; ``'parse'`` for a parse failure (the
judge answered but no verdict could be read); ``'api'`` when the call itself failed."""

#: A choice made with the responses swapped (B/A order), in the original frame.
SWAPPED_CHOICE = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class CoverageCell:
    """How one benchmark measures one CAP condition (Table 2 cell + Appendix D operator).

    Attributes:
        status: ``direct``, ``approx`` (a named native subset used as a proxy), ``augmented``
            (generated variants) or ``unavailable``.
        operator: the exact operator (subset name and criterion: PA position-averaged, BC strict
            both-correct) behind the cell.
        subsets: the native ``subset`` values the cell is computed on (None: all items).
        variants: for Style/Length (C5/C6) with paired variants, the ``variant`` values of x1 and
            x2 (e.g. ``("original", "polished")``); for other cells, the variants kept (None: the
            non-augmented rows).
    """

    status: CoverageStatus
    operator: str = ""
    subsets: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "operator": self.operator,
                "subsets": list(self.subsets) if self.subsets is not None else None,
                "variants": list(self.variants) if self.variants is not None else None}


UNAVAILABLE = CoverageCell("unavailable", "not measurable on this benchmark")


def read_json(path: Path) -> Any:
    """A JSON file's value; ``InputError`` naming the file (and line) when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read file ({e.strerror or e})", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON ({e.msg})", path=path, line=e.lineno) from None


def read_json_array(path: Path) -> list[dict[str, Any]]:
    """A JSON file holding an array of objects; ``InputError`` naming the file otherwise."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON array of objects", path=path)
    return data


def require(obj: dict[str, Any], key: str, path: Path, line: int | None) -> Any:
    if key not in obj:
        raise InputError("required field is missing", path=path, line=line, field=key)
    return obj[key]


def finish_pairs(rows: list[dict[str, Any]], extra: tuple[str, ...], where: Path) -> pd.DataFrame:
    """Order columns: ``PAIRWISE_COLUMNS`` first, then the adapter's extra columns."""
    if not rows:
        raise InputError("no pairs found", path=where)
    df = pd.DataFrame(rows)
    cols = list(PAIRWISE_COLUMNS) + [c for c in extra if c in df.columns]
    df = df[cols]
    dup = df["pair_id"].duplicated()
    if dup.any():
        raise InputError(f"duplicate pair_id {df.loc[dup, 'pair_id'].iloc[0]!r}", path=where,
                         field="pair_id")
    return df.reset_index(drop=True)


def table_family(table: pd.DataFrame) -> str | None:
    """The family recorded in a two-order table (its first non-null ``family``), or None."""
    fam = table["family"].dropna()
    return fam.iloc[0] if len(fam) else None


def table_model(table: pd.DataFrame) -> str | None:
    """The model recorded in a two-order table (its first non-null ``model``), or None."""
    if "model" not in table.columns:
        return None
    m = table["model"].dropna()
    return str(m.iloc[0]) if len(m) else None


def hash_side(key: str) -> str:
    """A stable side (``'A'`` or ``'B'``) for ``key``: the parity of its CRC-32. Adapters of sets
    whose preferred response has no side of its own place it with this."""
    return "A" if zlib.crc32(key.encode("utf-8")) % 2 == 0 else "B"


def two_order_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows of a two-order table as a frame with ``TWO_ORDER_COLUMNS`` (plus ``model``, the judge's
    model name, when the rows carry it: two judge ids of one model are not a within-family pair)."""
    extra = ["model"] if any("model" in r for r in rows) else []
    return pd.DataFrame(rows, columns=list(TWO_ORDER_COLUMNS) + extra)


def listing(folder: Path, limit: int = 6) -> str:
    """A short listing of what ``folder`` holds (``a.txt, b/, …``), for layout errors; names
    sorted, folders marked with ``/``, at most ``limit`` entries."""
    folder = Path(folder)
    if not folder.exists():
        return "the path does not exist"
    if not folder.is_dir():
        return f"{folder.name} is a file"
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as e:
        return f"cannot list the folder ({e.strerror or e})"
    if not entries:
        return "the folder is empty"
    names = [p.name + ("/" if p.is_dir() else "") for p in entries[:limit]]
    return ", ".join(names) + (", …" if len(entries) > limit else "")


def layout_error(what: str, path: Path) -> InputError:
    """``InputError`` for a folder whose layout an adapter does not recognise: what was expected
    and what was found there."""
    return InputError(f"{what}; found: {listing(path)}", path=path)


def files_under(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """``root`` itself when it is a file, else every file under it (any depth) whose name ends
    with one of ``suffixes``, sorted by path: the candidates an adapter recognises by content."""
    if root.is_file():
        return [root]
    return sorted(f for f in root.rglob("*") if f.name.endswith(suffixes) and f.is_file())


def first_record(path: Path) -> dict[str, Any] | None:
    """The first object of a JSON Lines file or of a JSON array file (None when the file is empty,
    unreadable, or holds neither), to recognise a file by its schema without reading all of it.
    Bytes that are not UTF-8 are replaced here, so the file is still recognised and its full read
    names the byte and its line."""
    try:
        with path.open("rb") as fh:
            raw = fh.readline()
            while raw and not raw.strip():
                raw = fh.readline()
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace").strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return None
        return obj if isinstance(obj, dict) else None
    if text.startswith("["):
        try:
            data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
        except (OSError, json.JSONDecodeError):
            return None
        return data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else None
    return None

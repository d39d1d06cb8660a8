"""What every reply reader shares: the parse result, the statements a reply makes and how they settle on
one value (or why not), the JSON objects in a reply and simple JSON paths into them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from judgeaudit.records import Defect


@dataclass(frozen=True)
class ParseResult:
    ok: bool
    score: float | None = None
    #: character offset in the reply of the digit read as ``score`` (where its logprobs are read)
    score_at: int | None = None
    choice: str | None = None
    rationale: str | None = None
    defects: list[Defect] | None = None
    error: str | None = None
    #: the world forms: per-item label, per-unit labels, typed defect ids
    label: bool | None = None
    unit_labels: list[bool] | None = None
    defect_ids: list[str] | None = None
    #: a five-way pairwise verdict's strength: 2 (``A>>B``), 1 (``A>B``), 0 (``A=B``)
    strength: int | None = None
    #: the label the reply gave (``A>B``, ``[[C]]``, ``pass``), when it differs from ``choice``/``score``
    stated: str | None = None


def _fail(error: str, **kw: Any) -> ParseResult:
    return ParseResult(ok=False, error=error, **kw)


@dataclass
class _Statements:
    """Values a reply states (with the offset of each), or the first reason one is unreadable."""

    values: list[tuple[Any, int, str]] = field(default_factory=list)
    problem: str | None = None

    def add(self, value: Any, at: int, kind: str) -> None:
        self.values.append((value, at, kind))

    def refuse(self, why: str) -> None:
        if self.problem is None:
            self.problem = why


# ----------------------------------------------------------------------------- JSON objects

def json_objects(text: str) -> list[tuple[dict[str, Any], int]]:
    """Every JSON object in ``text`` (outermost first) with its offset; nested ones are reached by
    ``json_path``."""
    decoder = json.JSONDecoder()
    found, i = [], text.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            obj, end = None, i + 1
        if isinstance(obj, dict):
            found.append((obj, i))
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return found


_PATH_TOKEN_RE = re.compile(r"\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


def json_path(obj: Any, path: str) -> tuple[bool, Any]:
    """``(found, value)`` of a simple JSON path (``$.a.b``, ``a[0].b``, ``$['key']``) in ``obj``."""
    rest = path.strip()
    rest = rest[1:] if rest.startswith("$") else rest
    while rest:
        m = _PATH_TOKEN_RE.match(rest)
        if not m:
            raise ValueError(f"unreadable JSON path {path!r}")
        key, index, quoted = m.groups()
        if index is not None:
            if not isinstance(obj, list) or int(index) >= len(obj):
                return False, None
            obj = obj[int(index)]
        else:
            name = key if key is not None else quoted
            if not isinstance(obj, dict) or name not in obj:
                return False, None
            obj = obj[name]
        rest = rest[m.end():]
    return True, obj


def check_json_path(path: str) -> None:
    """Refuse (ValueError) a JSON path that ``json_path`` cannot read."""
    rest = path.strip()
    rest = rest[1:] if rest.startswith("$") else rest
    while rest:
        m = _PATH_TOKEN_RE.match(rest)
        if not m or not m.end():
            raise ValueError(f"unreadable JSON path {path!r} at {rest[:20]!r}: use $.key, $.key[0] or $['key']")
        rest = rest[m.end():]


# A rating in double brackets (MT-Bench's "[[7]]", "[[PASS]]"): the framing graded and pass/fail replies share
_BRACKETS_RE = re.compile(r"\[\[\s*([^\[\]\n]{0,20}?)\s*\]\]")


def _settle(st: _Statements, what: str) -> tuple[Any, int] | str:
    """The one value the statements agree on and the offset of the first, or why there is none."""
    if st.problem:
        return st.problem
    distinct = sorted({v for v, _, _ in st.values}, key=str)
    if len(distinct) > 1:
        return f"conflicting {what} {[str(v) for v in distinct]}"
    first = min(st.values, key=lambda s: s[1])
    return first[0], first[1]

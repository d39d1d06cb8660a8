"""Defect-list replies: a JSON list of ``{span, reason}`` (or a quote and an explanation), bare or under a
key, read from a reply that may hold trailing commas or prose around it."""

from __future__ import annotations

import json
import re
from typing import Any

from judgeaudit.judges.replies.common import ParseResult, _fail
from judgeaudit.records import Defect


#: keys a defect list is given under (``{"defects": [...]}``, the world form's key, and what judges write)
_DEFECT_LIST_KEYS = ("defects", "issues", "problems", "errors", "findings")
#: the quote of a defect (``span``: judgeaudit's defect list; ``quote``: the world defects form)
_QUOTE_KEYS = ("span", "quote")
_REASON_KEYS = ("reason", "explanation")
_OPENERS_RE = re.compile(r"[\[{]")


def _closing(text: str, start: int) -> int | None:
    """The offset just past the bracket that closes the one at ``start`` (double-quoted strings
    skipped), or None when the text ends first."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _without_trailing_commas(segment: str) -> str:
    """``segment`` without the commas that stand just before a closing bracket (outside strings)."""
    out, i, n = [], 0, len(segment)
    while i < n:
        c = segment[i]
        if c == '"':
            j = i + 1
            while j < n and segment[j] != '"':
                j += 2 if segment[j] == "\\" else 1
            out.append(segment[i: j + 1])
            i = j + 1
            continue
        if c == "," and segment[i + 1:].lstrip()[:1] in ("]", "}"):
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _decode(segment: str) -> tuple[bool, Any]:
    """A bracketed segment as JSON, as JSON with trailing commas, or as a Python literal (single
    quotes); ``(False, None)`` when it is none of them."""
    import ast

    for attempt in (segment, _without_trailing_commas(segment)):
        try:
            return True, json.loads(attempt)
        except json.JSONDecodeError:
            pass
    try:
        value = ast.literal_eval(segment)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
    return isinstance(value, (list, dict)), value


def _json_values(text: str) -> tuple[list[tuple[Any, int]], str | None]:
    """The outermost bracketed JSON values in ``text`` with their offsets, or why the reply's JSON is
    unreadable: a value cut off before its closing bracket (a truncated reply) or a malformed object."""
    values: list[tuple[Any, int]] = []
    pos = 0
    while (m := _OPENERS_RE.search(text, pos)) is not None:
        at = m.start()
        end = _closing(text, at)
        if end is None:
            if "{" in text[at:]:
                return values, "truncated JSON (a bracket is never closed)"
            pos = at + 1   # a bracket in the prose
            continue
        ok, value = _decode(text[at:end])
        if ok:
            values.append((value, at))
        elif "{" in text[at:end]:
            return values, "malformed JSON"
        pos = end if ok else at + 1
    return values, None


def _folded(obj: dict[Any, Any]) -> dict[str, Any] | str:
    """``obj`` with lower-cased keys, or why not (two spellings of one key with different values)."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = str(k).lower()
        if key in out and out[key] != v:
            return f"the keys {key!r} are given twice with different values"
        out[key] = v
    return out


def _one_of(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    """The value under the first of ``keys`` present; ``(False, why)`` when two present disagree."""
    present = [obj[k] for k in keys if k in obj]
    if len({json.dumps(v, sort_keys=True, default=str) for v in present}) > 1:
        return False, f"{' and '.join(repr(k) for k in keys if k in obj)} disagree"
    return True, present[0] if present else None


def _citation(value: Any) -> tuple[bool, str | None]:
    if value is None or isinstance(value, str):
        return True, value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, f"{value:g}"
    if isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        return True, ", ".join(str(v) for v in value)
    return False, None


def defect_list(items: list[Any]) -> list[Defect] | str:
    """A list of defect objects as Defects (keys in any case; the quote under ``span`` or ``quote``, the
    reason under ``reason``; ``citation`` text, a number or a list of them), or why it is not one."""
    defects = []
    for i, item in enumerate(items):
        d = _folded(item) if isinstance(item, dict) else f"defect {i} is not an object"
        if isinstance(d, str):
            return d
        ok_q, quote = _one_of(d, _QUOTE_KEYS)
        ok_r, reason = _one_of(d, _REASON_KEYS)
        if not ok_q or not ok_r:
            return f"defect {i}: {quote if not ok_q else reason}"
        if not isinstance(quote, str) or not quote.strip() or not isinstance(reason, str) or not reason.strip():
            return f"defect {i} lacks a non-empty string 'span' (or 'quote') and 'reason'"
        ok_c, citation = _citation(d.get("citation"))
        if not ok_c:
            return f"defect {i}'s citation is not text, a number or a list of them"
        defects.append(Defect(span=quote, reason=reason, citation=citation))
    return defects


def _defect_like(value: Any) -> bool:
    return isinstance(value, dict) and any(str(k).lower() in _QUOTE_KEYS for k in value)


def _lists_in(value: Any, found: list[list[Any]], loose: list[Any]) -> str | None:
    """Collect the defect lists ``value`` gives (``found``) and its loose defect objects (``loose``);
    a reason when ``value`` states a list that is not one."""
    if isinstance(value, list):
        if all(isinstance(v, dict) for v in value):
            found.append(value)
        return None
    if not isinstance(value, dict):
        return None
    obj = _folded(value)
    if isinstance(obj, str):
        return obj
    keys = [k for k in _DEFECT_LIST_KEYS if k in obj]
    if keys:
        for k in keys:
            if not isinstance(obj[k], list):
                return f"{k!r} is not a list"
            found.append(obj[k])
        flag = obj.get("defective")
        if isinstance(flag, bool) and flag != bool(obj[keys[0]]):
            return f"'defective' is {str(flag).lower()} but {len(obj[keys[0]])} defects are listed"
        return None
    if _defect_like(obj):
        loose.append(value)
        return None
    for v in obj.values():
        if isinstance(v, dict) or (isinstance(v, list) and v and all(_defect_like(x) for x in v)):
            if (why := _lists_in(v, found, loose)) is not None:
                return why
    return None


def read_defects(text: str | None) -> ParseResult:
    """A defect list in any framing judges write: a JSON list of ``{"span", "reason", "citation"?}``
    (``[]``: no defect), or one under a key (``{"defects": [...]}``, the world form's framing; also
    ``issues``, nested objects), or loose defect objects one after another; in a code fence or among
    prose, with trailing commas or single quotes. Every list the reply gives must be the same list;
    truncated or malformed JSON, a defect without a quote or a reason, and no list are refused."""
    if not text or not text.strip():
        return _fail("empty response")
    values, problem = _json_values(text)
    if problem is not None:
        return _fail(problem)
    found: list[list[Any]] = []
    loose: list[Any] = []
    for value, _ in values:
        if (why := _lists_in(value, found, loose)) is not None:
            return _fail(why)
    if loose:
        found.append(loose)
    if not found:
        lists = any(isinstance(v, list) for v, _ in values)
        return _fail("a JSON list that is not of {span, reason} objects" if lists else "no JSON defect list found")
    read = [defect_list(items) for items in found]
    bad = next((r for r in read if isinstance(r, str)), None)
    if bad is not None:
        return _fail(bad)
    distinct = {json.dumps([d.model_dump() for d in r]) for r in read if not isinstance(r, str)}
    if len(distinct) > 1:
        return _fail(f"the reply gives {len(distinct)} different defect lists")
    return ParseResult(ok=True, defects=read[0])  # type: ignore[arg-type]

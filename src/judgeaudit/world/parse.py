"""Parsers for the world report forms (strict schema, tolerant framing).

The schema is strict: one JSON object with the form's key (``defective``, ``labels``,
``defect_ids``, ``score``) and values of the stated types. The framing is tolerant:
the object may sit in a code fence, after a restatement, or before trailing text; the first object
in the reply that carries the form's key is read. The ``defects`` form is read by the defect-list
reader every defects form shares (``judges.replies.read_defects``: ``{"defects": [...]}``, a bare
list, loose defect objects; every list the reply gives must agree). Anything else is a parse failure
(``ok=False`` with the reason), never a guess.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from judgeaudit.judges.elicit import ParseResult
from judgeaudit.judges.replies import read_defects
from judgeaudit.records import JudgeRequest

_KEYS = {"label": "defective", "sentences": "labels", "typed": "defect_ids", "score": "score",
         "defects": "defects"}


def find_object(text: str | None, key: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that has ``key`` (objects nested in others included)."""
    if not text:
        return None
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i >= 0:
        try:
            obj, _ = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and key in obj:
            return obj
        i = text.find("{", i + 1)
    return None


def _fail(error: str) -> ParseResult:
    return ParseResult(ok=False, error=error)


def parse(request: JudgeRequest, text: str | None) -> ParseResult:
    """Read a world reply for ``request`` (its form, and its units for ``sentences``/``typed``)."""
    form = request.form
    key = _KEYS[form]
    if not text or not text.strip():
        return _fail("empty response")
    if form == "defects":   # the defect-list reader of every defects form (judges.replies.read_defects)
        got = read_defects(text)
        return replace(got, label=bool(got.defects)) if got.ok else got
    obj = find_object(text, key)
    if obj is None:
        return _fail(f"no JSON object with {key!r} found")
    value = obj[key]
    if form == "label":
        if not isinstance(value, bool):
            return _fail("'defective' is not true or false")
        return ParseResult(ok=True, label=value)
    if form == "sentences":
        n = len(request.units or [])
        if not isinstance(value, list) or not all(isinstance(v, bool) for v in value):
            return _fail("'labels' is not a list of true/false")
        if len(value) != n:
            return _fail(f"'labels' has {len(value)} entries for {n} units")
        return ParseResult(ok=True, unit_labels=list(value), label=any(value))
    if form == "typed":
        allowed = set(request.units or [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return _fail("'defect_ids' is not a list of strings")
        unknown = sorted(set(value) - allowed)
        if unknown:
            return _fail(f"ids not among the allowed ids: {', '.join(unknown)}")
        ids = sorted(set(value))
        return ParseResult(ok=True, defect_ids=ids, label=bool(ids))
    if form == "score":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            return _fail("'score' is not a whole number from 1 to 5")
        return ParseResult(ok=True, score=float(value))
    raise ValueError(f"no world form {form!r}")

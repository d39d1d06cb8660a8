"""Graded replies: a whole number on the scale in every framing judges write (``[[7]]``, ``Score: 7``,
``{"score": 7}``, a leading number), refused when a statement is on another scale, a range or a decimal."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from judgeaudit.judges.replies.common import ParseResult, _BRACKETS_RE, _fail, _settle, _Statements, json_objects
from judgeaudit.judges.replies.passfail import read_pass_fail
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale


# A scale stated on the grade's line: "(out of 10)" or "(/10)" just after the grade, "(1-10)" just
# after it, "on a 1-5 scale", "on a scale of 1 to 10", "a 10-point scale".
_RANGE = r"(\d+)\s*(?:[-\u2013\u2014]|to\b)\s*(\d+)"
_STATED_SCALE_RE = re.compile(
    rf"{_RANGE}\s*(?:-?\s*points?\s+)?scale\b|\bscale\s+(?:of|from)\s+{_RANGE}|(\d+)\s*-?\s*points?\s+scale\b",
    re.IGNORECASE)
_AFTER_GRADE_SCALE_RE = re.compile(rf"\s*[(\[]\s*(?:(?:out\s+of|/)\s*(\d+)|{_RANGE})\s*[)\]]", re.IGNORECASE)
_LIST_NUMBER_RE = re.compile(r"\d{1,2}[.)][ \t]+\S")
# "Score:", "Rating =", "**Final score**:", "Score (1-9):", "Score：" (full-width colon)
_GRADE_LABEL_RE = re.compile(
    r"(?<![^\W_])(?:score|rating|grade)(?![^\W_])[\s*_]*(?:\(([^()\n]{0,20})\)[\s*_]*)?[:=\uff1a]", re.IGNORECASE)
_GRADE_KEYS = ("score", "rating", "grade")


@lru_cache(maxsize=64)
def _grade_re(top: int) -> re.Pattern[str]:
    """A whole number that is not the start of a decimal ("4.5", "4,5"), a range ("2-3", "2 to 3",
    "3 or 4") or a grade on another scale ("8/10", "8 out of 10"); "/top" and "out of top" state the
    scale's own top and are read."""
    return re.compile(
        rf"[\s*_\[]*(\d+)(?!\w|[.,]\d|\s*(?:[-\u2013\u2014]|to\b|or\b)\s*\d"
        rf"|\s*(?:/|out\s+of\b)\s*(?!{top}(?!\d))\d)", re.IGNORECASE)


def _own_scale(stated: tuple[int, ...], scale: Scale) -> bool:
    return stated in ((scale.min, scale.max), (scale.max,)) or \
        (scale.min == 0 and stated == (scale.max + 1,))


def _other_scale(text: str, at: int, scale: Scale) -> bool:
    """Whether the line of the grade at offset ``at`` states a scale other than ``scale``."""
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    end = len(text) if end < 0 else end
    digits = re.match(r"\d+", text[at:])
    tail = text[at + (digits.end() if digits else 1): end]
    stated = [tuple(int(g) for g in m.groups() if g is not None) for m in _STATED_SCALE_RE.finditer(text[start:end])]
    m = _AFTER_GRADE_SCALE_RE.match(tail)
    if m:
        stated.append(tuple(int(g) for g in m.groups() if g is not None))
    return any(not _own_scale(s, scale) for s in stated)


def _list_number(text: str, at: int) -> bool:
    """Whether the digit at ``at`` opens a line as a list number ("1. The claim ...")."""
    return not text[text.rfind("\n", 0, at) + 1: at].strip(" \t*") and bool(_LIST_NUMBER_RE.match(text, at))


def _grade_at(text: str, pos: int, scale: Scale, st: _Statements, kind: str) -> bool:
    """Read a grade starting at ``pos`` into ``st``; False when there is no whole number there."""
    m = _grade_re(scale.max).match(text, pos)
    if not m:
        return False
    at, value = m.start(1), int(m.group(1))
    if _other_scale(text, at, scale):
        st.refuse("a grade on another scale")
    elif _list_number(text, at):
        st.refuse("a list number, not a score")
    elif not scale.contains(value):
        st.refuse(f"{value} is not on the {scale.label()} scale")
    else:
        st.add(value, at, kind)
    return True


def _number_problem(body: str, scale: Scale) -> str | None:
    """Why a bracketed or JSON string that starts with a digit is not a grade on ``scale``."""
    if re.fullmatch(r"\d+\s*(?:[-\u2013\u2014]|to|or)\s*\d+", body):
        return f"a range ({body}), not one grade"
    if re.fullmatch(r"\d+[.,]\d+", body):
        return f"a decimal ({body}) on the integer {scale.label()} scale"
    if re.fullmatch(r"\d+\s*(?:/|out\s+of)\s*\d+", body, re.IGNORECASE):
        return f"{body}: a grade on another scale"
    return f"[[{body}]] is not a whole number"


def _bracket_grades(text: str, scale: Scale, st: _Statements) -> None:
    for m in _BRACKETS_RE.finditer(text):
        body = m.group(1)
        if not body[:1].isdigit():
            continue
        top = re.fullmatch(r"(\d+)\s*(?:/|out of)\s*(\d+)", body)
        if re.fullmatch(r"\d+", body) or (top and int(top.group(2)) == scale.max):
            value = int(top.group(1) if top else body)
            if scale.contains(value):
                st.add(value, m.start(1), "brackets")
            else:
                st.refuse(f"[[{body}]] is not on the {scale.label()} scale")
        else:
            st.refuse(_number_problem(body, scale))


_SINGLE_BRACKET_RE = re.compile(r"(?<!\[)\[\s*([^\[\]\n]{0,20}?)\s*\](?!\])")


def _single_bracket_grades(text: str, scale: Scale, st: _Statements) -> None:
    """MT-Bench's backup framing ``Rating: [8]`` (FastChat reads it when no ``[[N]]`` is present)."""
    for m in _SINGLE_BRACKET_RE.finditer(text):
        if m.group(1)[:1].isdigit():
            _json_grade(m.group(1), m.start(1), scale, st)


def _label_grades(text: str, scale: Scale, st: _Statements) -> None:
    for m in _GRADE_LABEL_RE.finditer(text):
        inside = m.group(1)
        if inside is not None:
            r = re.fullmatch(r"\s*(\d+)\s*(?:[-\u2013\u2014]|to)\s*(\d+)\s*", inside) or \
                re.fullmatch(r"\s*(?:out of|/)\s*(\d+)\s*", inside)
            if r and not _own_scale(tuple(int(g) for g in r.groups()), scale):
                st.refuse("a grade on another scale")
                continue
        if not _grade_at(text, m.end(), scale, st, "label"):
            st.refuse(f"a score label not followed by a whole number on the {scale.label()} scale")


_OWN_TOP_RE = re.compile(r"\s*(\d+)\s*(?:/|out\s+of)\s*(\d+)\s*", re.IGNORECASE)


def _json_grade(value: Any, at: int, scale: Scale, st: _Statements) -> None:
    if isinstance(value, bool) or value is None:
        st.refuse("a JSON score that is not a number")
    elif isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        if scale.contains(int(value)):
            st.add(int(value), at, "json")
        else:
            st.refuse(f"{value:g} is not on the {scale.label()} scale")
    elif isinstance(value, float):
        st.refuse(f"a decimal ({value:g}) on the integer {scale.label()} scale")
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        _json_grade(int(value), at, scale, st)
    elif isinstance(value, str) and (m := _OWN_TOP_RE.fullmatch(value)) and int(m.group(2)) == scale.max:
        _json_grade(int(m.group(1)), at, scale, st)
    elif isinstance(value, str) and value.strip()[:1].isdigit():
        st.refuse(_number_problem(value.strip(), scale))
    else:
        st.refuse("a JSON score that is not a number")


def _json_grades(text: str, scale: Scale, st: _Statements) -> None:
    for obj, at in json_objects(text):
        for key, value in obj.items():
            if isinstance(key, str) and key.lower() in _GRADE_KEYS:
                vat = text.find(json.dumps(value) if not isinstance(value, str) else value, at)
                _json_grade(value, vat if vat >= 0 else at, scale, st)


def read_graded(text: str | None, scale: Scale = OVERREACH_SCALE, *,
                framings: tuple[str, ...] = ("brackets", "label", "json", "leading")) -> ParseResult:
    """A grade on ``scale`` from every framing in ``framings``.

    ``brackets``: ``[[7]]`` (also after ``Rating:``); ``label``: ``Score: 7``, ``Rating = 7``,
    ``Score (1-9): 7``, ``Score：7``; ``json``: ``{"score": 7}`` (keys score, rating, grade);
    ``single-bracket``: ``Rating: [7]`` (MT-Bench's backup, read only when no other framing is present);
    ``leading``: a reply that opens with a lone whole number (read only when no other framing is
    present). All statements must name the same whole number on the scale.
    """
    if scale.pass_fail:
        return read_pass_fail(text, scale)
    if not text or not text.strip():
        return _fail("empty response")
    st = _Statements()
    if "brackets" in framings:
        _bracket_grades(text, scale, st)
    if "label" in framings:
        _label_grades(text, scale, st)
    if "json" in framings:
        _json_grades(text, scale, st)
    if not st.values and not st.problem and "single-bracket" in framings:
        _single_bracket_grades(text, scale, st)
    if not st.values and not st.problem and "leading" in framings:
        _grade_at(text, 0, scale, st, "leading")
    if not st.values and not st.problem:
        return _fail(f"no whole number on the {scale.label()} scale found")
    got = _settle(st, "scores")
    if isinstance(got, str):
        return _fail(got)
    value, at = got
    return ParseResult(ok=True, score=float(value), score_at=at)

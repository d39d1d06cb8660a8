"""The named reply formats a template may declare (``FORMATS``): each reads only its own framing (``auto``
reads every framing of its form); ``json`` reads the value at a JSON path, ``regex`` a named group of the
template's pattern, each value checked as stated."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from judgeaudit.judges import userpattern
from judgeaudit.judges.replies.common import ParseResult, _fail, _settle, _Statements, json_objects, json_path
from judgeaudit.judges.replies.defects import read_defects
from judgeaudit.judges.replies.graded import _json_grade, read_graded
from judgeaudit.judges.replies.pairwise import _CHOICE_RE, _choice, read_pairwise
from judgeaudit.judges.replies.passfail import read_pass_fail
from judgeaudit.judges.scale import Scale


def _value_for(form: str, raw: Any, at: int, scale: Scale, choices: dict[str, str] | None) -> ParseResult:
    """A value read by a JSON path or a regex group, as a verdict of ``form`` on ``scale``."""
    if form == "pairwise":
        word = str(raw).strip() if raw is not None else ""
        word = (choices or {}).get(word, word)
        m = _CHOICE_RE.fullmatch(word)
        if not m:
            return _fail(f"{word!r} is not A, B or tie")
        return ParseResult(ok=True, choice=_choice(m.group(1)))
    if scale.pass_fail:
        if isinstance(raw, bool):
            return ParseResult(ok=True, score=float(raw), score_at=at)
        word = (choices or {}).get(str(raw).strip(), str(raw).strip())
        return read_pass_fail(word)
    st = _Statements()
    if isinstance(raw, str) and choices and raw.strip() in choices:
        raw = choices[raw.strip()]
    _json_grade(raw, at, scale, st)
    got = _settle(st, "scores") if st.values or st.problem else "no grade"
    if isinstance(got, str):
        return _fail(got)
    return ParseResult(ok=True, score=float(got[0]), score_at=got[1])


def read_json_path(text: str | None, form: str, scale: Scale, path: str,
                   choices: dict[str, str] | None = None) -> ParseResult:
    """The value at ``path`` in the first JSON object of the reply that has it."""
    if not text or not text.strip():
        return _fail("empty response")
    for obj, at in json_objects(text):
        found, value = json_path(obj, path)
        if found:
            vat = text.find(str(value), at) if not isinstance(value, (dict, list)) else at
            return _value_for(form, value, vat if vat >= 0 else at, scale, choices)
    return _fail(f"no JSON object with {path} found")


# What may follow a captured grade and change what it says: a decimal part ("3.5"), a range ("3-4",
# "3 to 4", "3 or 4") or a scale ("4/10", "2 out of 10").
_GRADE_QUALIFIER_RE = re.compile(
    r"(?:[.,]\d+|\s*(?:[-\u2013\u2014]|to\b|or\b)\s*\d+|\s*(?:/|out\s+of\b)\s*\d+)", re.IGNORECASE)
# A second choice offered beside a captured one: "A or B", "Output (a) or Output (b)", "A/B", "A and B".
_ALTERNATIVE_RE = re.compile(
    r"""[\s)\]*_"'`]*(?:\bor\b|\band\b|\bvs\.?|\bversus\b|/|,|&)[\s(\[*_"'`]*"""
    r"""(?:(?:output|response|assistant)\b[\s(\[*_"'`]*)?([A-Za-z]+)\b""", re.IGNORECASE)


def captured_value(text: str, start: int, end: int, form: str) -> str:
    """The value a pattern captured at ``text[start:end]`` with what follows it and qualifies it: a
    grade's decimal part, range or scale ("4/10"), so that the value is checked as stated, whichever
    pattern captured it."""
    value = text[start:end]
    if form != "pairwise" and value[-1:].isdigit():
        m = _GRADE_QUALIFIER_RE.match(text, end)
        if m:
            value += m.group(0)
    return value


def other_choice(text: str, end: int, choice: str, choices: dict[str, str] | None) -> str | None:
    """A different choice offered just after a captured one ("A or B", "Output (a) or Output (b)")."""
    m = _ALTERNATIVE_RE.match(text, end)
    if not m:
        return None
    word = (choices or {}).get(m.group(1), m.group(1))
    alt = _CHOICE_RE.fullmatch(word)
    if alt and _choice(alt.group(1)) != choice:
        return _choice(alt.group(1))
    return None


def _regex_verdict(text: str, m: re.Match[str], group: str, form: str, scale: Scale,
                   choices: dict[str, str] | None) -> ParseResult:
    raw = captured_value(text, m.start(group), m.end(group), form)
    r = _value_for(form, raw, m.start(group), scale, choices)
    if r.ok and form == "pairwise" and r.choice is not None:
        alt = other_choice(text, m.end(group), r.choice, choices)
        if alt is not None:
            return _fail(f"the reply offers both {r.choice} and {alt}")
    return r


def read_regex(text: str | None, form: str, scale: Scale, pattern: str,
               choices: dict[str, str] | None = None) -> ParseResult:
    """The named group of ``pattern`` (``score``, ``choice`` or ``verdict``): every match must agree.
    Each captured value is checked as stated (``captured_value``, ``other_choice``): a grade on another
    scale, a range, a decimal on an integer scale or both choices is refused, as in every other framing."""
    if not text or not text.strip():
        return _fail("empty response")
    rx = userpattern.compile_pattern(pattern)
    group = next(g for g in ("score", "choice", "verdict") if g in rx.groupindex)
    try:
        matches = userpattern.finditer(rx, text)
    except userpattern.PatternTimeout as e:
        return _fail(f"the template's pattern is unreadable on this reply: {e}")
    results = [(_regex_verdict(text, m, group, form, scale, choices), m) for m in matches]
    if not results:
        return _fail(f"the reply does not match the template's pattern {pattern!r}")
    bad = next((r for r, _ in results if not r.ok), None)
    if bad is not None:
        return bad
    distinct = {(r.score, r.choice) for r, _ in results}
    if len(distinct) > 1:
        return _fail("the pattern matched conflicting verdicts")
    first, m = results[0]
    rationale = text[: m.start()].strip() or None
    return ParseResult(ok=True, score=first.score, score_at=first.score_at, choice=first.choice,
                       rationale=rationale if form == "pairwise" else None)


Reader = Callable[[str | None, str, Scale, dict[str, Any]], ParseResult]


def _auto(text: str | None, form: str, scale: Scale, opts: dict[str, Any]) -> ParseResult:
    if form == "pairwise":
        return read_pairwise(text)
    if form == "defects":
        return read_defects(text)
    if form == "generate":
        ok = bool(text and text.strip())
        return ParseResult(ok=ok, error=None if ok else "empty response")
    return read_graded(text, scale)


FORMATS: dict[str, tuple[tuple[str, ...], Reader, str]] = {
    "auto": (("graded", "pairwise", "defects", "generate"), _auto, "every framing of the form (the default)"),
    "[[rating]]": (("graded",), lambda t, f, s, o: read_graded(t, s, framings=("brackets", "single-bracket")),
                   "MT-Bench single-answer: 'Rating: [[7]]' (or FastChat's backup 'Rating: [7]')"),
    "Score: N": (("graded",), lambda t, f, s, o: read_graded(t, s, framings=("label",)),
                 "a 'Score: N' (or 'Rating: N') label"),
    "[[A]]/[[B]]/[[C]]": (("pairwise",), lambda t, f, s, o: read_pairwise(t, framings=("brackets",)),
                          "MT-Bench pairwise: [[A]], [[B]], [[C]] (C a tie)"),
    "[[A>B]]": (("pairwise",), lambda t, f, s, o: read_pairwise(t, framings=("five-way",)),
                "Arena-Hard five-way: [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]"),
    "Verdict: A": (("pairwise",), lambda t, f, s, o: read_pairwise(t, framings=("label",)),
                   "a 'Verdict: A|B|tie' line"),
    "pass/fail": (("graded",), lambda t, f, s, o: read_pass_fail(t), "PASS or FAIL (1 and 0)"),
    "json": (("graded", "pairwise"), lambda t, f, s, o: read_json_path(t, f, s, o["path"], o.get("choices")),
             "the value at a JSON path (path: $.score)"),
    "regex": (("graded", "pairwise"), lambda t, f, s, o: read_regex(t, f, s, o["pattern"], o.get("choices")),
              "a regular expression with a named group score, choice or verdict"),
    "defects-json": (("defects",), lambda t, f, s, o: read_defects(t), "a JSON list of {span, reason}"),
}
"""Named reply format -> (forms it reads, reader, one-line help)."""

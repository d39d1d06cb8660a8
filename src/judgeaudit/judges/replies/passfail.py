"""Pass/fail replies: ``[[PASS]]``, ``Verdict: FAIL``, ``{"verdict": "pass"}`` or a reply that opens with the
word; pass is 1, fail 0."""

from __future__ import annotations

import re

from judgeaudit.judges.replies.common import ParseResult, _BRACKETS_RE, _fail, _settle, _Statements, json_objects
from judgeaudit.judges.scale import Scale


_PASS_FAIL_RE = re.compile(r"\b(pass(?:ed|es)?|fail(?:ed|s)?)\b", re.IGNORECASE)
_PF_LABEL_RE = re.compile(r"\b(?:verdict|result|grade|score|answer|decision)\b[\s*_]*[:=\uff1a][\s*_\[\"'`]*",
                          re.IGNORECASE)


def _pf_value(word: str) -> int:
    return 1 if word.lower().startswith("pass") else 0


def read_pass_fail(text: str | None, scale: Scale | None = None) -> ParseResult:
    """A pass/fail verdict: ``[[PASS]]``, ``Verdict: FAIL``, ``{"verdict": "pass"}`` or a reply that
    opens with the word; pass is 1, fail 0."""
    if not text or not text.strip():
        return _fail("empty response")
    st = _Statements()
    for m in _BRACKETS_RE.finditer(text):
        w = m.group(1)
        if _PASS_FAIL_RE.fullmatch(w):
            st.add(_pf_value(w), m.start(1), "brackets")
    for m in _PF_LABEL_RE.finditer(text):
        w = _PASS_FAIL_RE.match(text, m.end())
        if w:
            st.add(_pf_value(w.group(1)), w.start(1), "label")
    for obj, at in json_objects(text):
        for key, value in obj.items():
            if str(key).lower() in ("verdict", "result", "pass", "passed", "score", "grade"):
                if isinstance(value, bool) and str(key).lower() in ("pass", "passed"):
                    st.add(int(value), at, "json")
                elif isinstance(value, str) and _PASS_FAIL_RE.fullmatch(value.strip()):
                    st.add(_pf_value(value.strip()), at, "json")
    if not st.values and not st.problem:
        m = re.match(r"[\s*_\[\"'`]*(pass(?:ed)?|fail(?:ed)?)\b", text, re.IGNORECASE)
        if m:
            st.add(_pf_value(m.group(1)), m.start(1), "leading")
    if not st.values and not st.problem:
        return _fail("no pass or fail verdict found")
    got = _settle(st, "verdicts")
    if isinstance(got, str):
        return _fail(got)
    value, at = got
    return ParseResult(ok=True, score=float(value), score_at=at, stated="pass" if value else "fail")

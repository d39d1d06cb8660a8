"""Reading what judges write: the reply formats of graded, pass/fail and pairwise verdicts.

Judges state a verdict in many framings: ``Score: 7``, ``Rating: [[7]]`` (MT-Bench), ``[[A]]`` /
``[[B]]`` / ``[[C]]`` (MT-Bench pairwise, C a tie), ``[[A>>B]]`` … ``[[B>>A]]`` (Arena-Hard's five
labels), ``{"score": 7}``, ``Verdict: A``, a full-width colon, markdown bold, an explanation after
the verdict that mentions other numbers. Every framing found is a *statement*; a reply is read when
all its statements name one value on the scale, and refused (``ok=False`` with the reason) when a
statement is ambiguous (another scale, a range, a decimal on an integer scale) or two statements
disagree (two different bracketed ratings, both letters). A refused reply is counted as a parse
failure, never guessed.

The readers take the scale as a parameter (``judges.scale.Scale``: any integer range, or pass/fail).
Each named format (``FORMATS``) reads only its own framing; ``auto`` reads every framing of its form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from judgeaudit.judges import userpattern
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale
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


# ----------------------------------------------------------------------------- graded

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
_BRACKETS_RE = re.compile(r"\[\[\s*([^\[\]\n]{0,20}?)\s*\]\]")
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


def _settle(st: _Statements, what: str) -> tuple[Any, int] | str:
    """The one value the statements agree on and the offset of the first, or why there is none."""
    if st.problem:
        return st.problem
    distinct = sorted({v for v, _, _ in st.values}, key=str)
    if len(distinct) > 1:
        return f"conflicting {what} {[str(v) for v in distinct]}"
    first = min(st.values, key=lambda s: s[1])
    return first[0], first[1]


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


# ----------------------------------------------------------------------------- pairwise

# A and B are matched case-sensitively as whole words ("a" is the English article; a lower-case "b"
# is refused as well so neither side gains from a lenient spelling), "tie" in any case.
_VERDICT_LABEL_RE = re.compile(r"(?<![^\W_])(?:verdict|winner)(?![^\W_])[\s*_]*[:=\uff1a]", re.IGNORECASE)
_CHOICE_RE = re.compile(r"""[\s*_"'`\[(]*(?:(?i:response|assistant)\s+[*_"'`\[(]*)?(A|B|(?i:tie))(?!\w)""")
_NAMED_RE = re.compile(r"\b(A|B|(?i:tie))\b")
_FIVE_WAY_RE = re.compile(r"\[\[\s*([AB])\s*(>>|>|=|<<|<)\s*([AB])\s*\]\]")
_CHOICE_BRACKETS_RE = re.compile(r"\[\[\s*(A|B|C|(?i:tie))\s*\]\]")
_CHOICE_KEYS = ("verdict", "winner", "choice", "preference", "better", "better_response")


def _choice(word: str) -> str:
    return "tie" if word.lower() in ("tie", "c") else word


def _five_way(left: str, op: str, right: str) -> tuple[str, int] | None:
    if left == right:
        return None
    if op == "=":
        return "tie", 0
    strength = 2 if len(op) == 2 else 1
    return (left if op.startswith(">") else right), strength


def _five_way_statements(text: str, st: _Statements) -> list[int]:
    strengths = []
    for m in _FIVE_WAY_RE.finditer(text):
        got = _five_way(*m.groups())
        if got is None:
            st.refuse(f"[[{''.join(m.groups())}]] compares a response with itself")
            continue
        st.add(got[0], m.start(), "five-way")
        strengths.append(got[1])
    return strengths


def _choice_bracket_statements(text: str, st: _Statements) -> None:
    for m in _CHOICE_BRACKETS_RE.finditer(text):
        st.add(_choice(m.group(1)), m.start(), "brackets")


def _verdict_label_statement(text: str, st: _Statements) -> None:
    labels = list(_VERDICT_LABEL_RE.finditer(text))
    if not labels:
        return
    last = labels[-1]
    rest = text[last.end():].lstrip(" \t*_")
    rest = rest.lstrip("\n") if rest.startswith("\n") else rest
    line = rest.split("\n", 1)[0]
    if _FIVE_WAY_RE.match(line.strip(" *_")) or _CHOICE_BRACKETS_RE.match(line.strip(" *_")):
        return   # the bracket readers read it
    m = _CHOICE_RE.match(line)
    if not m:
        st.refuse("the verdict line does not name A, B or tie")
        return
    choice = _choice(m.group(1))
    others = {_choice(w) for w in _NAMED_RE.findall(line[m.end():])} - {choice}
    if others:
        st.refuse(f"the verdict line names {choice} and {', '.join(sorted(others))}")
        return
    st.add(choice, last.start(), "label")


def _json_choice(text: str, st: _Statements) -> None:
    for obj, at in json_objects(text):
        for key, value in obj.items():
            if str(key).lower() not in _CHOICE_KEYS:
                continue
            m = _CHOICE_RE.fullmatch(value.strip()) if isinstance(value, str) else None
            if m:
                st.add(_choice(m.group(1)), at, "json")
            else:
                st.refuse(f"the JSON {key!r} is not A, B or tie")


def _lone_letter(text: str, st: _Statements) -> None:
    m = re.fullmatch(r"""[\s*_"'`\[(]*(A|B|(?i:tie))[\s*_"'`\])]*\.?\s*""", text)
    if m:
        st.add(_choice(m.group(1)), m.start(1), "leading")


def read_pairwise(text: str | None, *,
                  framings: tuple[str, ...] = ("five-way", "brackets", "label", "json", "leading")) -> ParseResult:
    """A pairwise choice (A, B or tie) from every framing in ``framings``.

    ``five-way``: Arena-Hard's ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]`` (the
    choice with its strength 2, 1 or 0); ``brackets``: MT-Bench's ``[[A]]``, ``[[B]]``, ``[[C]]`` (C is
    a tie); ``label``: the last ``Verdict:`` (or ``Winner:``) line, its choice on that line or the next;
    ``json``: ``{"verdict": "A"}`` (keys verdict, winner, choice, preference); ``leading``: a reply
    that is one letter. All statements must name one choice. The text before the first statement is
    the rationale.
    """
    if not text or not text.strip():
        return _fail("empty response")
    st = _Statements()
    strengths = _five_way_statements(text, st) if "five-way" in framings else []
    if "brackets" in framings:
        _choice_bracket_statements(text, st)
    if "label" in framings:
        _verdict_label_statement(text, st)
    if "json" in framings:
        _json_choice(text, st)
    if not st.values and not st.problem and "leading" in framings:
        _lone_letter(text, st)
    first = min((at for _, at, _ in st.values), default=len(text))
    rationale = text[:first].rstrip(" \t*_#[").strip() or None
    if not st.values and not st.problem:
        return _fail("no 'Verdict: A|B|tie' found", rationale=text.strip())
    if st.problem:
        return _fail(st.problem, rationale=rationale)
    distinct = sorted({v for v, _, _ in st.values})
    if len(distinct) > 1:
        return _fail(f"the reply names {' and '.join(distinct)}", rationale=rationale)
    if len(set(strengths)) > 1:
        return _fail("conflicting five-way strengths", rationale=rationale)
    strength = strengths[0] if strengths else None
    return ParseResult(ok=True, choice=distinct[0], rationale=rationale, strength=strength)


# ----------------------------------------------------------------------------- defects

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


# ----------------------------------------------------------------------------- named formats

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

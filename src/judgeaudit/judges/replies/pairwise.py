"""Pairwise replies: A, B or a tie in every framing judges write (``[[A]]``/``[[B]]``/``[[C]]``, Arena-Hard's
five-way ``[[A>>B]]`` … ``[[B>>A]]``, ``Verdict: A``, ``{"winner": "B"}``, a lone letter)."""

from __future__ import annotations

import re

from judgeaudit.judges.replies.common import ParseResult, _fail, _Statements, json_objects


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

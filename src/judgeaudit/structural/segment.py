"""Sentence segmentation for the entailment graph: a documented regex splitter.

The splitter (no model, no download; deterministic):

* a boundary is ``.``, ``!`` or ``?`` (with any closing quotes or brackets) followed by whitespace
  and then an upper-case letter, a digit, or an opening quote/bracket; a line break also ends a
  sentence;
* a full stop glued to the next sentence (``century.First``: lower-case letter, ``.``, an
  upper-case letter then a lower-case one) is a boundary too — HaluEval's knowledge fields join
  passages this way;
* no boundary after a known abbreviation (``Dr.``, ``e.g.``, ``U.S.``, ``Inc.``, month names, ...)
  or a single capital initial (``J. Smith``);
* pieces are stripped; empty pieces are dropped.

``sentences`` returns the texts; ``sentence_spans`` the ``(start, end)`` character offsets.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset("""
mr mrs ms dr prof sr jr st mt vs etc e.g i.e cf al fig no vol pp ed eds approx est dept univ
inc ltd co corp u.s u.k u.n a.m p.m jan feb mar apr jun jul aug sep sept oct nov dec gen col lt sgt
""".split())

_BOUNDARY = re.compile(r"""[.!?]+["'”’)\]]*(?=\s+["'“‘(\[]?[A-Z0-9])|(?<=[a-z])\.(?=[A-Z][a-z])|\n+""")
_LAST_WORD = re.compile(r"(\S+)$")


def _is_abbreviation(piece: str) -> bool:
    m = _LAST_WORD.search(piece)
    if not m:
        return False
    word = m.group(1).rstrip(".").lower().lstrip("(\"'“‘")
    if re.fullmatch(r"[a-z]", word):       # an initial: "J." in "J. Smith"
        return True
    return word in ABBREVIATIONS


def sentence_spans(text: str | None) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the sentences of ``text`` (see the module rules)."""
    if not text:
        return []
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end() if m.group().strip() else m.start()
        piece = text[start:end]
        if m.group().startswith(".") and m.group().strip() and _is_abbreviation(piece):
            continue
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        seg = seg.strip()
        if seg:
            out.append((s + lead, s + lead + len(seg)))
    return out


def sentences(text: str | None) -> list[str]:
    """The sentences of ``text`` (empty list for None or blank text)."""
    return [text[s:e] for s, e in sentence_spans(text)] if text else []

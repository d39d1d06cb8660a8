"""Validation of the span-quoting ``basis`` field (construct-validity.txt Appendix C,
"Two requirements on any span-quoting field").

1. Typography is normalised on both sides before comparing: Unicode NFKC, every hyphen and dash
   (non-breaking hyphen, figure dash, en/em dash, minus) to ``-``, curly single quotes and primes to
   ``'``, curly double quotes to ``"``, non-breaking and other spaces to a space, zero-width
   characters and soft hyphens removed, whitespace runs collapsed, case folded.
2. More than one span is accepted. Spans are separated by a newline, by an ellipsis (``...`` or
   ``…``, with or without surrounding spaces) or by ``[...]``. Each span may be wrapped in quotes
   (they are stripped), must be at least 2 characters long after normalisation, and must occur
   in the sentence the annotator says overreaches. The spans need not be contiguous or in order.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_MAP = {
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d"), "-"),
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u2035\u0060\u00b4"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb"), '"'),
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2009\u200a\u2002\u2003\u3000"), " "),
    **dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None),
}
_SEPARATOR = re.compile(r"\s*(?:\n|\[\s*(?:\.\.\.|…)\s*\]|\.{3,}|…)\s*")
_QUOTES = "\"'"
MIN_SPAN_CHARS = 2


def normalise(text: str) -> str:
    """Typography-insensitive form of a text: the comparison both sides go through."""
    t = unicodedata.normalize("NFKC", text).translate(_MAP)
    return re.sub(r"\s+", " ", t).strip().casefold()


def split_spans(basis: str) -> list[str]:
    """The spans quoted in a basis field (separators: newline, ``...``, ``…``, ``[...]``)."""
    raw = unicodedata.normalize("NFKC", basis.replace("\r\n", "\n").replace("\r", "\n"))
    spans = []
    for part in _SEPARATOR.split(raw):
        s = normalise(part).strip(_QUOTES + " ")
        if s:
            spans.append(s)
    return spans


@dataclass(frozen=True)
class BasisCheck:
    ok: bool
    spans: tuple[str, ...]
    missing: tuple[str, ...]
    message: str


def check_basis(basis: str, text: str) -> BasisCheck:
    """Whether every span quoted in ``basis`` occurs in ``text`` (after normalising both)."""
    spans = split_spans(basis or "")
    if not spans:
        return BasisCheck(False, (), (), "quote the span(s) of the chosen sentence that exceed the evidence")
    short = [s for s in spans if len(s) < MIN_SPAN_CHARS]
    if short:
        return BasisCheck(False, tuple(spans), tuple(short),
                          f"each quoted span needs at least {MIN_SPAN_CHARS} characters: {short[0]!r}")
    hay = normalise(text)
    missing = tuple(s for s in spans if s not in hay)
    if missing:
        return BasisCheck(False, tuple(spans), missing,
                          f"not found in the chosen sentence: {missing[0]!r} (separate several spans with a "
                          "new line or ' ... ')")
    return BasisCheck(True, tuple(spans), (), "ok")

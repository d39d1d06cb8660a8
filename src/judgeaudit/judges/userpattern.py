"""Regular expressions written by users (a template's ``{regex: ...}`` parser), run with a time limit.

A pattern comes from a file someone else may have written; one with catastrophic backtracking
(``(a+)+$``) takes exponential time on a reply that almost matches. Patterns are compiled and run by
the ``regex`` package, whose matching functions take a ``timeout``: a reply that a pattern cannot read
within ``REPLY_TIMEOUT`` seconds is a parse failure, never a stalled run. ``check`` refuses, when the
template is loaded (before any call), a pattern that does not finish within ``PROBE_TIMEOUT`` seconds
on short probe strings built from its own characters (runs of one character, a few dozen and a
thousand long, with and without a character that breaks the match at the end, after nothing and after
the text the pattern opens with).
"""

from __future__ import annotations

from functools import lru_cache

import regex

REPLY_TIMEOUT = 2.0
"""Seconds a user pattern may spend on one reply."""
PROBE_TIMEOUT = 0.5
"""Seconds a user pattern may spend on one probe string when its template is loaded."""
_PROBE_LENGTHS = (40, 1000)
_PROBE_CHARS = "a1 A.\n[]:*"
_FLAGS_RE = regex.compile(r"\(\?[a-zA-Z]+\)")
_LITERAL_RE = regex.compile(r"(?:[^\\()\[\]{}.*+?^$|]|\\[^A-Za-z0-9])*")


class PatternTimeout(Exception):
    """A user pattern that did not finish within its time limit."""


@lru_cache(maxsize=128)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled (the ``re`` syntax; ``regex.error`` when it does not compile)."""
    return regex.compile(pattern)


def finditer(rx: regex.Pattern[str], text: str, timeout: float = REPLY_TIMEOUT) -> list[regex.Match[str]]:
    """Every match of ``rx`` in ``text``; ``PatternTimeout`` when that takes over ``timeout`` seconds."""
    try:
        return list(rx.finditer(text, timeout=timeout))
    except TimeoutError:
        raise PatternTimeout(f"the pattern took over {timeout:g} s on a reply of {len(text):,} characters") from None


def _leading_literal(pattern: str) -> str:
    """The text every match of ``pattern`` starts with (its literal opening, escapes resolved; after inline flags)."""
    rest = pattern
    while (m := _FLAGS_RE.match(rest)) is not None:
        rest = rest[m.end():]
    literal = _LITERAL_RE.match(rest).group()   # type: ignore[union-attr]
    if literal and rest[len(literal):len(literal) + 1] in ("*", "+", "?", "{"):
        literal = literal[:-1]   # the last character is repeated: not part of a fixed opening
    return regex.sub(r"\\(.)", r"\1", literal)


def _probes(pattern: str) -> list[str]:
    """Runs of one character (each of a few common ones and of the pattern's own), short and long, with
    and without a character that breaks a match at the end, after nothing and after the pattern's opening."""
    chars = list(dict.fromkeys(_PROBE_CHARS + "".join(c for c in pattern if c.isprintable())))
    starts = list(dict.fromkeys(("", _leading_literal(pattern))))
    return [start + c * n + end for n in _PROBE_LENGTHS for start in starts for c in chars for end in ("\x00", "")]


def check(pattern: str) -> None:
    """Refuse (ValueError) a pattern that does not compile or that takes over ``PROBE_TIMEOUT`` seconds
    on a short probe string."""
    try:
        rx = compile_pattern(pattern)
    except regex.error as e:
        raise ValueError(f"the regex does not compile ({e})") from None
    for probe in _probes(pattern):
        try:
            finditer(rx, probe, timeout=PROBE_TIMEOUT)
        except PatternTimeout:
            shown = probe[:12].encode("unicode_escape").decode()
            raise ValueError(f"the regex takes over {PROBE_TIMEOUT:g} s on a probe of {len(probe):,} characters "
                             f"({shown}…): it backtracks catastrophically; rewrite it without nested "
                             "repeats") from None

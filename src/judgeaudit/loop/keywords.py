"""The keyword table that maps a free-text complaint to IFEval constraint ids (blind-spot §8: "an
automatic keyword table"). It is part of every result (``result.json['keyword_table']``).

A complaint maps to each of its response's constraints whose type has a keyword occurring in the
complaint as words (lower-cased): a keyword matches where it is neither preceded nor followed by a
letter or digit (a keyword's edge that is punctuation, "[" or "<<", needs no boundary), an
inflectional ending (``INFLECTIONS``: "commas", "capitalized", "highlighted") allowed after it, so "no" matches "no" but not "not", "know" or "none" (judgeaudit's own rule; the
paper names the table, not its matching). On a one-unit task (GSM8K, HaluEval QA) every complaint
maps to ``answer``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

KEYWORDS: dict[str, tuple[str, ...]] = {
    "keywords:existence": ("keyword", "include the word", "mention", "missing the word"),
    "keywords:frequency": ("keyword", "times", "frequency", "occurrence"),
    "keywords:forbidden_words": ("forbidden", "must not use", "should not use", "avoid the word", "banned"),
    "keywords:letter_frequency": ("letter", "frequency"),
    "language:response_language": ("language", "english", "in the language"),
    "length_constraints:number_sentences": ("sentence",),
    "length_constraints:number_paragraphs": ("paragraph", "***", "divider"),
    "length_constraints:number_words": ("word count", "words", "length", "too long", "too short"),
    "length_constraints:nth_paragraph_first_word": ("paragraph", "first word", "start with"),
    "detectable_content:number_placeholders": ("placeholder", "square bracket", "[", "bracket"),
    "detectable_content:postscript": ("postscript", "p.s", "p.p.s"),
    "detectable_format:number_bullet_lists": ("bullet", "list"),
    "detectable_format:constrained_response": ("my answer is", "options", "yes", "no", "maybe"),
    "detectable_format:number_highlighted_sections": ("highlight", "markdown", "italic", "bold"),
    "detectable_format:multiple_sections": ("section",),
    "detectable_format:json_format": ("json",),
    "detectable_format:title": ("title", "<<", "double angular"),
    "combination:two_responses": ("two responses", "two different", "******", "separated by"),
    "combination:repeat_prompt": ("repeat", "verbatim", "the request"),
    "startend:end_checker": ("end with", "ending", "final phrase", "end your response"),
    "change_case:capital_word_frequency": ("capital", "all caps", "uppercase", "upper case"),
    "change_case:english_capital": ("capital", "all caps", "uppercase", "upper case"),
    "change_case:english_lowercase": ("lowercase", "lower case", "capital", "uppercase"),
    "punctuation:no_comma": ("comma",),
    "startend:quotation": ("quotation", "quote", "double quote", "wrapped in"),
}


INFLECTIONS = ("s", "es", "d", "ed", "ing", "ized", "ised", "ization", "isation")
"""Endings a keyword may carry and still match (plurals, participles, -ize/-ise forms)."""


@cache
def _pattern(keyword: str) -> re.Pattern[str]:
    word = re.compile(r"[^\W_]")
    head = r"(?<![^\W_])" if word.match(keyword[0]) else ""
    tail = rf"(?:{'|'.join(INFLECTIONS)})?(?![^\W_])" if word.match(keyword[-1]) else ""
    return re.compile(head + re.escape(keyword) + tail)


def matches(keyword: str, text: str) -> bool:
    """Whether ``keyword`` occurs in lower-cased ``text`` as words (see the module docstring)."""
    return _pattern(keyword).search(text) is not None


def instruction_of(unit: str) -> str:
    """The instruction type of an IFEval unit id (``"0:punctuation:no_comma"`` → ``punctuation:no_comma``)."""
    return unit.split(":", 1)[1] if ":" in unit and unit.split(":", 1)[0].isdigit() else unit


def map_complaint(text: str, units: Iterable[str]) -> tuple[str, ...]:
    """The units among ``units`` a free-text complaint names, by the keyword table."""
    units = tuple(units)
    if units == ("answer",):
        return units
    low = text.lower()
    return tuple(u for u in units if any(matches(k, low) for k in KEYWORDS.get(instruction_of(u), ())))

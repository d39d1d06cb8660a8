"""IFEval's 25 verifiable instruction types: their parameters and the rule that checks each.

Each rule decides, for one response text and one instruction's parameters, whether the response
follows the instruction, exactly as the released Google checker
(google-research ``instruction_following_eval/instructions.py``, registry in
``instructions_registry.py``) decides it — the same regular expressions, the same counting, the
same comparison operators and the same edge cases (e.g. keywords are matched as regular
expressions, case-insensitively; a response whose language cannot be detected counts as
following a language or case instruction). ``letter_frequency`` counts the single character it
is given. The released code replaces a letter outside a-z with a random letter, unseeded, so on
IFEval's keys 1122 ("#") and 1129 ("!") its verdict is a coin toss;
:mod:`judgeaudit.checkers.ifeval.released` gives the exact distribution of the numbers it reports.

Where the released code would fill a missing or out-of-range parameter with a *random* value
(it was written to generate instructions as well as to check them), this module refuses the
item instead: a checker outside a loop must not decide by chance. :func:`bind` validates and
normalises an instruction's parameters once (stripping and lower-casing where the released
``build_description`` does), raising ``InputError`` naming the field.
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from judgeaudit.checkers.ifeval import text as tx
from judgeaudit.errors import InputError

RELATIONS = ("less than", "at least")
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
LANGUAGES = ("en", "es", "pt", "ar", "hi", "fr", "ru", "de", "ja", "it", "bn", "uk", "th", "ur", "ta", "te", "bg",
             "ko", "pl", "he", "fa", "vi", "ne", "sw", "kn", "mr", "gu", "pa", "ml", "fi")
"""The ISO 639-1 codes the released checker offers (``instructions_util.LANGUAGE_CODES``)."""

Args = Mapping[str, Any]


@dataclass(frozen=True)
class Instruction:
    """One instruction type: its id, its parameters (name → kind) and its rule."""

    id: str
    params: Mapping[str, str]
    rule: Callable[[str, Args], bool]

    def check(self, response: str, args: Args) -> bool:
        """Whether ``response`` follows this instruction with (bound) ``args``."""
        return bool(self.rule(response, args))


def _compare(count: int, relation: str, threshold: int) -> bool:
    return count < threshold if relation == RELATIONS[0] else count >= threshold


# ---- the rules (response text, bound args) -> bool -------------------------------------------------

def _keywords_existence(v: str, a: Args) -> bool:
    return all(re.search(k, v, flags=re.IGNORECASE) for k in a["keywords"])


def _keyword_frequency(v: str, a: Args) -> bool:
    return _compare(len(re.findall(a["keyword"], v, flags=re.IGNORECASE)), a["relation"], a["frequency"])


def _forbidden_words(v: str, a: Args) -> bool:
    return not any(re.search(r"\b" + w + r"\b", v, flags=re.IGNORECASE) for w in a["forbidden_words"])


def _letter_frequency(v: str, a: Args) -> bool:
    return _compare(collections.Counter(v.lower())[a["letter"]], a["let_relation"], a["let_frequency"])


def _response_language(v: str, a: Args) -> bool:
    lang = tx.detect_language(v)
    return True if lang is None else lang == a["language"]


def _number_sentences(v: str, a: Args) -> bool:
    return _compare(tx.count_sentences(v), a["relation"], a["num_sentences"])


def _number_paragraphs(v: str, a: Args) -> bool:
    parts = re.split(r"\s?\*\*\*\s?", v)
    n = len(parts)
    for i, p in enumerate(parts):
        if not p.strip():
            if i in (0, len(parts) - 1):
                n -= 1
            else:
                return False
    return n == a["num_paragraphs"]


def _number_words(v: str, a: Args) -> bool:
    return _compare(tx.count_words(v), a["relation"], a["num_words"])


_FIRST_WORD_STOP = frozenset(".,?!'\"")


def _nth_paragraph_first_word(v: str, a: Args) -> bool:
    parts = re.split(r"\n\n", v)
    n = sum(1 for p in parts if p.strip())
    nth = a["nth_paragraph"]
    if nth > n:
        return False
    para = parts[nth - 1].strip()
    if not para:
        return False
    word = para.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for ch in word:
        if ch in _FIRST_WORD_STOP:
            break
        first += ch.lower()
    return n == a["num_paragraphs"] and first == a["first_word"]


def _number_placeholders(v: str, a: Args) -> bool:
    return len(re.findall(r"\[.*?\]", v)) >= a["num_placeholders"]


def _postscript(v: str, a: Args) -> bool:
    marker = a["postscript_marker"]
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(re.findall(pattern, v.lower(), flags=re.MULTILINE))


def _number_bullet_lists(v: str, a: Args) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", v, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", v, flags=re.MULTILINE)
    return len(stars) + len(dashes) == a["num_bullets"]


def _constrained_response(v: str, a: Args) -> bool:
    v = v.strip()
    return any(option in v for option in CONSTRAINED_RESPONSES)


def _number_highlighted_sections(v: str, a: Args) -> bool:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", v) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", v) if h.removeprefix("**").removesuffix("**").strip()]
    return len(single) + len(double) >= a["num_highlights"]


def _multiple_sections(v: str, a: Args) -> bool:
    sections = re.split(r"\s?" + a["section_spliter"] + r"\s?\d+\s?", v)
    return len(sections) - 1 >= a["num_sections"]


def _json_format(v: str, a: Args) -> bool:
    body = v.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        body = body.removeprefix(prefix)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _title(v: str, a: Args) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", v))


def _two_responses(v: str, a: Args) -> bool:
    parts = v.split("******")
    kept = []
    for i, p in enumerate(parts):
        if p.strip():
            kept.append(p)
        elif i not in (0, len(parts) - 1):
            return False
    return len(kept) == 2 and kept[0].strip() != kept[1].strip()


def _repeat_prompt(v: str, a: Args) -> bool:
    return v.strip().lower().startswith(a["prompt_to_repeat"].strip().lower())


def _end_checker(v: str, a: Args) -> bool:
    return v.strip().strip('"').lower().endswith(a["end_phrase"].strip().lower())


def _capital_word_frequency(v: str, a: Args) -> bool:
    n = sum(1 for w in tx.word_tokens(v) if w.isupper())
    return _compare(n, a["capital_relation"], a["capital_frequency"])


def _english_capital(v: str, a: Args) -> bool:
    if not v.isupper():
        return False
    lang = tx.detect_language(v)
    return lang is None or lang == "en"


def _english_lowercase(v: str, a: Args) -> bool:
    if not v.islower():
        return False
    lang = tx.detect_language(v)
    return lang is None or lang == "en"


def _no_comma(v: str, a: Args) -> bool:
    return "," not in v


def _quotation(v: str, a: Args) -> bool:
    v = v.strip()
    return len(v) > 1 and v[0] == '"' and v[-1] == '"'


# ---- the registry -----------------------------------------------------------------------------------

_SPECS: tuple[tuple[str, dict[str, str], Callable[[str, Args], bool]], ...] = (
    ("keywords:existence", {"keywords": "strings"}, _keywords_existence),
    ("keywords:frequency", {"keyword": "string", "frequency": "count", "relation": "relation"}, _keyword_frequency),
    ("keywords:forbidden_words", {"forbidden_words": "strings"}, _forbidden_words),
    ("keywords:letter_frequency", {"letter": "letter", "let_frequency": "count", "let_relation": "relation"},
     _letter_frequency),
    ("language:response_language", {"language": "language"}, _response_language),
    ("length_constraints:number_sentences", {"num_sentences": "count", "relation": "relation"}, _number_sentences),
    ("length_constraints:number_paragraphs", {"num_paragraphs": "count"}, _number_paragraphs),
    ("length_constraints:number_words", {"num_words": "count", "relation": "relation"}, _number_words),
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": "count", "nth_paragraph": "count", "first_word": "word"}, _nth_paragraph_first_word),
    ("detectable_content:number_placeholders", {"num_placeholders": "count"}, _number_placeholders),
    ("detectable_content:postscript", {"postscript_marker": "string"}, _postscript),
    ("detectable_format:number_bullet_lists", {"num_bullets": "count"}, _number_bullet_lists),
    ("detectable_format:constrained_response", {}, _constrained_response),
    ("detectable_format:number_highlighted_sections", {"num_highlights": "count"}, _number_highlighted_sections),
    ("detectable_format:multiple_sections", {"section_spliter": "string", "num_sections": "count"},
     _multiple_sections),
    ("detectable_format:json_format", {}, _json_format),
    ("detectable_format:title", {}, _title),
    ("combination:two_responses", {}, _two_responses),
    ("combination:repeat_prompt", {"prompt_to_repeat": "text"}, _repeat_prompt),
    ("startend:end_checker", {"end_phrase": "string"}, _end_checker),
    ("change_case:capital_word_frequency", {"capital_frequency": "count", "capital_relation": "relation"},
     _capital_word_frequency),
    ("change_case:english_capital", {}, _english_capital),
    ("change_case:english_lowercase", {}, _english_lowercase),
    ("punctuation:no_comma", {}, _no_comma),
    ("startend:quotation", {}, _quotation),
)

INSTRUCTIONS: Mapping[str, Instruction] = {i: Instruction(i, p, r) for i, p, r in _SPECS}
"""Instruction id → :class:`Instruction`, the 25 types of the released registry."""


def _bind_value(kind: str, value: Any, field: str) -> Any:
    def bad(what: str) -> InputError:
        return InputError(f"must be {what}, got {value!r}", field=field)

    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        if value < 0:
            raise bad("a non-negative integer")
        return value
    if kind in ("string", "word", "text", "letter", "relation", "language"):
        if not isinstance(value, str):
            raise bad("a string")
        if kind == "text":
            if not value:
                raise bad("a non-empty string")
            return value
        if kind == "relation":
            if value not in RELATIONS:
                raise bad(f"one of {', '.join(repr(r) for r in RELATIONS)}")
            return value
        if kind == "letter":
            if len(value) != 1:
                raise bad("a single letter")
            return value.strip().lower()
        if kind == "word":
            return value.lower()
        if kind == "language":
            if value not in LANGUAGES:
                raise bad(f"an ISO 639-1 code the checker knows ({', '.join(LANGUAGES)})")
            return value
        if not value.strip():
            raise bad("a non-empty string")
        return value.strip()
    if kind == "strings":
        if not isinstance(value, list) or not value or not all(isinstance(x, str) and x for x in value):
            raise bad("a non-empty list of strings")
        return tuple(sorted(set(value)))
    raise AssertionError(kind)


def bind(instruction_id: str, kwargs: Any, *, field: str = "kwargs") -> dict[str, Any]:
    """Validated, normalised parameters of one instruction (``InputError`` naming the field when
    the id is unknown, a parameter is missing, unexpected or of the wrong type)."""
    spec = INSTRUCTIONS.get(instruction_id)
    if spec is None:
        raise InputError(f"unknown instruction id {instruction_id!r}", field="instruction_id_list")
    if not isinstance(kwargs, dict):
        raise InputError(f"must be an object of parameters, got {kwargs!r}", field=field)
    extra = sorted(set(kwargs) - set(spec.params))
    if extra:
        raise InputError(f"unexpected parameter(s) {', '.join(extra)} for {instruction_id}", field=field)
    out: dict[str, Any] = {}
    for name, kind in spec.params.items():
        if name not in kwargs or kwargs[name] is None:
            raise InputError(f"required parameter of {instruction_id} is missing", field=f"{field}.{name}")
        out[name] = _bind_value(kind, kwargs[name], f"{field}.{name}")
    if instruction_id == "length_constraints:nth_paragraph_first_word" and not (
            1 <= out["nth_paragraph"] <= out["num_paragraphs"]):
        raise InputError("nth_paragraph must lie in 1..num_paragraphs", field=f"{field}.nth_paragraph")
    return out

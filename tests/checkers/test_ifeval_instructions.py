"""IFEval's 25 instruction rules on hand-made responses, parameter validation, and loose variants."""

from __future__ import annotations

import pytest

from judgeaudit.checkers.ifeval import INSTRUCTIONS, bind, check_ifeval, follows, loose_variants, make_item
from judgeaudit.checkers.ifeval import text as tx
from judgeaudit.errors import InputError


def ok(iid: str, response: str, mode: str = "strict", **kwargs) -> bool:
    return follows(iid, bind(iid, kwargs), response, mode)  # type: ignore[arg-type]


def test_registry_holds_the_25_released_instruction_types():
    assert len(INSTRUCTIONS) == 25
    assert {i.split(":")[0] for i in INSTRUCTIONS} == {
        "keywords", "language", "length_constraints", "detectable_content", "detectable_format", "combination",
        "startend", "change_case", "punctuation"}


# (instruction id, kwargs, a response that follows, a response that does not)
CASES = [
    ("keywords:existence", {"keywords": ["apple", "pie"]}, "An APPLE pie.", "An apple tart."),
    ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "at least"}, "cat cat", "one cat"),
    ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "less than"}, "one cat", "Cat, cat."),
    ("keywords:forbidden_words", {"forbidden_words": ["red"]}, "A reddish sky.", "The Red sky."),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 3, "let_relation": "at least"}, "Zzz", "zz top"),
    ("keywords:letter_frequency", {"letter": "!", "let_frequency": 2, "let_relation": "at least"}, "Hi! Yo!", "Hi!"),
    ("language:response_language", {"language": "fr"},
     "Bonjour, je suis très content de vous voir aujourd'hui dans cette belle ville de Paris.",
     "Hello, I am very happy to see you today in this beautiful city of London."),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "less than"},
     "Dr. Smith went home. He was tired.", "One. Two. Three."),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "first\n***\nsecond", "a\n***\n\n***\nb"),
    ("length_constraints:number_words", {"num_words": 3, "relation": "at least"}, "one two-three", "one two"),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "Then"},
     "First part.\n\n\"Then, more.", "First part.\n\nThereafter more."),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[name] at [address]", "[name] only"),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\np. s. remember", "Body. PS remember"),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Body.\nP.P.S more", "Body.\nP.S. more"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n- two\nend", "* one\n** bold\nend"),
    ("detectable_format:constrained_response", {}, "  My answer is maybe. ", "My answer is perhaps."),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* and **b**", "*a* and * *"),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
     "Section 1\nx\nSection 2\ny", "Section 1\nx\nSection two"),
    ("detectable_format:json_format", {}, "```json\n{\"a\": 1}\n```", "```json\n{a: 1}\n```"),
    ("detectable_format:title", {}, "<<My Title>>\ntext", "<< >>\ntext"),
    ("combination:two_responses", {}, "one\n******\ntwo", "same\n******\nsame"),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "  say HI. hi!", "Hi. Say hi."),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Done. any other questions?\"", "Any other "
                                                                                                   "questions? No."),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"},
     "THE CAT sat.", "The CAT sat."),
    ("change_case:english_capital", {}, "THIS IS A LONG SENTENCE WRITTEN IN ENGLISH WITH CAPITAL LETTERS ONLY.",
     "This is a long sentence written in English with some lower case letters."),
    ("change_case:english_lowercase", {}, "this is a long sentence written in english with lower case letters only.",
     "This is a long sentence written in English with an upper case letter."),
    ("punctuation:no_comma", {}, "No commas here.", "A comma, here."),
    ("startend:quotation", {}, ' "wrapped" ', '"open only'),
]


@pytest.mark.parametrize(("iid", "kwargs", "good", "bad"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_accepts_the_following_response_and_rejects_the_other(iid, kwargs, good, bad):
    assert ok(iid, good, **kwargs) is True
    assert ok(iid, bad, **kwargs) is False


def test_every_instruction_type_has_a_case():
    assert {c[0] for c in CASES} == set(INSTRUCTIONS)


def test_keywords_are_regular_expressions_as_released():
    # the released checker passes keywords to re.search unescaped: "c.t" matches "cat"
    assert ok("keywords:existence", "a cat", keywords=["c.t"]) is True


def test_words_sentences_and_tokens():
    assert tx.count_words("It's 3 o'clock — isn't it?") == 8
    assert tx.split_sentences("Mr. Smith arrived at 5 p.m. today. He left.") == [
        "Mr. Smith arrived at 5 p.m. today.", "He left."]
    assert tx.word_tokens("I CAN'T go. OK?") == ["I", "CA", "N'T", "go", ".", "OK", "?"]


def test_undetectable_language_counts_as_followed():
    assert tx.detect_language("12345 !!!") is None
    assert ok("language:response_language", "12345 !!!", language="de") is True
    # capitals alone are not enough: the text must also be detected as English
    french = "BONJOUR, JE SUIS TRÈS CONTENT DE VOUS VOIR AUJOURD'HUI À PARIS."
    assert ok("change_case:english_capital", french) is False
    assert ok("change_case:english_lowercase", "12345 !!!") is False  # no cased letter: islower() is False


def test_blank_response_follows_nothing():
    assert ok("punctuation:no_comma", "   ") is False
    assert ok("punctuation:no_comma", "   ", mode="loose") is False


def test_loose_variants_in_released_order():
    assert loose_variants("Sure:\n*a*\nbye") == ("Sure:\n*a*\nbye", "Sure:\na\nbye", "*a*\nbye", "Sure:\n*a*", "*a*",
                                                 "a\nbye", "Sure:\na", "a")


def test_loose_drops_a_first_line_that_breaks_the_rule():
    r = "Here you go, friend:\nno commas in this part"
    assert ok("punctuation:no_comma", r) is False
    assert ok("punctuation:no_comma", r, mode="loose") is True


def test_check_ifeval_gives_one_unit_per_instruction_in_order():
    item = make_item({"key": 7, "prompt": "p", "instruction_id_list": ["punctuation:no_comma", "startend:quotation"],
                      "kwargs": [{}, {}]})
    res = check_ifeval(item, '"a, b"')
    assert [(u.unit, u.passed) for u in res.units] == [("0:punctuation:no_comma", False),
                                                         ("1:startend:quotation", True)]
    assert res.passed is False and res.n_passed == 1


@pytest.mark.parametrize(("obj", "field", "words"), [
    ({"key": 1, "prompt": "p", "instruction_id_list": ["nope:x"], "kwargs": [{}]}, "instruction_id_list[0]",
     "unknown instruction id"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["length_constraints:number_words"],
      "kwargs": [{"num_words": "100", "relation": "at least"}]}, "kwargs[0].num_words", "must be an integer"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["length_constraints:number_words"],
      "kwargs": [{"num_words": 100, "relation": "at most"}]}, "kwargs[0].relation", "must be one of"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": "a"}]},
     "kwargs[0].keywords", "list of strings"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["keywords:existence"], "kwargs": [{}]},
     "kwargs[0].keywords", "missing"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{"x": 1}]},
     "kwargs[0]", "unexpected parameter"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": []}, "kwargs",
     "one per instruction"),
    ({"key": "1", "prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}, "key",
     "integer"),
    ({"key": 1, "prompt": "p", "instruction_id_list": ["language:response_language"],
      "kwargs": [{"language": "xx"}]}, "kwargs[0].language", "ISO 639-1"),
])
def test_bad_items_raise_input_error_naming_the_field(obj, field, words):
    with pytest.raises(InputError) as e:
        make_item(obj)
    assert e.value.field == field
    assert words in e.value.message

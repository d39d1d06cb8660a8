"""GSM8K: answer-key extraction, a response's final number, and the shipped GPT-3 solutions."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judgeaudit.checkers import get_checker
from judgeaudit.checkers.gsm8k import GSM8KItem, answer_key, check_gsm8k, final_number, parse_number
from judgeaudit.errors import InputError


@pytest.mark.parametrize(("text", "value"), [
    ("18", "18"), ("2,125", "2125"), ("$1,234.50", "1234.5"), ("-3", "-3"), ("+7", "7"), ("3.0", "3"),
    ("0.5", "0.5"), ("1,000,000", "1000000"), ("42.", "42"),
])
def test_parse_number(text, value):
    assert parse_number(text) == Decimal(value)


def test_three_point_zero_equals_three_but_minus_three_does_not():
    assert parse_number("3.0") == parse_number("3")
    assert parse_number("-3") != parse_number("3")


@pytest.mark.parametrize("text", ["", "twelve", "1,23", "3 apples", "1.2.3"])
def test_parse_number_rejects_non_numbers(text):
    with pytest.raises(InputError):
        parse_number(text)


def test_answer_key_after_the_last_marker():
    assert answer_key("He pays 2 + 3 = <<2+3=5>>5\n#### 5") == Decimal(5)
    assert answer_key("x #### 1\nfixed: #### 2,125") == Decimal(2125)
    assert answer_key("So he runs 9*60=<<9*60=540>>540 meters\nA: 540") == Decimal(540)
    with pytest.raises(InputError, match="no '####'"):
        answer_key("no answer line")


@pytest.mark.parametrize(("response", "value"), [
    ("The answer is 12 apples.", "12"),
    ("She has 3 bags of 4 apples, so 12.\nA: 12", "12"),
    ("Total: $1,234.50", "1234.50"),
    ("It drops by 5 degrees to -3", "-3"),
    ("#### 3.0", "3"),
    ("First 2 then 7 and finally 40.", "40"),
    ("Answer: 8 cookies, since 2 + 6 = 8 and not 9", "8"),
    ("20*3=<<20*3=60>>60 meters\nA: 60", "60"),
])
def test_final_number(response, value):
    assert final_number(response) == Decimal(value)


def test_text_with_no_number_has_no_final_number_and_fails():
    assert final_number("I do not know.") is None
    res = check_gsm8k(GSM8KItem("q", "?", Decimal(3)), "I do not know.")
    assert res.passed is False and res.units[0].detail == "no number"


def test_check_is_one_answer_unit_through_the_registry():
    res = get_checker("gsm8k")(GSM8KItem("7", "How many?", Decimal(540)), "9*60=540 meters\nA: 540.0")
    assert res.item == "7" and [(u.unit, u.passed) for u in res.units] == [("answer", True)]
    with pytest.raises(InputError, match="unknown task"):
        get_checker("mmlu")


@pytest.mark.data
def test_shipped_gpt3_solutions_agree_with_their_is_correct_flags(data_dir, tmp_path):
    from judgeaudit.commands.check import run_gsm8k

    r = run_gsm8k(data_dir / "gsm8k", tmp_path)
    assert r["agreement"] == {"agree": 5276, "total": 5276, "value": 1.0}
    assert r["disagreements"] == []
    flagged = sum(v["flagged"] for v in r["by_condition"].values())
    assert r["pass_rate"]["passed"] == flagged
    assert (tmp_path / "units.parquet").is_file()


# ---- number forms a response may use, read against the answer key's own format ------------------------
# The key (``#### 15``, ``#### 2,125``) writes an integer or a decimal with ``.``, thousands in groups of
# three after ``,``; a response's number is read so that it equals the key exactly when it names the key's value.

@pytest.mark.parametrize(("response", "key", "value", "passed"), [
    # the final statement's last number: the result of the equation, not its first operand
    ("So the answer is 3 + 12 = 15.", "#### 15", "15", True),
    ("The answer is 2 * 3 = 6, since each has 3.", "#### 6", "6", True),
    # U+2212 MINUS SIGN is a minus
    ("The temperature ends at \u22123 degrees.", "#### -3", "-3", True),
    # a decimal with no whole part
    ("Each slice costs .5 dollars.\n#### .5", "#### 0.5", "0.5", True),
    # a fraction is its exact value
    ("She keeps 1/2 of the cake.\nA: 1/2", "#### 0.5", "0.5", True),
    ("The answer is 1/3", "#### 0.33", None, False),
])
def test_number_forms_against_the_key(response, key, value, passed):
    from fractions import Fraction

    k = answer_key(key)
    got = final_number(response)
    if value is not None:
        assert got == Fraction(Decimal(value))
    assert check_gsm8k(GSM8KItem("q", "?", k), response).passed is passed


def test_one_third_is_exact():
    from fractions import Fraction

    assert final_number("The answer is 1/3") == Fraction(1, 3)


def test_a_comma_group_that_is_not_thousands_is_no_number_of_the_keys_format():
    # "1,50" is neither 150 (thousands come in threes) nor 1.5 (the key's decimal mark is "."): it must not be
    # read as its fragment 50 (which would pass against a key of 50) nor as 1
    for key in (Decimal(50), Decimal(150), Decimal("1.5"), Decimal(1)):
        res = check_gsm8k(GSM8KItem("q", "?", key), "The answer is 1,50")
        assert res.passed is False and res.units[0].detail == "ill-formed number '1,50'"
    assert final_number("Total: 1,500") == Decimal(1500)

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

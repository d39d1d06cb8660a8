"""The released IFEval checker's random letter, as an exact distribution (hand-made items)."""

from __future__ import annotations

import pytest

from judgeaudit.checkers.ifeval import make_item
from judgeaudit.checkers.ifeval.released import p_follow, released_counts


def item(key, ids, kwargs):
    return make_item({"key": key, "prompt": f"p{key}", "instruction_id_list": ids, "kwargs": kwargs})


LF = "keywords:letter_frequency"


def test_p_follow_is_the_share_of_letters_that_pass():
    a = {"letter": "#", "let_frequency": 2, "let_relation": "at least"}
    assert p_follow(a, "Aab bc #", "strict") == pytest.approx(2 / 26)  # a (2) and b (2)
    less = {**a, "let_relation": "less than"}
    assert p_follow(less, "Aab bc #", "strict") == pytest.approx(24 / 26)


def test_counts_convolve_the_coins_with_the_fixed_verdicts():
    pairs = [
        # a coin with p = 1/26, alone: prompt passes with 1/26
        (item(1, [LF], [{"letter": "!", "let_frequency": 2, "let_relation": "at least"}]), "aa!!"),
        # a coin beside a failing instruction: the prompt fails whatever the draw
        (item(2, [LF, "punctuation:no_comma"], [{"letter": "?", "let_frequency": 1, "let_relation": "at least"}, {}]),
         "b, c"),
        # a letter inside a-z is no coin
        (item(3, [LF], [{"letter": "z", "let_frequency": 1, "let_relation": "at least"}]), "z"),
    ]
    r = released_counts(pairs, "strict")
    assert [(d["key"], d["p_follow"]) for d in r["drawn"]] == [(1, pytest.approx(1 / 26)), (2, pytest.approx(2 / 26))]
    pl, il = r["prompt_level"], r["instruction_level"]
    assert (pl.total, pl.low, pl.high) == (3, 1, 2)
    assert pl.p(2) == pytest.approx(1 / 26) and pl.p(1) == pytest.approx(25 / 26)
    assert (il.total, il.low, il.high) == (4, 1, 3)
    assert il.p(3) == pytest.approx(1 / 26 * 2 / 26)
    assert il.p(1) == pytest.approx(25 / 26 * 24 / 26)
    assert sum(il.probs) == pytest.approx(1.0)
    assert il.to_dict()["mean"] == pytest.approx(1 + 1 / 26 + 2 / 26)

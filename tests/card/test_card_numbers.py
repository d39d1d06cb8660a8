"""One formatter of an estimate with its interval (``card.numbers.with_ci``): the card's rounding to what the
interval supports, and the terminal summaries' fixed decimals and percentages (``commands.common.with_interval``)."""

from __future__ import annotations

import math

import pytest

from judgeaudit.card.numbers import ci_ok, with_ci
from judgeaudit.commands.common import with_interval


def test_the_card_rounds_to_what_the_interval_supports():
    assert with_ci(0.31234, (0.25, 0.37)) == "0.31 [0.25, 0.37]"          # width 0.12: two decimals
    assert with_ci(0.31234, [0.3101, 0.3142]) == "0.3123 [0.3101, 0.3142]"  # width 0.004: four
    assert with_ci(0.05, (-0.02, 0.11), sign=True) == "+0.05 [-0.02, +0.11]"
    assert with_ci(0.31234, None) == "0.312"                               # no interval: three decimals


@pytest.mark.parametrize("value, ci, digits, pct, want", [
    (0.31234, (0.25, 0.37), 3, False, "0.312 [0.250, 0.370]"),
    (0.31234, (0.25, 0.37), 2, False, "0.31 [0.25, 0.37]"),
    (0.31234, [0.25, 0.37], 3, True, "31.2% [25.0%, 37.0%]"),
    (0.31234, [None, 0.37], 3, False, "0.312"),
    (0.31234, [math.nan, 0.37], 3, False, "0.312"),
    (0.31234, [0.25], 3, False, "0.312"),
    (None, (0.25, 0.37), 3, False, "—"),
    (math.nan, (0.25, 0.37), 3, True, "—"),
])
def test_the_terminal_prints_fixed_decimals_through_the_same_formatter(value, ci, digits, pct, want):
    assert with_interval(value, ci, digits=digits, pct=pct) == want
    assert with_ci(value, ci, digits=digits, pct=pct) == want


def test_an_interval_is_two_bounds_neither_missing():
    assert ci_ok((0.1, 0.2)) and ci_ok([0, 1])
    assert not any(ci_ok(c) for c in (None, [], [0.1], [0.1, None], (math.nan, 0.2), [0.1, 0.2, 0.3]))

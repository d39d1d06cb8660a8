"""``stats.tests`` at its edges: McNemar with no discordant pair, Wilson on one item and on none, checked
against statsmodels' and scipy's own implementations."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from judgeaudit.stats.paired import log10_mcnemar, mcnemar_paired
from judgeaudit.stats.tests import mcnemar_exact, wilson_interval


def test_mcnemar_with_no_discordant_pair_is_p_one():
    """b = c = 0: the two arms agree on every unit; nothing contradicts H0, p = 1 (log10 p = 0)."""
    assert mcnemar_exact(0, 0) == 1.0
    assert log10_mcnemar(0, 0) == 0.0
    assert mcnemar_paired([True, False, True], [True, False, True]) == {"b": 0, "c": 0, "p": 1.0, "log10_p": 0.0}


@pytest.mark.parametrize("b, c", [(1, 0), (0, 1), (4, 0), (3, 7), (10, 10), (0, 12)])
def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_pairs(b, c):
    want = binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-12)
    assert log10_mcnemar(b, c) == pytest.approx(math.log10(want), abs=1e-9)


@pytest.mark.parametrize("k, n", [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (3, 10), (10, 10)])
def test_wilson_on_one_item_and_a_few_matches_statsmodels(k, n):
    lo, hi = wilson_interval(k, n)
    want = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (lo, hi) == pytest.approx(want, abs=1e-12)
    assert 0.0 <= lo < hi <= 1.0


def test_wilson_on_one_item_values():
    """One item: a 95% Wilson interval [0, 0.7935] when it fails, [0.2065, 1] when it passes; never zero width."""
    assert wilson_interval(0, 1) == pytest.approx((0.0, 0.793450), abs=1e-6)
    assert wilson_interval(1, 1) == pytest.approx((0.206550, 1.0), abs=1e-6)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))

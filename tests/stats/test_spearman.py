"""Spearman ρ with its permutation p (stats.tests.spearman_test): hand computations, exact
enumeration, size under the null and power against a planted monotone relation."""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.stats.tests import spearman_test


def test_hand_computed_rho_and_exact_p():
    # ranks differ by one swap: Σd² = 2, ρ = 1 − 6·2/(4·15) = 0.8. Of the 24 pairings, ρ ≥ 0.8 for the
    # identity and the three adjacent swaps (Σd² ≤ 2): p(greater) = 4/24; ρ ≤ −0.8 for their
    # reverses: two-sided p = 8/24.
    t = spearman_test([1, 2, 3, 4], [10, 30, 20, 40])
    assert t.rho == pytest.approx(0.8) and t.exact and t.n_perm == 24
    assert t.p == pytest.approx(8 / 24)
    assert spearman_test([1, 2, 3, 4], [10, 30, 20, 40], alternative="greater").p == pytest.approx(4 / 24)
    # every pairing but the identity (ρ = 1) has ρ ≤ 0.8: p(less) = 23/24
    assert spearman_test([1, 2, 3, 4], [10, 30, 20, 40], alternative="less").p == pytest.approx(23 / 24)
    # mid-ranks for ties: x ranks (1, 2.5, 2.5, 4), y ranks (1, 2, 3, 4): ρ = Pearson of the ranks
    # = 4.5 / sqrt(4.5 · 5) = 0.9487
    assert spearman_test([1, 2, 2, 3], [1, 2, 3, 4]).rho == pytest.approx(4.5 / np.sqrt(4.5 * 5))
    # three arms perfectly ordered (the paper's P35(c)): p = 1/6, the smallest possible
    assert spearman_test([0.1, 0.5, 1.0], [-0.1, 0.0, 0.05], alternative="greater").p == pytest.approx(1 / 6)


def test_undefined_cases_and_nan_pairs():
    assert np.isnan(spearman_test([1, 2], [2, 1]).rho)
    assert np.isnan(spearman_test([1, 1, 1, 1], [1, 2, 3, 4]).p)
    t = spearman_test([1, 2, np.nan, 3, 4], [10, 30, 5, 20, 40])
    assert t.n == 4 and t.rho == pytest.approx(0.8)
    with pytest.raises(ValueError):
        spearman_test([1, 2, 3], [1, 2, 3], alternative="up")


def test_monte_carlo_p_uses_the_plus_one_rule():
    # a perfect ordering of 30 values: no random pairing reaches ρ = 1, so p = 1/(n_perm + 1)
    x = np.arange(30.0)
    t = spearman_test(x, x ** 2, n_perm=499, seed=3, alternative="greater")
    assert not t.exact and t.rho == pytest.approx(1.0) and t.p == pytest.approx(1 / 500)


def test_size_on_null_data_is_nominal():
    rng = np.random.default_rng(20261201)
    ps = np.array([spearman_test(rng.random(25), rng.integers(0, 4, 25), n_perm=199, seed=rng).p
                   for _ in range(400)])
    # 400 null data sets (y with heavy ties): rejection at 0.05 within a 99% binomial band of 20/400
    assert 0.022 <= (ps <= 0.05).mean() <= 0.085
    assert 0.06 <= (ps <= 0.10).mean() <= 0.145


def test_power_against_a_planted_monotone_relation():
    rng = np.random.default_rng(7)
    hits = []
    for _ in range(100):
        x = rng.random(40)
        y = np.exp(3 * x) + rng.normal(0, 4, 40)     # monotone in x plus noise: population ρ ≈ 0.6
        t = spearman_test(x, y, n_perm=199, seed=rng, alternative="greater")
        hits.append(t.p <= 0.05)
    assert np.mean(hits) >= 0.9

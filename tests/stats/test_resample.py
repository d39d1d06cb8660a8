import numpy as np
import pytest

from judgeaudit.stats.resample import (bootstrap_counts, percentile_ci, permutation_p,
                                       permute_within_groups)


def test_within_group_permutation_keeps_groups_and_is_uniform():
    v = np.arange(10)
    g = np.array(list("aabbbccccd"))
    perms = permute_within_groups(v, g, 4000, seed=3)
    for k in set(g):
        assert (np.sort(perms[:, g == k], axis=1) == np.sort(v[g == k])).all()
    assert (perms[:, 9] == 9).all()                          # a singleton group never moves
    freq = np.bincount(perms[:, 5] - 5, minlength=4) / 4000  # group c: each member equally likely at a slot
    assert np.allclose(freq, 0.25, atol=0.03)


def test_bootstrap_counts_rows_sum_to_n_and_ci():
    c = bootstrap_counts(7, 500, seed=1)
    assert c.shape == (500, 7) and (c.sum(axis=1) == 7).all()
    assert np.allclose(c.mean(axis=0), 1.0, atol=0.15)
    lo, hi = percentile_ci(np.arange(1001.0), 0.95)
    assert (lo, hi) == pytest.approx((25.0, 975.0))


def test_permutation_p_has_the_plus_one_correction():
    assert permutation_p(5.0, np.zeros(99), "greater") == pytest.approx(1 / 100)
    assert permutation_p(0.0, np.zeros(99), "greater") == 1.0

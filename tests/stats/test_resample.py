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


def _keyed_argsort_permutations(values, groups, n_perm, seed):
    """Reference: every permutation at once, as one argsort of (group code + uniform key) per row."""
    rng = np.random.default_rng(seed)
    _, codes = np.unique(groups, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    shuffled = np.argsort(codes[None, :] + rng.random((n_perm, len(values))), axis=1)
    out = np.empty((n_perm, len(values)), dtype=values.dtype)
    out[:, order] = values[shuffled]
    return out


@pytest.mark.parametrize("sizes", [[12] * 40, [3, 1, 7, 7, 2, 12, 5], [1], [60], [200, 1, 1, 1, 1]])
def test_within_group_permutations_are_the_keyed_argsort_ones(sizes, monkeypatch):
    """The grouped sort (and its fallback for a grid that would be mostly padding, and the blocks of
    permutations) draws exactly the permutations of one keyed argsort over all units."""
    import judgeaudit.stats.resample as rs

    rng = np.random.default_rng(len(sizes))
    groups = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    values = rng.integers(0, 1000, len(groups))
    want = _keyed_argsort_permutations(values, groups, 300, 9)
    assert (permute_within_groups(values, groups, 300, 9) == want).all()
    monkeypatch.setattr(rs, "_BLOCK", 7 * len(groups))        # 7 permutations per block
    assert (permute_within_groups(values, groups, 300, 9) == want).all()
    flags = values % 2 == 0
    assert (permute_within_groups(flags, groups, 300, 9) == _keyed_argsort_permutations(flags, groups, 300, 9)).all()


def test_percentile_ci_is_the_one_interval_of_resamples():
    """NaN resamples ignored; NaN where a column has none defined (or there are no resamples), without a warning;
    columns without NaN read exactly as numpy's linear quantiles."""
    import warnings

    from judgeaudit.stats.resample import percentile_interval

    rng = np.random.default_rng(3)
    boot = rng.normal(size=(400, 4))
    boot[::7, 1] = np.nan
    boot[:, 2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = percentile_ci(boot, 0.9, axis=0)
        assert percentile_interval(np.full(5, np.nan)) == (pytest.approx(np.nan, nan_ok=True),) * 2
        assert all(np.isnan(percentile_interval(np.empty(0), 0.9)))
        assert all(np.isnan(percentile_ci(np.empty((0, 3)), axis=0)[0]))
        lo_t, hi_t = percentile_ci(boot.T, 0.9, axis=1)
    a = (1 - 0.9) / 2
    assert np.array_equal(lo[[0, 3]], np.quantile(boot[:, [0, 3]], a, axis=0))
    assert np.array_equal(hi[[0, 3]], np.quantile(boot[:, [0, 3]], 1 - a, axis=0))
    col = boot[:, 1][~np.isnan(boot[:, 1])]
    assert (lo[1], hi[1]) == (np.quantile(col, a), np.quantile(col, 1 - a))
    assert np.isnan(lo[2]) and np.isnan(hi[2])
    assert np.array_equal(lo, lo_t, equal_nan=True) and np.array_equal(hi, hi_t, equal_nan=True)
    value = percentile_interval(boot[:, 0], 0.9)
    assert value == (float(lo[0]), float(hi[0])) and all(type(x) is float for x in value)

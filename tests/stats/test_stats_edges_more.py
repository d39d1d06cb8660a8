"""``stats.paired`` and ``stats.tests`` on hand-counted cases: every metric from its counts (precision on
one item), a clustered bootstrap that keeps a cluster's units together, the McNemar table's direction,
log10 p where p underflows, Spearman's undefined cases, and Benjamini–Hochberg with NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from judgeaudit.stats.paired import (boot_metric, cluster_counts, log10_mcnemar, mcnemar_paired, metric,
                                     paired_gain)
from judgeaudit.stats.tests import bh_adjust, spearman_test, wilson_interval


def test_cluster_counts_and_every_metric():
    gold = [True, True, False, False, True, False]
    flagged = [True, False, True, False, True, False]
    labels, c = cluster_counts(gold, flagged, ["a", "a", "b", "b", "c", "c"], [1, 0, 3, 0, 1, 0])
    assert labels.tolist() == ["a", "b", "c"]
    assert c.tolist() == [[1, 1, 0, 0, 0], [0, 0, 1, 1, 3], [1, 0, 1, 0, 0]]
    s = c.sum(axis=0)
    assert float(metric(s, "recall")) == 2 / 3 and float(metric(s, "specificity")) == 2 / 3
    assert float(metric(s, "balanced_accuracy")) == 2 / 3 and float(metric(s, "precision")) == 2 / 3
    assert float(metric(s, "false_alarms_per_clean")) == 3 / 3
    _, c1 = cluster_counts(gold, flagged, ["a", "a", "b", "b", "c", "c"])     # one complaint per flag
    assert c1[:, 4].tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="unknown metric"):
        metric(s, "f1")


def test_precision_and_recall_on_one_item():
    assert float(metric(np.array([1, 0, 0, 0, 0]), "precision")) == 1.0
    assert float(metric(np.array([0, 0, 0, 1, 1]), "precision")) == 0.0
    assert math.isnan(float(metric(np.array([0, 1, 0, 0, 0]), "precision")))     # nothing flagged
    assert math.isnan(float(metric(np.array([0, 0, 1, 0, 0]), "recall")))        # nothing defective
    assert math.isnan(float(metric(np.array([1, 0, 0, 0, 0]), "specificity")))
    assert math.isnan(float(metric(np.array([1, 0, 0, 0, 0]), "false_alarms_per_clean")))
    v, lo, hi = boot_metric(np.array([[1, 0, 0, 0, 0]]), "precision", n_boot=50)
    assert (v, lo, hi) == (1.0, 1.0, 1.0)


def test_recall_and_a_paired_gain_on_one_defective_unit():
    """One defective unit: recall is 1 when it is flagged, 0 when missed (defined, not NaN); a paired gain over
    that one cluster is its gain with the one-point interval every resample of it gives."""
    assert float(metric(np.array([1, 0, 0, 0, 0]), "recall")) == 1.0
    assert float(metric(np.array([0, 1, 0, 0, 0]), "recall")) == 0.0
    assert float(metric(np.array([1, 0, 1, 0, 0]), "balanced_accuracy")) == 1.0
    assert paired_gain(np.array([[0, 1, 0, 0, 0.]]), np.array([[1, 0, 0, 0, 0.]]), "recall", n_boot=50) \
        == (1.0, 1.0, 1.0)


def test_the_cluster_bootstrap_and_the_paired_gain():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, (40, 5)).astype(float)
    v, lo, hi = boot_metric(a, "recall", n_boot=500)
    assert v == pytest.approx(a[:, 0].sum() / (a[:, 0].sum() + a[:, 1].sum()))
    assert lo < v < hi
    assert boot_metric(a, "recall", n_boot=500, level=0.5)[1] > lo
    assert all(math.isnan(x) for x in boot_metric(a, "recall", n_boot=0)[1:])
    assert all(math.isnan(x) for x in boot_metric(a[:0], "recall")[1:])
    g, glo, ghi = paired_gain(a, a, "recall", n_boot=300)
    assert (g, glo, ghi) == (0.0, 0.0, 0.0)
    b = a.copy()
    b[:, 0] += 1                                          # one more found per cluster
    g, glo, ghi = paired_gain(a, b, "recall", n_boot=300)
    want = b[:, 0].sum() / (b[:, 0].sum() + b[:, 1].sum()) - v
    assert g == pytest.approx(want) and 0 < glo <= g <= ghi
    assert all(math.isnan(x) for x in paired_gain(a, b, "recall", n_boot=0)[1:])
    g1, lo1, hi1 = paired_gain(a, b, "recall", n_boot=1)            # one resample: both ends its gain
    assert lo1 == hi1 and 0 < lo1 < 1
    empty = paired_gain(a[:0], b[:0], "recall", n_boot=100)
    assert all(math.isnan(x) for x in empty)


def test_mcnemar_table_direction_and_log10_p():
    r = mcnemar_paired([False, False, True, True, True], [True, True, True, False, True])
    assert (r["b"], r["c"]) == (2, 1) and r["p"] == pytest.approx(1.0)
    r = mcnemar_paired([False] * 8 + [True], [True] * 8 + [True])
    assert (r["b"], r["c"]) == (8, 0) and r["p"] == pytest.approx(2 * 0.5 ** 8)
    assert r["log10_p"] == pytest.approx(math.log10(2 * 0.5 ** 8))
    # b + c = 3000: p underflows, its log does not
    want = math.log10(2 * sum(math.comb(3000, k) for k in range(11))) - 3000 * math.log10(2)   # exact integers
    assert log10_mcnemar(2990, 10) == pytest.approx(want, rel=1e-9) and log10_mcnemar(10, 2990) == pytest.approx(want)
    assert log10_mcnemar(5, 5) == 0.0


def test_wilson_at_another_level():
    from statsmodels.stats.proportion import proportion_confint

    assert wilson_interval(3, 10, 0.8) == pytest.approx(proportion_confint(3, 10, alpha=0.2, method="wilson"))


def test_spearman_undefined_cases_and_the_exact_p():
    nan = spearman_test([1, 2], [2, 1])
    assert math.isnan(nan.rho) and math.isnan(nan.p) and nan.n == 2 and not nan.exact
    assert math.isnan(spearman_test([1, 1, 1, 1], [1, 2, 3, 4]).rho)
    assert spearman_test([1, 2, 3, 4], [1, 1, 1, 1]).n_perm == 0
    t = spearman_test([1, 2, 3, 4, np.nan], [1, 2, 3, 4, 5])
    assert t.n == 4 and t.rho == 1.0 and t.exact and t.n_perm == 24
    assert t.p == pytest.approx(2 / 24)                      # the identity and its reverse, of 4! pairings
    assert spearman_test([1, 2, 3, 4], [1, 2, 3, 4], alternative="greater").p == pytest.approx(1 / 24)
    assert spearman_test([1, 2, 3, 4], [1, 2, 3, 4], alternative="less").p == pytest.approx(1.0)
    three = spearman_test([1, 2, 3], [1, 3, 2])                    # n = 3: all 3! pairings
    assert three.exact and three.n_perm == 6 and three.rho == pytest.approx(0.5)
    # ρ over the 6 pairings: 1, 0.5, 0.5, −0.5, −0.5, −1; greater: 3/6; two-sided: 2·min(3/6, 5/6) capped at 1
    assert three.p == pytest.approx(1.0)
    assert spearman_test([1, 2, 3], [1, 3, 2], alternative="greater").p == pytest.approx(3 / 6)
    nine = spearman_test(np.arange(9), np.arange(9), n_perm=999)   # above the default exact_max_n = 8
    assert not nine.exact and nine.n_perm == 999 and nine.p == pytest.approx(2 / 1000, abs=2e-3)
    big = spearman_test(np.arange(12), np.arange(12), n_perm=0)
    assert big.rho == 1.0 and math.isnan(big.p) and not big.exact and big.n_perm == 0
    with pytest.raises(ValueError, match="alternative"):
        spearman_test([1, 2, 3], [1, 2, 3], alternative="up")


def test_spearman_with_one_random_pairing():
    """n above exact_max_n and n_perm = 1: one random pairing, p = (1 + #as extreme) / 2; a perfect ordering
    of 10 is beaten by none, so the one-sided p is 1/2."""
    t = spearman_test(np.arange(10), np.arange(10), n_perm=1, alternative="greater")
    assert t.rho == pytest.approx(1.0) and not t.exact and t.n_perm == 1 and t.p == 0.5


def test_bh_leaves_nan_out_of_the_family():
    p = [0.01, np.nan, 0.04, 0.03]
    got = bh_adjust(p)
    assert math.isnan(got[1])
    assert got[[0, 2, 3]] == pytest.approx(multipletests([0.01, 0.04, 0.03], method="fdr_bh")[1])
    assert np.isnan(bh_adjust([np.nan, np.nan])).all()


def test_spearman_permutation_defaults_to_random_pairings_above_eight():
    """``spearman_permutation``: (ρ, two-sided p) of ``spearman_test``; n = 9 is above its default exact_max_n
    = 8, so p is from 9999 random pairings, none as extreme as a perfect ordering: 2 · 1/10000."""
    from judgeaudit.stats.tests import spearman_permutation

    rho, p = spearman_permutation(np.arange(9), np.arange(9))
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 10000)


def test_no_resample_asked_gives_no_interval():
    """n_boot ≤ 0 (a negative count too) draws no resample: the value with NaN ends, for any number of clusters."""
    a = np.array([[1, 1, 2, 0, 0], [2, 0, 1, 1, 1.]])
    b = np.array([[2, 0, 2, 0, 0], [2, 0, 1, 1, 1.]])                # the one missed unit found
    for n_boot in (0, -1):
        g, lo, hi = paired_gain(a, b, "recall", n_boot=n_boot)
        assert g == pytest.approx(1.0 - 3 / 4)
        assert math.isnan(lo) and math.isnan(hi)
        v, lo, hi = boot_metric(a, "recall", n_boot=n_boot)
        assert v == pytest.approx(3 / 4) and math.isnan(lo) and math.isnan(hi)


def test_one_resample_gives_its_own_value_as_both_ends():
    """A single resample is an interval of no width at that resample's value (not "no interval")."""
    from judgeaudit.stats.paired import boot_metrics
    from judgeaudit.stats.resample import bootstrap_counts

    counts = np.array([[1, 0, 2, 0, 0], [0, 1, 1, 1, 1], [1, 1, 0, 0, 0], [2, 0, 1, 1, 0]], dtype=float)
    one = metric(bootstrap_counts(4, 1, 5) @ counts, "recall")[0]
    value, lo, hi = boot_metric(counts, "recall", n_boot=1, seed=5)
    assert value == pytest.approx(4 / 6) and lo == hi == pytest.approx(one)
    got = boot_metrics(counts, ["recall", "specificity"], n_boot=1, seed=5)
    assert got["recall"] == (value, lo, hi)
    spec = metric(bootstrap_counts(4, 1, 5) @ counts, "specificity")[0]
    assert got["specificity"][1] == got["specificity"][2] == pytest.approx(spec)


def test_unpaired_arms_are_drawn_with_seeds_seed_and_seed_plus_one():
    """``arm_resamples`` unpaired: A's resample from ``seed``, B's from ``seed + 1``, each over its own units."""
    from judgeaudit.stats.paired import arm_resamples
    from judgeaudit.stats.resample import bootstrap_counts

    wa, wb = arm_resamples(5, 7, paired=False, n_boot=30, seed=11)
    assert np.array_equal(wa, bootstrap_counts(5, 30, 11)) and np.array_equal(wb, bootstrap_counts(7, 30, 12))
    pa, pb = arm_resamples(6, 6, paired=True, n_boot=30, seed=11)
    assert pa is pb and np.array_equal(pa, bootstrap_counts(6, 30, 11))
    with pytest.raises(ValueError):
        arm_resamples(5, 7, paired=True)


def test_one_cluster_resamples_to_itself():
    """A single cluster: every resample is that cluster, so each metric's interval is its value at both ends."""
    from judgeaudit.stats.paired import boot_metrics

    counts = np.array([[2, 1, 3, 1, 1]], dtype=float)
    got = boot_metrics(counts, ["recall", "specificity"], n_boot=50, seed=0)
    assert got["recall"] == pytest.approx((2 / 3, 2 / 3, 2 / 3)) and got["specificity"] == pytest.approx((0.75,) * 3)
    assert boot_metric(counts, "recall", n_boot=50, seed=0) == pytest.approx((2 / 3,) * 3)

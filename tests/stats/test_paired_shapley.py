from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from judgeaudit.stats.paired import boot_metric, cluster_counts, log10_mcnemar, mcnemar_paired, metric, paired_gain
from judgeaudit.stats.shapley import cells, shapley, shapley_weight
from judgeaudit.stats.tests import mcnemar_exact, wilson_interval


def test_mcnemar_exact_matches_the_papers_b173_c25():
    p = mcnemar_exact(173, 25)
    assert p == pytest.approx(2.0e-28, rel=0.05)        # blind-spot §4: "< 10^-27"
    assert p < 1e-27
    assert p == pytest.approx(binomtest(25, 198, 0.5).pvalue, rel=1e-9)


def test_wilson_interval_against_hand_computation_and_statsmodels():
    z = 1.959963984540054
    n, k = 10, 8
    centre = (0.8 + z * z / 20) / (1 + z * z / 10)
    half = z * math.sqrt(0.8 * 0.2 / 10 + z * z / 400) / (1 + z * z / 10)
    lo, hi = wilson_interval(k, n)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (lo, hi) == pytest.approx((0.49016, 0.94332), abs=1e-5)
    assert (lo, hi) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)


def test_rates_gain_and_mcnemar_on_a_hand_table():
    gold = np.array([True, True, False, False])
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    clusters = np.array(["x", "y", "z", "w"])
    _, ca = cluster_counts(gold, a, clusters)
    _, cb = cluster_counts(gold, b, clusters)
    assert metric(ca.sum(0), "recall") == 0.5 and metric(ca.sum(0), "specificity") == 0.5
    assert metric(cb.sum(0), "balanced_accuracy") == 1.0
    assert metric(ca.sum(0), "precision") == 0.5
    gain, lo, hi = paired_gain(ca, cb, "balanced_accuracy", n_boot=500, seed=1)
    assert gain == 0.5 and lo <= 0.5 <= hi
    assert mcnemar_paired(a == gold, b == gold) == {"b": 2, "c": 0, "p": 0.5, "log10_p": pytest.approx(np.log10(0.5))}
    assert log10_mcnemar(173, 25) == pytest.approx(np.log10(mcnemar_exact(173, 25)))
    assert log10_mcnemar(1162, 0) == pytest.approx(-1161 * np.log10(2))   # p = 2 · 2^-1162 underflows


def test_false_alarms_count_complaints_on_clean_units():
    gold = np.array([True, False, False])
    flagged = np.array([True, True, False])
    _, c = cluster_counts(gold, flagged, np.array(["a", "b", "c"]), complaints=np.array([1, 3, 0]))
    assert metric(c.sum(0), "false_alarms_per_clean") == 1.5    # 3 complaints over 2 clean answers


def test_bootstrap_resamples_clusters_not_units():
    rng = np.random.default_rng(0)
    gold = rng.random(40) < 0.5
    flagged = rng.random(40) < 0.6
    ids = np.arange(40).astype(str)
    _, single = cluster_counts(gold, flagged, ids)
    # every unit twice in its own cluster: the cluster bootstrap must give the very same interval
    _, doubled = cluster_counts(np.repeat(gold, 2), np.repeat(flagged, 2), np.repeat(ids, 2))
    a = boot_metric(single, "balanced_accuracy", n_boot=300, seed=3)
    b = boot_metric(doubled, "balanced_accuracy", n_boot=300, seed=3)
    assert a == pytest.approx(b)
    # resampling the 80 units instead would narrow it
    _, units = cluster_counts(np.repeat(gold, 2), np.repeat(flagged, 2), np.arange(80).astype(str))
    c = boot_metric(units, "balanced_accuracy", n_boot=300, seed=3)
    assert (c[2] - c[1]) < (a[2] - a[1])


def test_shapley_two_factor_by_hand():
    v = {frozenset(): 0.0, frozenset("a"): 0.2, frozenset("b"): 0.5, frozenset("ab"): 1.0}
    phi = shapley(v, ["a", "b"])
    assert phi == pytest.approx({"a": 0.35, "b": 0.65})


def test_shapley_three_factor_by_hand_and_efficiency():
    w = {"Q": 0.1, "S": 0.4, "T": -0.05}

    def v(a):
        return sum(w[f] for f in a) + (0.3 if {"Q", "S"} <= a else 0.0)

    phi = shapley(v, ["Q", "S", "T"])
    assert phi == pytest.approx({"Q": 0.25, "S": 0.55, "T": -0.05})  # the interaction split evenly
    assert sum(phi.values()) == pytest.approx(v(frozenset("QST")) - v(frozenset()))
    assert [shapley_weight(s, 3) for s in range(3)] == pytest.approx([1 / 3, 1 / 6, 1 / 3])
    assert [shapley_weight(s, 4) for s in range(4)] == pytest.approx([1 / 4, 1 / 12, 1 / 12, 1 / 4])


def test_shapley_efficiency_on_random_five_factor_games():
    rng = np.random.default_rng(7)
    factors = list("ABCDE")
    vals = {c: float(rng.normal()) for c in cells(factors)}
    assert len(vals) == 32
    phi = shapley(vals, factors)
    assert sum(phi.values()) == pytest.approx(vals[frozenset(factors)] - vals[frozenset()])
    with pytest.raises(ValueError):
        cells(list("ABCDEF"))


def test_every_metric_on_one_resample_gives_each_metrics_own_interval():
    """``boot_metrics``/``paired_gains`` draw the cluster resample once for all metrics: the numbers are those of
    ``boot_metric``/``paired_gain`` metric by metric, undefined ones (no clean unit) included."""
    import numpy as np

    from judgeaudit.stats.paired import METRICS, boot_metric, boot_metrics, paired_gain, paired_gains

    rng = np.random.default_rng(7)
    a, b = (rng.integers(0, 3, (60, 5)).astype(float) for _ in range(2))
    no_clean = a.copy()
    no_clean[:, 2:4] = 0
    for counts in (a, no_clean):
        many = boot_metrics(counts, METRICS, n_boot=400, seed=3)
        for m in METRICS:
            np.testing.assert_array_equal(many[m], boot_metric(counts, m, n_boot=400, seed=3))
    gains = paired_gains(a, b, METRICS, n_boot=400, seed=3)
    assert gains == {m: paired_gain(a, b, m, n_boot=400, seed=3) for m in METRICS}
    assert np.isnan(boot_metrics(no_clean, ["specificity"], n_boot=400, seed=3)["specificity"][0])
    v, lo, hi = boot_metrics(a, ["recall"], n_boot=0)["recall"]
    assert v == boot_metric(a, "recall", n_boot=0)[0] and np.isnan(lo) and np.isnan(hi)

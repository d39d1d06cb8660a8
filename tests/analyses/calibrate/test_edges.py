"""Intervals at the edges: labels that do not vary, a rare class, labels at a scale's end.

The normal PPI++ and human-only intervals estimate the labels' spread from the labels; 10 labels of a 3%
class are all 0 and both intervals had width 0 (``0.000 [0.000, 0.000]``, n_eff = inf). Every interval
``calibrate`` prints must keep its coverage there: the hardest cells of ``benchmarks/calibrate.py``'s
table, 400 data sets each (fixed seeds), cover at ≥ 0.93 (the measured values are in the comments).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from judgeaudit.analyses.calibrate.simulate import END_TRUTH, binary_sets, graded_end_sets, guarded_batch

from judgeaudit.analyses.calibrate import calibrate
from judgeaudit.analyses.calibrate.edges import MIN_SUPPORT, clopper_pearson, hoeffding, support

SETS = 400


def _table(y, yh, yu):
    n, big_n = len(y), len(yu)
    return pd.DataFrame({"id": [f"i{k}" for k in range(n + big_n)], "yhat": np.concatenate([yh, yu]),
                         "y": np.concatenate([y, np.full(big_n, np.nan)])})


def test_ten_labels_of_a_rare_class_all_zero_give_an_exact_interval_not_a_point():
    # prevalence 0.03: 10 random labels, all 0; the judge (TPR 0.85, TNR 0.75) says 1 on about a quarter
    y, yh, yu = binary_sets(1, 10, 990, p=0.03, seed=2)
    assert y.sum() == 0
    r = calibrate(_table(y[0], yh[0], yu[0]), "pass_rate", n_boot=200)
    assert r.human.ci == pytest.approx(clopper_pearson(0, 10))           # [0, 0.3085]
    assert r.human.ci[1] == pytest.approx(1 - 0.025 ** (1 / 10))
    for e in (r.ppi, r.ppi_plain, r.human):
        assert e.ci[1] - e.ci[0] > 0.3 and e.ci[0] <= 0.03 <= e.ci[1]
    assert r.n_eff is None and r.widened == "Clopper–Pearson (exact)"
    assert r.to_dict()["ppi"]["normal_ci"][1] - r.to_dict()["ppi"]["normal_ci"][0] == pytest.approx(0, abs=1e-9)
    assert any("only 0 of 10 labels are positive" in s and f"at least {MIN_SUPPORT}" in s for s in r.notes)


def test_two_labels_both_one():
    y, yh = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    yu = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    r = calibrate(_table(y, yh, yu), "pass_rate", n_boot=100)
    assert r.human.ci == pytest.approx((0.025 ** 0.5, 1.0))             # exact: [0.158, 1]
    assert r.ppi.ci[0] <= 0.025 ** 0.5 + 1e-12 and r.ppi.ci[1] == 1.0
    assert r.n_eff is None


def test_a_graded_scale_whose_labels_are_all_at_its_top():
    # 1–5 scale, truth 4.42; 10 labels, all 5: the normal intervals are [5, 5]
    y = np.full(10, 5.0)
    rng = np.random.default_rng(1)
    yu = np.minimum(5.0, rng.choice(np.arange(1.0, 6.0), 500, p=[0.02, 0.03, 0.07, 0.27, 0.61]) + 1)
    r = calibrate(_table(y, np.full(10, 5.0), yu), "mean", n_boot=100, scale=(1, 5))
    lo, hi = hoeffding(y, 1, 5)
    assert (lo, hi) == pytest.approx((5 - 4 * np.sqrt(np.log(40) / 20), 5.0))
    assert r.ppi.ci[0] <= lo and r.ppi.ci[0] <= END_TRUTH <= r.ppi.ci[1]
    assert r.human.ci == pytest.approx((lo, hi)) and r.n_eff is None
    assert r.widened == "Hoeffding on the scale [1, 5]" and r.support == 0.0


def test_support_is_the_rarer_class_count():
    assert support(np.array([1, 0, 0, 0, 1, 0.0]), 0, 1) == pytest.approx(2.0)
    assert support(np.array([5, 5, 4, 5.0]), 1, 5) == pytest.approx(4 * 0.25 / 4)


@pytest.mark.parametrize("p, n", [(0.01, 10), (0.05, 40), (0.05, 200), (0.3, 40)])
def test_printed_binary_intervals_cover_in_the_hardest_cells(p, n):
    y, yh, yu = binary_sets(SETS, n, 2000, p=p, seed=int(1000 * p) + n)
    _, lo, hi, _ = guarded_batch(y, yh, yu, 0.0, 1.0, binary=True)
    cover = np.mean((lo <= p) & (p <= hi))
    # measured 0.998 / 0.995 / 0.970 / 0.945 (the normal PPI++ interval alone: 0.06 / 0.87 / 0.93 / 0.92)
    assert cover >= 0.93, cover
    assert np.all(hi - lo > 0)


@pytest.mark.parametrize("n", [10, 40, 200])
def test_printed_graded_intervals_cover_at_the_scales_end(n):
    y, yh, yu = graded_end_sets(SETS, n, 2000, seed=n)
    _, lo, hi, _ = guarded_batch(y, yh, yu, 1.0, 5.0, binary=False)
    cover = np.mean((lo <= END_TRUTH) & (END_TRUTH <= hi))
    assert cover >= 0.93, cover     # measured 1.000 / 1.000 / 0.945 (normal alone: 0.80 / 0.89 / 0.945)
    assert np.all(hi - lo > 0)


def test_the_batch_guard_is_calibrates():
    for (y, yh, yu), target, scale, lohi in ((binary_sets(6, 20, 300, p=0.1, seed=4), "pass_rate", None, (0, 1)),
                                               (graded_end_sets(6, 40, 300, seed=5), "mean", (1, 5), (1, 5))):
        _, lo, hi, widened = guarded_batch(y, yh, yu, *lohi, binary=target == "pass_rate")
        for i in range(6):
            r = calibrate(_table(y[i], yh[i], yu[i]), target, n_boot=50, scale=scale)
            assert r.ppi.ci == pytest.approx((lo[i], hi[i]), abs=1e-12)
            assert (r.widened is not None) == widened[i]

"""The Rogan–Gladen correction on hand-counted cases."""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.analyses.calibrate.rogan_gladen import rogan_gladen


def _labelled(tp, fn, tn, fp):
    y = np.array([1] * tp + [1] * fn + [0] * tn + [0] * fp, dtype=bool)
    yh = np.array([1] * tp + [0] * fn + [0] * tn + [1] * fp, dtype=bool)
    return y, yh


def test_planted_rates_give_the_formula():
    y, yh = _labelled(tp=40, fn=10, tn=120, fp=30)     # TPR 0.8, TNR 0.8
    yu = np.array([1] * 380 + [0] * 620, dtype=bool)  # q = 0.38
    r = rogan_gladen(y, yh, yu, n_boot=500)
    assert (r.tpr, r.tnr, r.q) == (0.8, 0.8, 0.38)
    assert r.estimate == pytest.approx((0.38 + 0.8 - 1) / (0.8 + 0.8 - 1))   # 0.30
    assert r.ci[0] < 0.3 < r.ci[1]


def test_truncated_to_the_unit_interval():
    y, yh = _labelled(tp=45, fn=5, tn=45, fp=5)
    r = rogan_gladen(y, yh, np.zeros(100, dtype=bool), n_boot=200)
    assert r.estimate == 0.0     # (0 + 0.9 − 1)/0.8 < 0


def test_a_chance_judge_has_no_estimate():
    y, yh = _labelled(tp=10, fn=10, tn=10, fp=10)
    r = rogan_gladen(y, yh, np.ones(50, dtype=bool), n_boot=200)
    assert r.estimate is None and r.ci is None and "TPR + TNR" in r.note


def test_too_many_undefined_resamples_gives_no_interval():
    y, yh = _labelled(tp=1, fn=0, tn=3, fp=0)   # one positive: a resample without it has no TPR
    r = rogan_gladen(y, yh, np.array([1, 0, 0, 0] * 10, dtype=bool), n_boot=400)
    assert r.estimate == pytest.approx(0.25)
    assert r.ci is None and r.undefined_resamples > 10


def test_no_interval_when_the_labels_show_no_false_negative():
    # 10 labels at prevalence 0.3: 3 positives all found, 1 false positive — every resample has TPR = 1
    y, yh = _labelled(tp=3, fn=0, tn=6, fp=1)
    r = rogan_gladen(y, yh, np.array([1] * 40 + [0] * 60, dtype=bool), n_boot=400)
    assert r.ci is None and "no false negative" in r.note
    assert r.estimate == pytest.approx((0.4 + 6 / 7 - 1) / (1 + 6 / 7 - 1))
    assert r.tpr == 1.0 and r.tpr_ci == pytest.approx((0.025 ** (1 / 3), 1.0))      # exact: [0.292, 1]
    assert r.tnr_ci[0] < 6 / 7 < r.tnr_ci[1]
    d = r.to_dict()
    assert d["tpr_ci"] == pytest.approx(list(r.tpr_ci)) and d["table"] == {"tp": 3, "fn": 0, "tn": 6, "fp": 1}


def test_no_interval_when_the_labels_show_no_false_positive():
    y, yh = _labelled(tp=40, fn=10, tn=150, fp=0)
    r = rogan_gladen(y, yh, np.array([1] * 30 + [0] * 70, dtype=bool), n_boot=300)
    assert r.ci is None and "no false positive" in r.note and r.tnr_ci[1] == 1.0


def test_rates_carry_exact_intervals():
    from statsmodels.stats.proportion import proportion_confint

    y, yh = _labelled(tp=40, fn=10, tn=120, fp=30)
    r = rogan_gladen(y, yh, np.zeros(100, dtype=bool), n_boot=100)
    assert r.tpr_ci == pytest.approx(proportion_confint(40, 50, alpha=0.05, method="beta"))
    assert r.tnr_ci == pytest.approx(proportion_confint(120, 150, alpha=0.05, method="beta"))


def test_printed_intervals_cover_with_ten_labels():
    """n = 10, prevalence 0.3: intervals with an empty cell covered 0 of 29; the printed ones now cover."""
    from judgeaudit.analyses.calibrate.rogan_gladen import rogan_gladen_batch
    from judgeaudit.analyses.calibrate.simulate import binary_sets

    for n in (10, 40):
        y, yh, yu = binary_sets(400, n, 2000, p=0.3, seed=30 + n)
        yb, yhb = y.astype(bool), yh.astype(bool)
        cells = [(yb & yhb).sum(1), (yb & ~yhb).sum(1), (~yb & ~yhb).sum(1), (~yb & yhb).sum(1)]
        _, lo, hi = rogan_gladen_batch(*cells, yu.sum(1), 2000, n_boot=400, seed=1)
        printed = ~np.isnan(lo)
        assert not np.any(printed & (np.min(cells, axis=0) == 0))
        cover = np.mean((lo[printed] <= 0.3) & (0.3 <= hi[printed]))
        assert cover >= 0.93, (n, cover, printed.mean())   # measured: 1 of 400 printed (covers); 0.937 of 319

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

"""The built-in PPI++ estimator: its definition's corner cases, and equality with ppi-python's
``ppi_mean_ci`` / ``ppi_mean_pointestimate`` / ``classical_mean_ci`` (the ``calibrate`` extra)."""

from __future__ import annotations

import numpy as np
import pytest
from judgeaudit.analyses.calibrate.simulate import binary_sets, graded_sets, ppi_batch

from judgeaudit.analyses.calibrate import (classical_mean_ci, n_effective, ppi_lambda, ppi_mean_ci,
                                           ppi_mean_pointestimate, ppi_mean_se, width_bound)


def _sets():
    rng = np.random.default_rng(7)
    out = []
    for n, big_n in ((50, 500), (200, 2000), (30, 31), (100, 5000), (20, 1000), (500, 600)):
        y, yh, yu = binary_sets(1, n, big_n, seed=n)
        out.append((y[0], yh[0], yu[0]))
        y, yh, yu = graded_sets(1, n, big_n, seed=big_n)
        out.append((y[0], yh[0], yu[0]))
    # an anti-correlated judge (λ clipped at 0) and a judge better than its labels' spread (λ clipped at 1)
    y = rng.normal(0, 1, 80)
    out.append((y, -y + rng.normal(0, 0.1, 80), rng.normal(0, 1, 400)))
    out.append((y, 0.5 * y, 0.5 * rng.normal(0, 1, 4000)))
    return out


SETS = _sets()


@pytest.mark.parametrize("k", range(len(SETS)))
def test_equals_ppi_python(k):
    ppi_py = pytest.importorskip("ppi_py", reason="the calibrate extra (ppi-python) is not installed")
    y, yh, yu = SETS[k]
    lo, hi = ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05)
    assert ppi_mean_ci(y, yh, yu, 0.95) == pytest.approx((float(np.ravel(lo)[0]), float(np.ravel(hi)[0])),
                                                         abs=1e-8)
    assert ppi_mean_pointestimate(y, yh, yu) == pytest.approx(
        float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yh, yu))[0]), abs=1e-8)
    for lam in (0.0, 0.5, 1.0):
        lo, hi = ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.1, lam=lam)
        assert ppi_mean_ci(y, yh, yu, 0.9, lam=lam) == pytest.approx((float(np.ravel(lo)[0]),
                                                                      float(np.ravel(hi)[0])), abs=1e-8)
    lo, hi = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert classical_mean_ci(y) == pytest.approx((float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-8)


def test_lambda_zero_is_the_human_only_interval_and_one_is_plain_ppi():
    y, yh, yu = SETS[1]
    assert ppi_mean_ci(y, yh, yu, lam=0.0) == pytest.approx(classical_mean_ci(y), abs=1e-12)
    assert ppi_mean_pointestimate(y, yh, yu, lam=1.0) == pytest.approx(yu.mean() + (y - yh).mean(), abs=1e-12)


def test_lambda_is_clipped_and_a_constant_judge_carries_nothing():
    y, yh, yu = SETS[-2]
    assert ppi_lambda(y, yh, yu) == 0.0
    y, yh, yu = SETS[-1]
    assert ppi_lambda(y, yh, yu) == 1.0
    y = np.array([0.0, 1, 1, 0, 1])
    assert ppi_lambda(y, np.ones(5), np.ones(10)) == 0.0
    assert ppi_mean_ci(y, np.ones(5), np.ones(10)) == pytest.approx(classical_mean_ci(y))


def test_n_eff_is_the_human_sample_size_of_the_same_width():
    y, yh, yu = SETS[3]
    w_ppi = np.diff(ppi_mean_ci(y, yh, yu))[0]
    n_eff = n_effective(y, yh, yu)
    # a human-only interval over n_eff labels of the same spread has the PPI interval's width
    assert 2 * 1.959963984540054 * np.std(y) / np.sqrt(n_eff) == pytest.approx(w_ppi, rel=1e-12)
    assert n_eff > len(y)   # a correlated judge is worth more than its labels alone


def test_batch_formulas_match_the_per_set_functions():
    y, yh, yu = binary_sets(5, 60, 300, seed=3)
    est, se, lam = ppi_batch(y, yh, yu)
    for i in range(5):
        assert est[i] == pytest.approx(ppi_mean_pointestimate(y[i], yh[i], yu[i]), abs=1e-12)
        assert se[i] == pytest.approx(ppi_mean_se(y[i], yh[i], yu[i]), abs=1e-12)
        assert lam[i] == pytest.approx(ppi_lambda(y[i], yh[i], yu[i]), abs=1e-12)


@pytest.mark.parametrize("k", range(len(SETS)))
def test_width_never_exceeds_its_bound(k):
    y, yh, yu = SETS[k]
    assert np.diff(ppi_mean_ci(y, yh, yu))[0] <= width_bound(y, yh, yu) + 1e-12


def test_the_python_api_reports_every_interval_side_by_side():
    import pandas as pd

    import judgeaudit

    y, yh, yu = binary_sets(1, 150, 900, seed=21)
    table = pd.DataFrame({"id": [f"i{k}" for k in range(1050)], "yhat": np.concatenate([yh[0], yu[0]]),
                          "y": np.concatenate([y[0], np.full(900, np.nan)])})
    r = judgeaudit.calibrate(table, "pass_rate", n_boot=300)
    f = r.to_frame().set_index("method")
    assert list(f.index) == ["PPI++ (λ tuned)", "PPI (λ = 1)", "human labels only", "judge only (naive)",
                             "Rogan–Gladen"]
    assert (f.loc["PPI++ (λ tuned)", "lo"], f.loc["PPI++ (λ tuned)", "hi"]) == pytest.approx(
        ppi_mean_ci(y[0], yh[0], yu[0]))
    assert f.loc["human labels only", "n"] == 150 and f.loc["judge only (naive)", "n"] == 1050

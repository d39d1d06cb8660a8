"""Coverage of the nominal 95% intervals on simulated judged sets with a planted judge bias.

A binary judge with TPR 0.85 and TNR 0.75 on items of prevalence 0.3 says "pass" on 43% of them:
the naive judge-only interval is centred 0.13 away from the truth. PPI++ and Rogan–Gladen carry the
judge's errors and must cover at 93–97% over 1,000 data sets (Monte Carlo s.e. ≈ 0.7 pp); the naive
interval must collapse. The same for a graded judge that scores 0.8 points high.
"""

from __future__ import annotations

import numpy as np
from judgeaudit.analyses.calibrate.simulate import binary_sets, graded_sets, ppi_batch

from judgeaudit.analyses.calibrate.rogan_gladen import counts, rogan_gladen, rogan_gladen_batch

Z = 1.959963984540054
SETS = 1000


def _naive_covers(yh, yu, truth):
    allh = np.concatenate([yh, yu], axis=1)
    return np.abs(allh.mean(1) - truth) <= Z * allh.std(1) / np.sqrt(allh.shape[1])


def test_ppi_covers_a_biased_binary_judge_where_the_naive_interval_collapses():
    y, yh, yu = binary_sets(2 * SETS, 200, 2000, seed=11)     # 2,000 sets: Monte Carlo s.e. ≈ 0.5 pp
    est, se, _ = ppi_batch(y, yh, yu)
    ppi = np.mean(np.abs(est - 0.3) <= Z * se)                # measured 0.946
    naive = np.mean(_naive_covers(yh, yu, 0.3))
    assert 0.93 <= ppi <= 0.97, ppi
    assert naive <= 0.05, naive          # measured: 0.000
    assert ppi - naive >= 0.88


def test_ppi_covers_a_biased_graded_judge():
    y, yh, yu = graded_sets(SETS, 200, 2000, seed=12)
    est, se, _ = ppi_batch(y, yh, yu)
    ppi = np.mean(np.abs(est - 5.0) <= Z * se)                # measured 0.956
    naive = np.mean(_naive_covers(yh, yu, 5.0))                # measured 0.000
    assert 0.93 <= ppi <= 0.97, ppi
    assert naive <= 0.05, naive


def test_ppi_with_lambda_tuned_is_never_wider_than_the_human_only_interval_beyond_its_bound():
    """On every data set: width_PPI² ≤ width_human² + (2z·λ̂)²·max(E, 0) (the algebraic bound of
    ``ppi.width_bound``); and on average over the sets, no wider than the human-only interval."""
    for sets in (binary_sets(SETS, 50, 500, seed=13), graded_sets(SETS, 200, 2000, seed=14),
                 binary_sets(SETS, 50, 500, tpr=0.5, tnr=0.5, seed=15)):   # a useless judge: λ̂ near 0
        y, yh, yu = sets
        _, se, lam = ppi_batch(y, yh, yu)
        n, big_n = y.shape[1], yu.shape[1]
        pooled = np.var(np.concatenate([yh, yu], axis=1), axis=1, ddof=1)
        excess = (np.var(yh, axis=1) - pooled) / n + (np.var(yu, axis=1) - pooled) / big_n
        se0 = np.std(y, axis=1) / np.sqrt(n)
        assert np.all(se ** 2 <= se0 ** 2 + lam ** 2 * np.maximum(excess, 0) + 1e-15)
        assert np.mean(se) <= np.mean(se0) * 1.0001
        # the bound's slack is small: at most 2% wider than the human-only interval on any set
        assert np.max(se / se0) <= 1.02, np.max(se / se0)


def test_rogan_gladen_covers_a_biased_binary_judge():
    y, yh, yu = binary_sets(SETS, 300, 3000, seed=16)
    yb, yhb = y.astype(bool), yh.astype(bool)
    tp, fn = (yb & yhb).sum(1), (yb & ~yhb).sum(1)
    tn, fp = (~yb & ~yhb).sum(1), (~yb & yhb).sum(1)
    est, lo, hi = rogan_gladen_batch(tp, fn, tn, fp, yu.sum(1), yu.shape[1], n_boot=1000, seed=17)
    cover = np.mean((lo <= 0.3) & (0.3 <= hi))                # measured 0.946
    naive = np.mean(_naive_covers(yh, yu, 0.3))
    assert 0.93 <= cover <= 0.97, cover
    assert naive <= 0.05
    assert abs(np.mean(est) - 0.3) < 0.005   # corrected on average (the naive rate is 0.43)


def test_batch_rogan_gladen_is_the_per_set_estimator():
    y, yh, yu = binary_sets(3, 120, 900, seed=18)
    for i in range(3):
        r = rogan_gladen(y[i] == 1, yh[i] == 1, yu[i] == 1, n_boot=500, seed=5)
        tp, fn, tn, fp = counts(y[i] == 1, yh[i] == 1)
        est, _, _ = rogan_gladen_batch([tp], [fn], [tn], [fp], [int(yu[i].sum())], 900, n_boot=500, seed=5)
        assert r.estimate == est[0]

"""Stratified PPI++ on labels drawn per stratum at different rates."""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.analyses.calibrate.ppi import ppi_mean_ci
from judgeaudit.analyses.calibrate.strata import stratified

Z = 1.959963984540054


def _world(rng, n_a=60, n_b=60, big=(1600, 400)):
    """Stratum A: 80% of the items, prevalence 0.1, a judge with TPR 0.9 / TNR 0.9; stratum B: 20%,
    prevalence 0.6, TPR 0.6 / TNR 0.95. Labels: n_a of A's items and n_b of B's (B over-sampled)."""
    yh, y, s = [], [], []
    for name, size, n, p, tpr, tnr in (("A", big[0], n_a, 0.1, 0.9, 0.9), ("B", big[1], n_b, 0.6, 0.6, 0.95)):
        t = rng.random(size) < p
        v = np.where(t, rng.random(size) < tpr, rng.random(size) >= tnr)
        lab = np.zeros(size, dtype=bool)
        lab[:n] = True
        yh.append(v.astype(float))
        y.append(np.where(lab, t.astype(float), np.nan))
        s += [name] * size
    return np.concatenate(yh), np.concatenate(y), np.array(s)


def test_stratified_covers_where_the_pooled_estimate_is_biased():
    truth = 0.8 * 0.1 + 0.2 * 0.6                   # 0.20
    rng = np.random.default_rng(0)
    strat, pooled = [], []
    for _ in range(200):
        yh, y, s = _world(rng)
        r = stratified(yh, y, s, lo=0.0, hi=1.0, binary=True)
        strat.append(r["ci"][0] <= truth <= r["ci"][1])
        lab = ~np.isnan(y)
        lo, hi = ppi_mean_ci(y[lab], yh[lab], yh[~lab])
        pooled.append(lo <= truth <= hi)
    assert np.mean(strat) >= 0.93, np.mean(strat)   # measured 0.99 (stratum A: ~6 positives, the Bonferroni sum)
    assert np.mean(pooled) <= 0.5, np.mean(pooled)  # measured 0.125: B's labels weigh as if B were half the items


def test_the_estimate_is_the_weighted_stratum_estimates():
    rng = np.random.default_rng(1)
    yh, y, s = _world(rng, n_a=200, n_b=150)
    r = stratified(yh, y, s, lo=0.0, hi=1.0, binary=True)
    assert [row["weight"] for row in r["strata"]] == pytest.approx([0.8, 0.2])
    assert r["estimate"] == pytest.approx(sum(row["weight"] * row["estimate"] for row in r["strata"]))
    se = np.sqrt(sum((row["weight"] * row["se"]) ** 2 for row in r["strata"]))
    assert r["interval"].startswith("normal") and r["ci"] == pytest.approx([r["estimate"] - Z * se,
                                                                             r["estimate"] + Z * se])


def test_a_stratum_without_support_gives_the_bonferroni_sum():
    rng = np.random.default_rng(2)
    yh, y, s = _world(rng, n_a=20, n_b=150)        # 20 labels of a 10% class: about 2 positives
    r = stratified(yh, y, s, lo=0.0, hi=1.0, binary=True)
    assert r["interval"].startswith("Σ w_k")
    assert r["ci"] == pytest.approx([sum(row["weight"] * row["ci_bonferroni"][i] for row in r["strata"])
                                     for i in (0, 1)])
    with pytest.raises(ValueError, match="stratum 'B'"):
        stratified(yh, np.where(s == "B", np.nan, y), s, lo=0.0, hi=1.0, binary=True)

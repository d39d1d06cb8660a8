"""PPI++ at its edges: the width bound is the module's algebra and is tight (it equals the human-only
and the tuned width when λ̂ = 0), the standard error and λ̂ by their formulas, exactly 2 labelled
items, and the inputs refused."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from judgeaudit.analyses.calibrate.ppi import (classical_mean_ci, n_effective, naive_mean_ci, ppi_lambda,
                                               ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_se, width_bound,
                                               z_interval)

Z95 = norm.ppf(0.975)


def _data(seed, n=40, big_n=300, noise=0.6):
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 1, n)
    return y, y + rng.normal(0, noise, n), rng.normal(0, 1.1, big_n)


def _by_hand(y, yh, yu):
    n, big_n = len(y), len(yu)
    c = np.mean((y - y.mean()) * (yh - yh.mean()))
    pooled = np.var(np.concatenate([yh, yu]), ddof=1)
    lam = min(max(c / ((1 + n / big_n) * pooled), 0.0), 1.0)
    se = np.sqrt(lam ** 2 * np.var(yu) / big_n + np.var(y - lam * yh) / n)
    excess = (np.var(yh) - pooled) / n + (np.var(yu) - pooled) / big_n
    bound = 2 * Z95 * np.sqrt(np.var(y) / n + lam ** 2 * max(excess, 0.0))
    est = lam * yu.mean() + np.mean(y - lam * yh)
    return lam, est, se, bound, excess


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_lambda_estimate_se_and_bound_are_the_formulas(seed):
    y, yh, yu = _data(seed, n=20 + 10 * seed, big_n=50 + 200 * seed)
    lam, est, se, bound, _ = _by_hand(y, yh, yu)
    assert 0 < lam < 1
    assert ppi_lambda(y, yh, yu) == pytest.approx(lam, rel=1e-12)
    assert ppi_mean_pointestimate(y, yh, yu) == pytest.approx(est, rel=1e-12)
    assert ppi_mean_se(y, yh, yu) == pytest.approx(se, rel=1e-12)
    assert ppi_mean_ci(y, yh, yu) == pytest.approx((est - Z95 * se, est + Z95 * se), rel=1e-12)
    assert width_bound(y, yh, yu) == pytest.approx(bound, rel=1e-12)
    assert n_effective(y, yh, yu) == pytest.approx(np.var(y) / se ** 2, rel=1e-12)


def test_the_bound_is_tight_where_lambda_is_zero():
    """An anti-correlated judge: λ̂ = 0, so the tuned interval is the human-only one and the bound is
    exactly its width (a bound √n too wide, or any slack, fails here)."""
    y, yh, yu = _data(5)
    yh = -yh
    assert ppi_lambda(y, yh, yu) == 0.0
    human = np.diff(classical_mean_ci(y))[0]
    assert width_bound(y, yh, yu) == pytest.approx(human, rel=1e-12)
    assert width_bound(y, yh, yu) == pytest.approx(np.diff(ppi_mean_ci(y, yh, yu))[0], rel=1e-12)
    assert width_bound(y, yh, yu) == pytest.approx(2 * Z95 * np.std(y) / np.sqrt(len(y)), rel=1e-12)
    assert width_bound(y, yh, yu, level=0.9) == pytest.approx(human * norm.ppf(0.95) / Z95, rel=1e-12)


def test_the_variance_split_term_counts_only_when_positive():
    """E > 0 (labelled verdicts spread wider than the pool) widens the bound; E < 0 does not."""
    rng = np.random.default_rng(11)
    y = rng.normal(0, 1, 30)
    yh = 2 * y + rng.normal(0, 0.3, 30)                 # verdicts on the labelled items spread widely
    yu = rng.normal(0, 0.5, 400)
    lam, _, _, bound, excess = _by_hand(y, yh, yu)
    assert excess > 0 and lam > 0
    human = np.diff(classical_mean_ci(y))[0]
    assert width_bound(y, yh, yu) == pytest.approx(bound, rel=1e-12) and bound > human
    yh2 = 0.3 * y + rng.normal(0, 0.1, 30)
    yu2 = rng.normal(0, 2.0, 400)
    lam2, _, _, _, excess2 = _by_hand(y, yh2, yu2)
    assert excess2 < 0 and lam2 > 0
    assert width_bound(y, yh2, yu2) == pytest.approx(human, rel=1e-12)


def test_exactly_two_labelled_items():
    y, yh, yu = np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1, 1, 0, 1, 1])
    lam, est, se, bound, _ = _by_hand(y, yh, yu)
    assert ppi_lambda(y, yh, yu) == pytest.approx(lam) and ppi_mean_pointestimate(y, yh, yu) == pytest.approx(est)
    assert ppi_mean_se(y, yh, yu) == pytest.approx(se) and width_bound(y, yh, yu) == pytest.approx(bound)
    two = np.array([0.0, 1.0])                                    # exactly 2 unlabelled items too
    assert ppi_mean_pointestimate(y, yh, two) == pytest.approx(_by_hand(y, yh, two)[1])
    with pytest.raises(ValueError, match="at least 2 labelled and 2 unlabelled"):
        ppi_mean_ci([1.0], [1.0], yu)
    with pytest.raises(ValueError, match="at least 2 labelled and 2 unlabelled"):
        ppi_lambda(y, yh, [1.0])
    with pytest.raises(ValueError, match="paired"):
        ppi_mean_se(y, yh[:1], yu)


def test_zero_width_and_the_naive_and_z_intervals():
    y = np.ones(5)
    assert n_effective(y, np.ones(5), np.ones(8)) == float("inf")
    assert z_interval(1.0, 0.5, 0.9) == pytest.approx((1 - 0.5 * norm.ppf(0.95), 1 + 0.5 * norm.ppf(0.95)))
    v = np.array([0.0, 1, 1, 1])
    assert naive_mean_ci(v) == pytest.approx((0.75 - Z95 * np.std(v) / 2, 0.75 + Z95 * np.std(v) / 2))
    assert ppi_mean_ci(*_data(1), lam=1.0, level=0.8)[1] - ppi_mean_ci(*_data(1), lam=1.0, level=0.8)[0] == \
        pytest.approx(2 * norm.ppf(0.9) * ppi_mean_se(*_data(1), lam=1.0), rel=1e-12)

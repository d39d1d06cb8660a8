"""Prediction-powered inference for a mean, with power tuning (PPI++).

Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference": with human
labels ``Y`` and judge verdicts ``Ŷ`` on ``n`` labelled items, and verdicts ``Ŷᵘ`` on ``N`` unlabelled
items, the power-tuned estimate of the mean is

    θ̂_λ = λ·mean(Ŷᵘ) + mean(Y − λŶ)

with standard error ``se_λ² = λ²·var(Ŷᵘ)/N + var(Y − λŶ)/n`` (variances with divisor N and n) and
the interval ``θ̂_λ ± z₁₋α/₂·se_λ``. λ = 1 is plain PPI, λ = 0 the human-only (classical) estimate.
The tuned λ minimises the estimated variance:

    λ̂ = cov(Y, Ŷ) / ((1 + n/N)·var(Ŷ ∪ Ŷᵘ)),   clipped to [0, 1],

``cov`` with divisor n over the labelled items, ``var`` the unbiased variance of the verdicts of all
n + N items. These are the semantics of ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (version
0.2.3, ``lam=None``, unweighted, one coordinate), to which ``tests/analyses/calibrate`` holds this
module to 1e-8; the human-only interval is ``ppi_py.classical_mean_ci``'s.

**Width bound** (algebra, not asymptotics). Write v_Y, v_h, v_u for the divisor-n/N variances of
Y, Ŷ and Ŷᵘ, c = cov(Y, Ŷ), v̄ the pooled variance in λ̂ and se₀² = v_Y/n the human-only variance:

    se_λ² = se₀² − (λ/n)·[2c − λ·v̄·(1 + n/N)] + λ²·E,   E = (v_h − v̄)/n + (v_u − v̄)/N.

For λ̂ = clip(c / ((1 + n/N)·v̄), 0, 1) the bracketed term is ≥ 0 (λ̂ = 0 when c ≤ 0; it is c
at the unclipped optimum and larger when clipped at 1), so ``se_λ̂² ≤ se₀² + λ̂²·max(E, 0)``: the
tuned interval is never wider than the human-only one but for the variance-split term E, which
vanishes as n and N grow (``width_bound``; tested on every simulated data set).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def _arrays(y, yhat, yhat_unlabelled) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001
    y, yhat, yu = (np.asarray(a, dtype=float).ravel() for a in (y, yhat, yhat_unlabelled))
    if len(y) != len(yhat):
        raise ValueError("Y and Yhat must be paired (one verdict per labelled item)")
    if len(y) < 2 or len(yu) < 2:
        raise ValueError("PPI needs at least 2 labelled and 2 unlabelled items")
    return y, yhat, yu


def ppi_lambda(y, yhat, yhat_unlabelled) -> float:  # noqa: ANN001
    """The power-tuning parameter λ̂ of PPI++ (the variance-minimising λ), clipped to [0, 1]; 0 when the
    verdicts do not vary (a constant judge carries no information)."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    n, big_n = len(y), len(yu)
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    pooled = float(np.var(np.concatenate([yhat, yu]), ddof=1))
    if pooled == 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * pooled), 0.0, 1.0))


def ppi_mean_pointestimate(y, yhat, yhat_unlabelled, lam: float | None = None) -> float:  # noqa: ANN001
    """θ̂_λ; λ tuned (``ppi_lambda``) when ``lam`` is None."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    lam = ppi_lambda(y, yhat, yu) if lam is None else float(lam)
    return float(lam * yu.mean() + np.mean(y - lam * yhat))


def ppi_mean_se(y, yhat, yhat_unlabelled, lam: float | None = None) -> float:  # noqa: ANN001
    """The standard error of θ̂_λ (plug-in, divisor n and N, as ppi_py)."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    lam = ppi_lambda(y, yhat, yu) if lam is None else float(lam)
    return float(np.sqrt(np.var(lam * yu) / len(yu) + np.var(y - lam * yhat) / len(y)))


def z_interval(estimate: float, se: float, level: float = 0.95) -> tuple[float, float]:
    """``estimate ± z·se`` (the normal interval of statsmodels' ``_zconfint_generic``)."""
    z = float(norm.ppf(0.5 + level / 2.0))
    return float(estimate - z * se), float(estimate + z * se)


def ppi_mean_ci(y, yhat, yhat_unlabelled, level: float = 0.95,  # noqa: ANN001
                lam: float | None = None) -> tuple[float, float]:
    """The PPI++ interval for the mean (λ tuned when ``lam`` is None)."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    lam = ppi_lambda(y, yhat, yu) if lam is None else float(lam)
    return z_interval(ppi_mean_pointestimate(y, yhat, yu, lam), ppi_mean_se(y, yhat, yu, lam), level)


def classical_mean_ci(y, level: float = 0.95) -> tuple[float, float]:  # noqa: ANN001
    """The human-only interval: mean(Y) ± z·sd(Y)/√n (divisor n, ``ppi_py.classical_mean_ci``)."""
    y = np.asarray(y, dtype=float).ravel()
    return z_interval(float(y.mean()), float(np.std(y) / np.sqrt(len(y))), level)


def width_bound(y, yhat, yhat_unlabelled, level: float = 0.95) -> float:  # noqa: ANN001
    """The largest width the tuned PPI++ interval can have on these data by the module's algebra:
    ``2z·√(se₀² + λ̂²·max(E, 0))`` (se₀ the human-only standard error)."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    n, big_n = len(y), len(yu)
    lam = ppi_lambda(y, yhat, yu)
    pooled = float(np.var(np.concatenate([yhat, yu]), ddof=1))
    excess = (np.var(yhat) - pooled) / n + (np.var(yu) - pooled) / big_n
    z = float(norm.ppf(0.5 + level / 2.0))
    return float(2 * z * np.sqrt(np.var(y) / n + lam ** 2 * max(float(excess), 0.0)))


def n_effective(y, yhat, yhat_unlabelled, lam: float | None = None) -> float:  # noqa: ANN001
    """judgeaudit's own quantity (the papers compare interval widths, they define no such number):
    the number of human labels a human-only interval would need to be as narrow as the PPI++ one,
    ``n_eff = var(Y) / se_λ̂²`` (= n·(width_human / width_PPI)²; var with divisor n). ``inf`` when the
    PPI interval has zero width."""
    y, yhat, yu = _arrays(y, yhat, yhat_unlabelled)
    se = ppi_mean_se(y, yhat, yu, lam)
    return float(np.var(y) / se ** 2) if se > 0 else float("inf")


def naive_mean_ci(yhat_all, level: float = 0.95) -> tuple[float, float]:  # noqa: ANN001
    """The judge-only interval: mean(Ŷ) ± z·sd(Ŷ)/√m over every judged item — it treats the
    verdicts as if they were the labels, so it carries none of the judge's errors."""
    return classical_mean_ci(yhat_all, level)

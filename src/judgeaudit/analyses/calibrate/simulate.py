"""Simulated judged sets with a planted judge bias, vectorised over data sets (the coverage tests and
``benchmarks/calibrate.py``), and the PPI++ formulas of ``ppi`` written over rows of such sets."""

from __future__ import annotations

import numpy as np


def binary_sets(n_sets: int, n: int, big_n: int, *, p: float = 0.3, tpr: float = 0.85, tnr: float = 0.75,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, Ŷ) on n labelled items and Ŷ on big_n unlabelled items per set: Y ~ Bernoulli(p), the judge
    says 1 with probability tpr when Y = 1 and 1 − tnr when Y = 0 (its positive rate is
    p·tpr + (1 − p)(1 − tnr), biased whenever that differs from p)."""
    rng = np.random.default_rng(seed)

    def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.random((n_sets, m)) < p
        yhat = np.where(y, rng.random((n_sets, m)) < tpr, rng.random((n_sets, m)) >= tnr)
        return y.astype(float), yhat.astype(float)

    y, yhat = draw(n)
    _, yhat_u = draw(big_n)
    return y, yhat, yhat_u


def graded_sets(n_sets: int, n: int, big_n: int, *, mu: float = 5.0, bias: float = 0.8, noise: float = 1.2,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human scores Y ~ N(mu, 1.5²) and a judge that scores Y + bias + N(0, noise²): biased by ``bias``."""
    rng = np.random.default_rng(seed)
    y = rng.normal(mu, 1.5, (n_sets, n))
    yhat = y + bias + rng.normal(0, noise, (n_sets, n))
    yhat_u = rng.normal(mu, 1.5, (n_sets, big_n)) + bias + rng.normal(0, noise, (n_sets, big_n))
    return y, yhat, yhat_u


def ppi_batch(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, z: float = 1.959963984540054,
              lam: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, se, λ̂) of PPI++ per row (one data set a row) — ``ppi``'s formulas over rows, held
    equal to the per-set functions by the tests; ``lam`` fixes λ per row instead of tuning it."""
    n, big_n = y.shape[1], yhat_u.shape[1]
    cov = np.mean((y - y.mean(1, keepdims=True)) * (yhat - yhat.mean(1, keepdims=True)), axis=1)
    pooled = np.var(np.concatenate([yhat, yhat_u], axis=1), axis=1, ddof=1)
    if lam is None:
        lam = np.clip(np.divide(cov, (1 + n / big_n) * pooled, out=np.zeros_like(cov), where=pooled > 0), 0, 1)
    est = lam * yhat_u.mean(1) + np.mean(y - lam[:, None] * yhat, axis=1)
    se = np.sqrt(np.var(lam[:, None] * yhat_u, axis=1) / big_n + np.var(y - lam[:, None] * yhat, axis=1) / n)
    return est, se, lam

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


# a 1–5 scale whose human grades crowd its top (mean 4.39), and a judge that grades one point high half of
# the time (capped at 5) and at random one time in ten: biased upward, and its labels sit at the scale's end
END_GRADES = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
END_PROBS = np.array([0.02, 0.03, 0.07, 0.27, 0.61])
END_TRUTH = float(END_GRADES @ END_PROBS)


def graded_end_sets(n_sets: int, n: int, big_n: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, Ŷ, Ŷᵘ) on the 1–5 scale above (truth ``END_TRUTH``)."""
    rng = np.random.default_rng(seed)

    def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.choice(END_GRADES, size=(n_sets, m), p=END_PROBS)
        yhat = np.minimum(5.0, y + (rng.random((n_sets, m)) < 0.5))
        yhat = np.where(rng.random((n_sets, m)) < 0.1, rng.integers(1, 6, (n_sets, m)), yhat)
        return y, yhat.astype(float)

    y, yhat = draw(n)
    _, yhat_u = draw(big_n)
    return y, yhat, yhat_u


def guarded_batch(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lo: float, hi: float, binary: bool,
                  level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, lower, upper, widened) of the printed PPI++ interval per row: ``edges.guard`` over rows
    (held equal to ``calibrate``'s by the tests)."""
    from scipy.stats import norm
    from statsmodels.stats.proportion import proportion_confint

    from judgeaudit.analyses.calibrate.edges import MIN_SUPPORT

    z = float(norm.ppf(0.5 + level / 2.0))
    est, se, _ = ppi_batch(y, yhat, yhat_u, z)
    n = y.shape[1]
    m = y.mean(1)
    sup = n * np.maximum(np.minimum(m - lo, hi - m), 0.0) / (hi - lo)
    widened = sup < MIN_SUPPORT
    if binary:
        flo, fhi = proportion_confint(y.sum(1).astype(int), n, alpha=1.0 - level, method="beta")
        flo, fhi = np.nan_to_num(flo, nan=0.0), np.nan_to_num(fhi, nan=1.0)
    else:
        half = (hi - lo) * np.sqrt(np.log(2.0 / (1.0 - level)) / (2.0 * n))
        flo, fhi = np.maximum(lo, m - half), np.minimum(hi, m + half)
    low, high = est - z * se, est + z * se
    return est, np.where(widened, np.minimum(low, flo), low), np.where(widened, np.maximum(high, fhi), high), widened


def confident_subset(n_sets: int, n: int, big_n: int, *, p: float = 0.3, pool: float = 0.5, random: bool = False,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, Ŷ, labelled) over n + big_n items per set, the labels NOT a random subset: n items drawn from
    the ``pool`` share of items on which the judge is most confident. The judge thresholds a latent
    score at 0.38, z ~ N(1, 0.6²) on positives and N(−1.5, 1.5²) on negatives (TPR 0.85, TNR 0.90), so
    its confident items are mostly its clear fails. ``random`` draws the labelled items uniformly
    instead (the check's size)."""
    rng = np.random.default_rng(seed)
    m = n + big_n
    y = rng.random((n_sets, m)) < p
    z = np.where(y, rng.normal(1.0, 0.6, (n_sets, m)), rng.normal(-1.5, 1.5, (n_sets, m)))
    yhat = z > 0.38
    lab = np.zeros((n_sets, m), dtype=bool)
    for i in range(n_sets):
        cand = np.arange(m) if random else np.argsort(-np.abs(z[i] - 0.38))[:max(n, int(pool * m))]
        lab[i, rng.choice(cand, n, replace=False)] = True
    return y.astype(float), yhat.astype(float), lab

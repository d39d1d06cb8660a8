"""General test statistics: Wilson interval, McNemar's exact test, Spearman with a permutation
p-value (conditional-accuracy-profiles.txt Appendix M, Eq. 2), and Benjamini–Hochberg control of
the false discovery rate across a table's rows (construct-validity.txt App. A.2). Vectorised over
permutations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import permutations

import numpy as np
from scipy import stats as _st

from judgeaudit.stats.resample import permutation_p, rng_for


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n (NaNs when n = 0)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = float(_st.norm.ppf(0.5 + level / 2))
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c."""
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, 2 * _st.binom.cdf(min(b, c), n, 0.5)))


def _ranks(x: np.ndarray) -> np.ndarray:
    return _st.rankdata(x, axis=-1)


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of the vector ``a`` with each row of ``b``."""
    a = a - a.mean()
    b = b - b.mean(axis=-1, keepdims=True)
    den = np.sqrt((a * a).sum()) * np.sqrt((b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (b @ a) / den


def spearman_permutation(x: np.ndarray, y: np.ndarray, n_perm: int = 9999,
                         seed: int | np.random.Generator | None = 0,
                         exact_max_n: int = 8) -> tuple[float, float]:
    """Spearman ρ between two judge-value vectors and its two-sided permutation p-value.

    ρ is the Pearson correlation of the ranks (mid-ranks for ties). The null permutes the
    pairing of ``y`` with ``x``: all n! orderings when n ≤ ``exact_max_n`` (p is then the exact
    share of orderings with |ρ| at least as large), otherwise ``n_perm`` random orderings with
    the +1 correction (``stats.resample.permutation_p``). Returns (nan, nan) when n < 3 or a
    vector is constant.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    rx, ry = _ranks(x), _ranks(y)
    rho = float(_row_pearson(rx, ry[None, :])[0])
    if n <= exact_max_n:
        perms = np.array(list(permutations(range(n))))
        null = _row_pearson(rx, ry[perms])
        k = np.sum(np.abs(null) >= abs(rho) - 1e-12)
        return rho, float(k / len(null))
    rng = rng_for(seed)
    idx = np.argsort(rng.random((n_perm, n)), axis=1)
    null = _row_pearson(rx, ry[idx])
    return rho, permutation_p(rho - 1e-12 * np.sign(rho), null)


def bh_adjust(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (``statsmodels`` ``multipletests(method="fdr_bh")``).

    construct-validity.txt App. A.2: "where a table reports many rows we control the false
    discovery rate across them". The family is the non-NaN entries; a NaN (no test, e.g. no
    permutations) stays NaN and does not count towards the number of tests.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="fdr_bh")[1]
    return out

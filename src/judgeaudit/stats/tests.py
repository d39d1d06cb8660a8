"""General test statistics: Wilson interval, McNemar's exact test, Spearman with a permutation
p-value (conditional-accuracy-profiles.txt Appendix M, Eq. 2), and Benjamini–Hochberg control of
the false discovery rate across a table's rows (construct-validity.txt App. A.2). Vectorised over
permutations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

from judgeaudit.stats.resample import rng_for


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


@dataclass(frozen=True)
class SpearmanTest:
    """Spearman ρ with its permutation p-value (``p`` NaN when ρ is undefined)."""

    rho: float
    p: float
    n: int
    exact: bool
    n_perm: int
    alternative: str

    def to_dict(self) -> dict:
        return asdict(self)


def _rank_pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson correlation along ``axis`` of rank vectors (vectorised over permuted pairings)."""
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def spearman_test(x, y, *, n_perm: int = 9999, seed: int | np.random.Generator | None = 0,
                  alternative: str = "two-sided", exact_max_n: int = 8) -> SpearmanTest:
    """Spearman ρ of ``x`` and ``y`` (``scipy.stats.spearmanr``: mid-ranks for ties) tested by
    permuting the pairing (``scipy.stats.permutation_test``, ``permutation_type='pairings'``).

    Pairs with a NaN are dropped. With n ≤ ``exact_max_n`` all n! pairings are enumerated and p is
    the exact share at least as extreme (identity included); otherwise ``n_perm`` random pairings
    with the +1 correction, (1 + #{as extreme}) / (1 + n_perm). ``alternative``: ``two-sided``
    (scipy's 2·min of the one-sided p, capped at 1), ``greater`` (ρ > 0 predicted) or ``less``.
    ρ and p are NaN when n < 3 or a vector is constant; p is NaN when ``n_perm`` is 0 and n is
    above ``exact_max_n``. This is the one Spearman test of the package (CAP Eq. 2, the closed
    loop's precision–net ordering, the world harness's per-answer correlations).
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be two-sided, greater or less; got {alternative!r}")
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    n = len(x)
    exact = 3 <= n <= exact_max_n
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return SpearmanTest(float("nan"), float("nan"), n, False, 0, alternative)
    rho = float(_st.spearmanr(x, y).statistic)
    n_res = math.factorial(n) if exact else n_perm
    if n_res <= 0:
        return SpearmanTest(rho, float("nan"), n, False, 0, alternative)
    rx = _st.rankdata(x)
    # one sample (y's ranks) permuted against x's fixed ranks: the n! pairings
    res = _st.permutation_test((_st.rankdata(y),), lambda ry, axis=-1: _rank_pearson(rx, ry, axis),
                               permutation_type="pairings", vectorized=True, n_resamples=n_res,
                               batch=max(1, 4_000_000 // n),
                               alternative=alternative, rng=rng_for(seed))
    return SpearmanTest(rho, float(res.pvalue), n, exact, int(n_res), alternative)


def spearman_permutation(x: np.ndarray, y: np.ndarray, n_perm: int = 9999,
                         seed: int | np.random.Generator | None = 0,
                         exact_max_n: int = 8) -> tuple[float, float]:
    """(ρ, two-sided permutation p) of ``spearman_test``."""
    t = spearman_test(x, y, n_perm=n_perm, seed=seed, exact_max_n=exact_max_n)
    return t.rho, t.p


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

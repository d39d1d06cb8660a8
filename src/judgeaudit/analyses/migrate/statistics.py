"""The paired statistics of a judge migration, computed for the estimate and every cluster-bootstrap resample
at once.

Every quantity is a function of per-cluster sums (``cluster_sums``): the estimate uses weight 1 per cluster, a
bootstrap resample the cluster multiplicities of ``stats.resample.bootstrap_counts``. A ``(n_boot, n_clusters)``
weight matrix times a ``(n_clusters, k)`` sum matrix gives every resample's sums in one product, so the cost is
linear in the anchors and in the resamples.
"""

from __future__ import annotations

import numpy as np


def cluster_sums(codes: np.ndarray, values: np.ndarray, n_clusters: int) -> np.ndarray:
    """``(n_clusters, k)`` sums of the ``(n, k)`` per-anchor ``values`` (NaN counts as 0) within each cluster."""
    values = np.nan_to_num(np.asarray(values, dtype=float).reshape(len(codes), -1))
    out = np.zeros((n_clusters, values.shape[1]))
    np.add.at(out, codes, values)
    return out


def weighted(weights: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Every resample's sums: ``weights`` (``(n_boot, n_clusters)``, or one row) times ``sums``."""
    return np.atleast_2d(weights) @ sums


def mean_columns(x: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per-anchor columns whose ratio of sums is a mean over the anchors where ``present``: ``[x·1, 1]``."""
    p = present.astype(float)
    return np.column_stack([np.where(present, x, 0.0), p])


def mean_from(s: np.ndarray) -> np.ndarray:
    """The mean from ``mean_columns``'s sums (NaN where a resample holds no anchor)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return s[:, 0] / s[:, 1]


def quadratic_kappa_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-anchor columns for the quadratic-weighted κ of x and y, over anchors where both are present:
    ``[1, x, y, x², y², (x − y)²]``."""
    ok = ~(np.isnan(x) | np.isnan(y))
    x0, y0 = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    return np.column_stack([ok.astype(float), x0, y0, x0 ** 2, y0 ** 2, (x0 - y0) ** 2])


def quadratic_kappa_from(s: np.ndarray) -> np.ndarray:
    """Cohen's κ with quadratic weights on equally spaced grades: 1 − E[(X − Y)²] / E_indep[(X − Y)²], where the
    expected disagreement under independent marginals is Var X + Var Y + (E X − E Y)² (population moments). It
    equals ``sklearn.metrics.cohen_kappa_score(weights="quadratic")`` when every grade of the scale is listed."""
    n, sx, sy, sxx, syy, sd = s.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = sx / n, sy / n
        expected = (sxx / n - mx ** 2) + (syy / n - my ** 2) + (mx - my) ** 2
        return 1.0 - (sd / n) / expected


def category_columns(x: np.ndarray, y: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Per-anchor columns for Cohen's (unweighted) κ over anchors where both are present:
    ``[1, 1{x = y}, one-hot(x)…, one-hot(y)…]``."""
    ok = ~(np.isnan(x) | np.isnan(y))
    hx = (x[:, None] == categories[None, :]) & ok[:, None]
    hy = (y[:, None] == categories[None, :]) & ok[:, None]
    return np.column_stack([ok, (x == y) & ok, hx, hy]).astype(float)


def cohen_kappa_from(s: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """(Cohen's κ, raw agreement) from ``category_columns``'s sums."""
    n, same = s[:, 0], s[:, 1]
    px = s[:, 2:2 + n_categories]
    py = s[:, 2 + n_categories:2 + 2 * n_categories]
    with np.errstate(invalid="ignore", divide="ignore"):
        po = same / n
        pe = (px * py).sum(axis=1) / n ** 2
        return (po - pe) / (1.0 - pe), po


def exact_agreement_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``[1, 1{x = y}]`` over anchors where both are present (raw agreement on a graded scale)."""
    ok = ~(np.isnan(x) | np.isnan(y))
    return np.column_stack([ok, (x == y) & ok]).astype(float)


def bland_altman_columns(d: np.ndarray) -> np.ndarray:
    """``[1, d, d²]`` over anchors with a difference: the Bland–Altman limits' sums."""
    ok = ~np.isnan(d)
    d0 = np.where(ok, d, 0.0)
    return np.column_stack([ok, d0, d0 ** 2]).astype(float)


def bland_altman_from(s: np.ndarray, z: float = 1.959963984540054) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) Bland–Altman limits of agreement: mean difference ∓ z·SD (SD with n − 1)."""
    n, sd, sdd = s.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sd / n
        var = (sdd - n * mean ** 2) / (n - 1)
        sdv = np.sqrt(np.maximum(var, 0.0))
        return mean - z * sdv, mean + z * sdv


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ_b between the rows of ``a`` and ``b`` (``(n_boot, k)``: k systems' mean grades under two
    judges), as ``scipy.stats.kendalltau`` defines it; NaN where a row has fewer than two finite systems or no
    untied pair."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    i, j = np.triu_indices(a.shape[1], 1)
    sa, sb = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
    both = ~(np.isnan(sa) | np.isnan(sb))
    sa, sb = np.where(both, sa, 0.0), np.where(both, sb, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sa * sb).sum(axis=1) / np.sqrt((sa ** 2).sum(axis=1) * (sb ** 2).sum(axis=1))

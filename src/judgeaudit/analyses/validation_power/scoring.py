"""Scores of a member (construct-validity.txt App. E, "Folds and scoring"): κ of the pooled
out-of-fold predictions, group-bootstrap intervals of one member's κ, and the interval of
``a_imp`` = the max over members, which carries the selection of the best member."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from judgeaudit.stats.agreement import cohen_kappa
from judgeaudit.stats.resample import bootstrap_counts, percentile_ci


def kappa_from_confusions(conf: np.ndarray) -> np.ndarray:
    """Cohen's κ of each ``(..., K, K)`` confusion matrix (0.0 where chance agreement is 1)."""
    conf = np.asarray(conf, dtype=float)
    total = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(conf, axis1=-2, axis2=-1) / total
        pe = np.sum(conf.sum(axis=-1) * conf.sum(axis=-2), axis=-1) / total**2
        k = (po - pe) / (1.0 - pe)
    return np.where(np.isclose(pe, 1.0) | ~np.isfinite(k), 0.0, k)


def pooled_kappa(y: Sequence, pred: Sequence) -> float:
    """κ of the pooled out-of-fold predictions (App. E: not a mean of per-fold κs)."""
    return cohen_kappa(np.asarray(y).astype(str), np.asarray(pred).astype(str))


def _group_confusions(label: np.ndarray, pred: np.ndarray, group_of_row: np.ndarray, n_groups: int,
                      categories: Sequence[str], weights: np.ndarray | None = None) -> np.ndarray:
    """``(n_groups, K·K)`` confusion counts (label × prediction, optionally weighted) of each group's
    rows: the unit a group bootstrap resamples."""
    idx = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    cell = np.array([idx[a] * k + idx[b] for a, b in zip(label, pred, strict=True)], dtype=int)
    out = np.zeros((n_groups, k * k))
    np.add.at(out, (np.asarray(group_of_row, dtype=int), cell),
              np.ones(len(cell)) if weights is None else np.asarray(weights, dtype=float))
    return out


def _kappa_of(per_group: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """κ of the pooled confusion of all groups (``counts`` None) or of each bootstrap resample
    (``counts``: ``(n_boot, n_groups)`` multiplicities)."""
    k = math.isqrt(per_group.shape[1])
    pooled = per_group.sum(axis=0)[None, :] if counts is None else counts @ per_group
    return kappa_from_confusions(pooled.reshape(-1, k, k))


def bootstrap_kappa_ci(y: np.ndarray, pred: np.ndarray, groups: np.ndarray, *, n_boot: int = 1000,
                       seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of one predictor's pooled κ, resampling groups with replacement
    (vectorised: a ``(n_boot, n_groups)`` multiplicity matrix times per-group confusion counts)."""
    labels = np.unique(np.concatenate([y.astype(str), pred.astype(str)]))
    gvals, ginv = np.unique(groups, return_inverse=True)
    per_group = _group_confusions(y.astype(str), pred.astype(str), ginv, len(gvals), labels)
    lo, hi = percentile_ci(_kappa_of(per_group, bootstrap_counts(len(gvals), n_boot, seed)), level)
    return float(lo), float(hi)


def a_imp_interval(y: np.ndarray, preds: np.ndarray | Sequence[np.ndarray], groups: np.ndarray, *,
                   n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Interval of ``a_imp = max over members of κ`` (Def. 6) that includes the selection of the
    best member: a simultaneous percentile band over the members, then its max.

    In every bootstrap replicate (groups resampled with replacement) each member's pooled κ is
    recomputed from its out-of-fold predictions. A replicate's extremeness is the largest, over
    members, of ``|2·u − 1|`` where ``u`` is the replicate's mid-rank position in that member's own
    bootstrap distribution; its ``level`` quantile ``c`` sets ``γ = (1 − c)/2``, and the bands
    ``[Q_m(γ), Q_m(1 − γ)]`` (each member's bootstrap quantiles) hold for every member at once in a
    ``level`` share of the replicates. Since the max is monotone, the interval of the max is
    ``[max_m Q_m(γ), max_m Q_m(1 − γ)]``, widened where needed to hold the observed max (a percentile
    band can miss its estimate when the bootstrap distribution is skewed). Every end is a κ some
    replicate attained, so the interval stays inside κ's range [−1, 1] (a studentised band κ̂ ± c·se
    does not: a member at κ̂ = 1.00 with se 0.12 gave [0.75, 1.25]).

    Why not the best member's own interval, or the percentile interval of the replicates' max:
    with several equally (un)informative members the observed max is biased upward by the
    selection, and both intervals sit on that bias. On five members of equal κ (tests/analyses/
    test_validation_power.py) the best member's own 95% interval covers the population max in
    ~85% of simulated sets and the percentile interval of the bootstrapped max in ~30%; the
    simultaneous band keeps ≥ 95%. With one member it is that member's percentile interval.
    """
    from scipy.stats import rankdata

    preds = [np.asarray(p).astype(str) for p in preds]
    y = np.asarray(y).astype(str)
    cats = np.unique(np.concatenate([y, *preds]))
    gvals, ginv = np.unique(groups, return_inverse=True)
    per = [_group_confusions(y, p, ginv, len(gvals), cats) for p in preds]
    obs = np.array([_kappa_of(pg)[0] for pg in per])
    if n_boot < 2:
        return float("nan"), float("nan")
    counts = bootstrap_counts(len(gvals), n_boot, seed)
    boot = np.stack([_kappa_of(pg, counts) for pg in per])          # (members, n_boot)
    u = (rankdata(boot, axis=1, method="average") - 0.5) / boot.shape[1]
    c = float(np.quantile(np.max(np.abs(2.0 * u - 1.0), axis=0), level))
    gamma = max((1.0 - c) / 2.0, 0.0)
    lo = float(np.max(np.quantile(boot, gamma, axis=1)))
    hi = float(np.max(np.quantile(boot, 1.0 - gamma, axis=1)))
    best = float(np.max(obs))
    return min(lo, best), max(hi, best)


def _accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean(y.astype(str) == pred.astype(str))) if len(y) else float("nan")

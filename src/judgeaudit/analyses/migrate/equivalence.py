"""Equivalence and non-inferiority tests of one migration quantity against its margin (two one-sided tests,
TOST, at level α), and the anchors a design would need.

* A **two-sided** quantity (a mean grade or pass-rate difference) is equivalent when both one-sided nulls
  ``θ ≤ −m`` and ``θ ≥ m`` are rejected at α: the ``1 − 2α`` interval lies inside ``(−m, m)``. Where the anchors
  are not grouped and the statistic is a mean of paired differences this is the paired t TOST
  (``statsmodels.stats.weightstats.ttost_paired``); otherwise a cluster-bootstrap TOST whose one-sided p-values
  are ``(1 + #{θ* ≤ −m}) / (B + 1)`` and ``(1 + #{θ* ≥ m}) / (B + 1)``.
* A **non-inferiority** quantity (agreement against the old judge's own re-grade agreement, agreement with
  humans) passes when ``θ ≤ −m`` is rejected at α.
* A quantity that was not shown equivalent is **blind** when the design had too little power to show it even if
  the truth were no difference: fewer anchors than ``anchors_needed``, those at which the one-sided distance is
  ``m · z₁₋α / (z₁₋α + z₁₋β)`` (power 1 − β = 0.8 at no difference), scaling the standard error as 1/√n from the
  one observed — unless its interval lies wholly outside the margin (then it is not equivalent at any size).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

ALPHA = 0.05
POWER = 0.80


def _boot_p(boot: np.ndarray, bound: float, side: str) -> float:
    b = boot[np.isfinite(boot)]
    if not len(b):
        return float("nan")
    k = np.sum(b <= bound) if side == "le" else np.sum(b >= bound)
    return float((1 + k) / (len(b) + 1))


def anchors_needed(n: int, distance: float, margin: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Anchors at which a one-sided ``1 − α`` distance of ``distance`` (seen at ``n`` anchors) shrinks to the
    margin the test needs for ``power`` at no difference: ``n · (distance · (z₁₋α + z_power) / (z₁₋α · m))²``."""
    if not (distance > 0 and margin > 0 and n > 0):
        return n
    za, zb = stats.norm.ppf(1 - alpha), stats.norm.ppf(power)
    return int(math.ceil(n * (distance * (za + zb) / (za * margin)) ** 2))


def two_sided(estimate: float, boot: np.ndarray, margin: float, *, n: int, alpha: float = ALPHA,
              paired: tuple[np.ndarray, np.ndarray] | None = None, floor: float = 0.0) -> dict:
    """TOST of ``estimate`` against ``(−margin, margin)``.

    ``paired``: the (new, old) per-anchor values when the statistic is their mean difference on ungrouped
    anchors (the paired t TOST decides); else the bootstrap decides. ``floor``: the least half-width the data
    support (see ``unseen_share``), used where the resamples do not vary."""
    if paired is not None and np.std(paired[0] - paired[1]) > 0:
        from statsmodels.stats.weightstats import ttost_paired

        a, b = paired
        p = float(ttost_paired(a, b, -margin, margin)[0])
        d = a - b
        se = float(np.std(d, ddof=1) / math.sqrt(len(d)))
        half = float(stats.t.ppf(1 - alpha, len(d) - 1) * se)
        lo, hi = estimate - half, estimate + half
        method = "paired t TOST (statsmodels ttost_paired)"
    else:
        b = boot[np.isfinite(boot)]
        lo, hi = (float(np.quantile(b, alpha)), float(np.quantile(b, 1 - alpha))) if len(b) else (np.nan, np.nan)
        if floor > 0 and (estimate - lo < floor or hi - estimate < floor):
            lo, hi = min(lo, estimate - floor), max(hi, estimate + floor)
            # the resamples cannot show the spread: decide on the widened interval alone
            p = 0.0 if (lo > -margin and hi < margin) else 1.0
            method = "interval widened to the share of anchors that could differ unseen (no resample varied)"
        else:
            p = max(_boot_p(boot, -margin, "le"), _boot_p(boot, margin, "ge"))
            method = "cluster-bootstrap TOST (percentile)"
    distance = max(estimate - lo, hi - estimate) if np.isfinite(lo) and np.isfinite(hi) else float("inf")
    equivalent = bool(p < alpha) and lo > -margin and hi < margin
    need = anchors_needed(n, distance, margin, alpha)
    outside = lo >= margin or hi <= -margin
    blind = not equivalent and not outside and n < need
    return {"tost_interval": [lo, hi], "p": p, "method": method, "decisive": bool(outside),
            "status": "equivalent" if equivalent else "blind" if blind else "not_equivalent",
            "anchors_needed": need if blind else None}


def non_inferior(estimate: float, boot: np.ndarray, margin: float, *, n: int, alpha: float = ALPHA,
                 floor: float = 0.0) -> dict:
    """One-sided test of ``estimate ≤ −margin`` (rejected: no worse than the margin), cluster bootstrap."""
    b = boot[np.isfinite(boot)]
    lo = float(np.quantile(b, alpha)) if len(b) else float("nan")
    method = "cluster-bootstrap one-sided test (percentile)"
    if floor > 0 and np.isfinite(lo) and estimate - lo < floor:
        lo = estimate - floor
        p = 0.0 if lo > -margin else 1.0
        method = "bound widened to the share of anchors that could differ unseen (no resample varied)"
    else:
        p = _boot_p(boot, -margin, "le")
    distance = estimate - lo if np.isfinite(lo) else float("inf")
    ok = bool(p < alpha) and lo > -margin
    need = anchors_needed(n, distance, margin, alpha)
    hi = float(np.quantile(b, 1 - alpha)) if len(b) else float("nan")
    blind = not ok and not hi <= -margin and n < need
    return {"tost_interval": [lo, float("inf")], "p": p, "method": method, "decisive": bool(hi <= -margin),
            "status": "equivalent" if ok else "blind" if blind else "not_equivalent",
            "anchors_needed": need if blind else None}


def unseen_share(n_clusters: int, alpha: float = ALPHA) -> float:
    """The largest share of clusters that could differ although none of ``n_clusters`` did, at one-sided level
    α (Clopper–Pearson upper bound for 0 of n: ``1 − α^(1/n)``)."""
    return 1.0 - alpha ** (1.0 / max(n_clusters, 1))


def resamples_vary(boot: np.ndarray) -> bool:
    b = boot[np.isfinite(boot)]
    return bool(len(b)) and float(np.ptp(b)) > 1e-12

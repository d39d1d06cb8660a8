"""The frontier over thresholds and the matched-invariance operating point (construct-validity.txt
Def. 4, §2.3, Corollary 1, §5.1), with R − (1 − S) read at a cross-fitted operating point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from judgeaudit.analyses.validity.rates import _EPS


def frontier_hull(points: Sequence[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The monotone hull of a frontier (§5.1, Figure 5): the attained points not beaten by one
    with at least the same S and a higher R. Returned from the highest S to the lowest, so at
    each invariance it shows the best sensitivity achieved at that invariance or stricter."""
    pts = [p for p in points if p[0] is not None and p[1] is not None
           and not (math.isnan(p[0]) or math.isnan(p[1]))]
    pts.sort(key=lambda p: (-p[0], -p[1], p[2]))
    out: list[tuple[float, float, float]] = []
    best = -math.inf
    for p in pts:
        if p[1] > best + _EPS:
            out.append(p)
            best = p[1]
    return out


def matched_operating_point(S: np.ndarray, R: np.ndarray, taus: np.ndarray, degenerate: np.ndarray,
                            s_floor: float) -> tuple[int | None, bool]:
    """The matched-invariance operating point (§2.3, Corollary 1, §5.1).

    Among thresholds with ``S ≥ s_floor`` take the highest R, ties to the higher S, then the lower
    τ. The judge is *interpretable* only if some non-degenerate threshold (one that does not flag
    every grade or none) reaches the floor: the constant corners sit at S = 1 for any judge and
    say nothing about it. An uninterpretable judge is reported at its non-degenerate threshold
    with the highest S (ties to the higher R), flagged so that its R is never read as sensitivity.

    Returns:
        ``(index, interpretable)``; index None when S is undefined everywhere.
    """
    idx, interp = matched_operating_points(np.asarray(S, dtype=float)[None, :],
                                           np.asarray(R, dtype=float)[None, :], taus, degenerate, s_floor)
    return (None, False) if idx[0] < 0 else (int(idx[0]), bool(interp[0]))


def matched_operating_points(S: np.ndarray, R: np.ndarray, taus: np.ndarray, degenerate: np.ndarray,
                             s_floor: float) -> tuple[np.ndarray, np.ndarray]:
    """``matched_operating_point`` for every row of ``(n_rows, n_tau)`` matrices at once (one row per
    bootstrap resample, so that τ is re-selected inside each). ``taus`` must be ascending, so the
    lowest index among ties is the lower τ.

    Returns:
        ``(index, interpretable)`` arrays of length ``n_rows``; index −1 where S or R is undefined
        at every threshold.
    """
    S = np.atleast_2d(np.asarray(S, dtype=float))
    R = np.atleast_2d(np.asarray(R, dtype=float))
    if len(taus) > 1 and np.any(np.diff(np.asarray(taus, dtype=float)) <= 0):
        raise ValueError("thresholds must be strictly ascending")
    deg = np.asarray(degenerate, dtype=bool)[None, :]
    ok = ~np.isnan(S) & ~np.isnan(R)
    eligible = ok & (S >= s_floor - _EPS)
    interp = (eligible & ~deg).any(axis=1)
    fallback = ok & ~deg
    fallback = np.where(fallback.any(axis=1, keepdims=True), fallback, ok)
    cand = np.where(interp[:, None], eligible, fallback)
    first = np.where(interp[:, None], R, S)      # the quantity maximised ...
    second = np.where(interp[:, None], S, R)     # ... ties to the higher of the other, then the lower τ
    key1 = np.where(cand, first, -np.inf)
    top = cand & (key1 == key1.max(axis=1, keepdims=True))
    key2 = np.where(top, second, -np.inf)
    best = top & (key2 == key2.max(axis=1, keepdims=True))
    idx = np.where(cand.any(axis=1), np.argmax(best, axis=1), -1)
    return idx, interp & (idx >= 0)

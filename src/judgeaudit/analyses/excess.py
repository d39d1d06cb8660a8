"""``R_excess`` = R − (1 − S) at a cross-fitted operating point, and its interval (judgeaudit's own
quantity, not one of the papers').

Reading R and S at the τ the matched-invariance rule picks on the same data makes a judge with no
construct sensitivity look sensitive (the rule maximises R). Cross-fitting removes that optimism: base
items fall into two folds, each fold's flips are read at the threshold the rule picks on the *other*
fold, and Eq. (6) pools both folds (numerators and denominators summed over the folds). No base item's
flips select the τ they are read at, so a judge with no construct sensitivity is centred on 0 whatever
τ the rule picks. The estimate averages ``SPLITS`` random two-fold splits, which removes most of the
noise one split adds.

The interval is the percentile interval of a base-item bootstrap that holds each fold's threshold
fixed (given the other fold it is not a function of this fold's data). It does not carry the
variability of the thresholds themselves, and it covers less than its nominal level at small sizes:
``MEASURED_COVERAGE`` gives what a simulation measured (``tests/analyses/test_excess_coverage.py``),
and the report prints it beside the interval. Re-choosing the thresholds inside each resample instead
covers 100% on the same simulation (too wide), so it is not used.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

Select = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""The operating-point rule: ``(S, R)`` matrices ``(n_rows, n_tau)`` → threshold index per row (−1: none)."""

SPLITS = 5
"""Random two-fold splits the estimate averages over."""

MEASURED_COVERAGE: tuple[tuple[int, float], ...] = ((48, 0.912), (200, 0.915))
"""(base items, coverage) of the nominal 95% interval, measured on 400 simulated judges with no
construct sensitivity on a fine grade scale (every base item carrying all 7 slots, as the bundled set
does), where the choice of τ matters; a judge with one usable threshold is covered at 94–97%."""


def coverage_note(level: float = 0.95) -> str:
    """The interval's measured coverage, for a report or a card."""
    got = ", ".join(f"{c:.1%} at {n} base items" for n, c in MEASURED_COVERAGE)
    return (f"the {level:.0%} interval of R − (1 − S) covers the truth in {got} (simulated judges with no "
            "construct sensitivity; judgeaudit's own check): read it as narrower than nominal")


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _split(fold: np.ndarray, w: np.ndarray, xs: dict[str, tuple[np.ndarray, np.ndarray]],
           select: Select) -> np.ndarray:
    """One two-fold split: the cross-fitted excess in every row of weights ``w`` (row 0 the sample);
    NaN everywhere when a fold has no usable threshold."""
    onehot = np.stack([fold == 0, fold == 1]).astype(float)       # (2, n_base)
    (xc, hc), (xr, hr) = ((onehot @ a for a in xs[j]) for j in ("c", "r"))   # per-fold sums, (2, n_tau)
    t = np.zeros(2, dtype=int)
    for k in (0, 1):
        o = slice(1 - k, 2 - k)                                     # the other fold
        t[k] = int(np.asarray(select(1.0 - _ratio(xc[o], hc[o]), _ratio(xr[o], hr[o])))[0])
        if t[k] < 0:
            return np.full(len(w), np.nan)
    at = t[fold]                                     # each base item read at its fold's threshold
    base = np.arange(len(fold))
    out = np.zeros(len(w))
    for j, sign in (("r", 1.0), ("c", -1.0)):
        x, h = (a[base, at] for a in xs[j])
        out += sign * _ratio(w @ x, w @ h)
    return out


def crossfit_excess(mc: np.ndarray, hc: np.ndarray, mr: np.ndarray, hr: np.ndarray, select: Select,
                    counts: np.ndarray, seed: int, *, level: float = 0.95,
                    splits: int = SPLITS) -> tuple[float, tuple[float, float] | None]:
    """``(estimate, interval)`` of the cross-fitted R − (1 − S); NaN and None when a fold has no usable
    threshold, None for the interval without resamples.

    Args:
        mc, hc, mr, hr: ``(n_base, n_tau)`` per-base control / construct flip means and presence.
        select: the operating-point rule (see ``Select``).
        counts: ``(n_boot, n_base)`` base-item multiplicities (may have no rows).
        seed: the splits' seed.
    """
    n_b = mc.shape[0]
    w = np.vstack([np.ones((1, n_b)), counts]).astype(float)
    xs = {"c": (mc * hc, hc), "r": (mr * hr, hr)}
    folds = [np.random.default_rng([seed, 6] if m == 0 else [seed, 6, m]).permutation(n_b) % 2
             for m in range(splits)]
    est = np.mean([_split(f, w, xs, select) for f in folds], axis=0)
    if np.isnan(est[0]):
        return float("nan"), None
    if not len(counts) or np.isnan(est[1:]).all():
        return float(est[0]), None
    a = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(est[1:], [a, 1 - a])
    return float(est[0]), (float(lo), float(hi))

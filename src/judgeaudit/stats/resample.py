"""Bootstrap and permutation machinery, as index/weight matrices rather than Python loops.

A cluster bootstrap resamples whole units (base items, answers, responses: whatever unit the
method names) with replacement. Represented as a ``(n_boot, n_units)`` matrix of multiplicities,
any unit-level statistic that is a weighted mean becomes a matrix product.
"""

from __future__ import annotations

import numpy as np


def rng_for(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def bootstrap_indices(n_units: int, n_boot: int, seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """``(n_boot, n_units)`` matrix of unit indices drawn with replacement."""
    return rng_for(seed).integers(0, n_units, size=(n_boot, n_units))


def bootstrap_counts(n_units: int, n_boot: int, seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """``(n_boot, n_units)`` multiplicities of each unit in each resample (rows sum to n_units)."""
    idx = bootstrap_indices(n_units, n_boot, seed)
    flat = (np.arange(n_boot)[:, None] * n_units + idx).ravel()
    return np.bincount(flat, minlength=n_boot * n_units).reshape(n_boot, n_units).astype(np.int32)


def percentile_ci(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap samples along ``axis``: their ``(1 − level)/2`` and ``(1 + level)/2``
    quantiles (numpy's default, linear interpolation between order statistics). NaN resamples (a statistic
    undefined on that resample) are left out; a statistic with no defined resample, or no resamples at all,
    gets NaN bounds, without a warning. The one place judgeaudit turns resamples into a percentile interval."""
    samples = np.moveaxis(np.asarray(samples, dtype=float), axis, 0)
    alpha = (1.0 - level) / 2.0
    rest = samples.shape[1:]
    flat = samples.reshape(samples.shape[0], int(np.prod(rest)))
    lo = np.full(flat.shape[1], np.nan)
    hi = np.full(flat.shape[1], np.nan)
    if flat.shape[0]:
        nan = np.isnan(flat)
        clean = ~nan.any(axis=0)
        if clean.any():   # numpy's vectorised quantile for the columns without NaN resamples (the common case)
            lo[clean] = np.quantile(flat[:, clean], alpha, axis=0)
            hi[clean] = np.quantile(flat[:, clean], 1.0 - alpha, axis=0)
        partial = ~clean & ~nan.all(axis=0)
        if partial.any():
            lo[partial] = np.nanquantile(flat[:, partial], alpha, axis=0)
            hi[partial] = np.nanquantile(flat[:, partial], 1.0 - alpha, axis=0)
    if not rest:
        return lo[0], hi[0]
    return lo.reshape(rest), hi.reshape(rest)


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """:func:`percentile_ci` of one statistic's resamples, as two floats (NaN: no defined resample)."""
    lo, hi = percentile_ci(np.ravel(samples), level)
    return float(lo), float(hi)


_BLOCK = 4_000_000
"""Permutations are drawn in blocks of about this many (permutation, unit) cells, so memory stays
bounded whatever the number of units (the draws are the same as in one block)."""


def permute_within_groups(values: np.ndarray, groups: np.ndarray, n_perm: int,
                          seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """``(n_perm, n)`` matrix: ``values`` shuffled within each group (one group: a plain shuffle).

    Each permutation draws one uniform key per unit; a group's members, listed in their stable order,
    receive the group's values in the order of their keys. Groups are sorted side by side in a
    ``(groups, largest group)`` grid padded with +inf, so the cost grows with n log(group size)
    rather than n log n (a grid that would be mostly padding sorts the keys offset by group instead:
    the same permutations).
    """
    rng = rng_for(seed)
    values = np.asarray(values)
    _, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = codes.ravel()
    n = len(values)
    out = np.empty((n_perm, n), dtype=values.dtype)
    if not n or not n_perm:
        rng.random((n_perm, n))
        return out
    order = np.argsort(codes, kind="stable")          # each group's members, in stable order
    sizes = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    width = int(sizes.max())
    g_sorted = codes[order]
    slot = np.arange(n) - starts[g_sorted]            # a member's place within its group
    grid = len(sizes) * width <= 2 * n
    valid = np.arange(width)[None, :] < sizes[:, None]
    values_sorted = values[order]
    step = max(1, _BLOCK // n)
    for lo in range(0, n_perm, step):
        keys = rng.random((min(step, n_perm - lo), n))
        if grid:
            padded = np.full((len(keys), len(sizes), width), np.inf)
            padded[:, g_sorted, slot] = keys[:, order]
            ranked = starts[None, :, None] + np.argsort(padded, axis=2)
            src = ranked[:, valid]                      # (k, n): the member each place receives
        else:
            src = np.argsort(codes[order][None, :] + keys[:, order], axis=1)
        out[lo:lo + len(keys), order] = values_sorted[src]
    return out


def permutation_p(observed: float, null: np.ndarray, alternative: str = "two-sided") -> float:
    """Permutation p-value with the +1 correction: (1 + #{null as extreme}) / (1 + n_null)."""
    null = np.asarray(null, dtype=float)
    null = null[~np.isnan(null)]
    if alternative == "greater":
        k = np.sum(null >= observed)
    elif alternative == "less":
        k = np.sum(null <= observed)
    else:
        k = np.sum(np.abs(null) >= abs(observed))
    return float((1 + k) / (1 + len(null)))


def min_attainable_p(n_null: int) -> float:
    """The smallest p-value ``permutation_p`` can return with ``n_null`` null draws: 1/(n_null + 1).

    Printed beside every permutation p-value so its resolution is visible (with 20 permutations
    no p-value can fall below 0.048). NaN when there is no null.
    """
    return 1.0 / (n_null + 1) if n_null > 0 else float("nan")

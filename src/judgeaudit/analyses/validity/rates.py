"""Flip rates by Eq. (6) and their base-item bootstrap (construct-validity.txt Def. 3, Eq. (6), App. A.2).

A probe flips at τ when the binary verdict ``score ≥ τ`` of its original and its edited text differ.
A rate is the mean over base items of the mean over each base item's probes; its resamples reuse one
base-item multiplicity matrix, so every interval drawn from it is paired with every other.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse


_EPS = 1e-12

ONE_BLAS_THREAD_UP_TO = 128
"""A bootstrap's matrix product over at most this many base items runs on one BLAS thread: it is too
small to share out (starting and spinning BLAS's threads costs several times its arithmetic), and its
inner dimension, the base items, fits in one block of OpenBLAS's matrix kernels, so one thread adds the
same products in the same order as several: the same numbers."""


@functools.cache
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _blas_threads(n_base: int) -> contextlib.AbstractContextManager:
    """One BLAS thread for a product over at most ``ONE_BLAS_THREAD_UP_TO`` base items, else BLAS's own."""
    if n_base > ONE_BLAS_THREAD_UP_TO:
        return contextlib.nullcontext()
    return _blas().limit(limits=1, user_api="blas")


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _ci(lo: Any, hi: Any) -> list[float | None] | None:
    lo, hi = _num(lo), _num(hi)
    return None if lo is None or hi is None else [lo, hi]


def flips_at(base_scores: np.ndarray, edit_scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """``(n_probes, n_tau)`` boolean: does the binary verdict ``score ≥ τ`` differ between the
    original and the edited text (Def. 3, Remark 1)?"""
    taus = np.atleast_1d(np.asarray(taus, dtype=float))
    b = np.asarray(base_scores, dtype=float)[:, None] >= taus[None, :]
    e = np.asarray(edit_scores, dtype=float)[:, None] >= taus[None, :]
    return b != e


def _per_base(values: np.ndarray, masks: np.ndarray, base_index: np.ndarray,
              n_base: int, member: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-base means of ``values`` over each subset.

    Args:
        values: ``(n_probes,)`` or ``(n_probes, k)`` values (one column per subset or threshold).
        masks: ``(n_probes, k)`` membership of each probe in each subset.
        base_index: ``(n_probes,)`` base item of each probe, in ``0..n_base-1``.
        member: the ``(n_base, n_probes)`` membership matrix of ``base_index`` (``_membership``: sparse,
            so the sums cost one pass over the probes), when the caller already has it.

    Returns:
        ``(means, has)``: ``(n_base, k)`` per-base mean (0 where the base has no member) and
        ``(n_base, k)`` float indicator of bases with at least one member.
    """
    values = np.asarray(values, dtype=float)
    masks = np.asarray(masks, dtype=float)
    if values.ndim == 1:
        values = np.broadcast_to(values[:, None], masks.shape)
    if member is None:
        member = _membership(base_index, n_base)
    sums = np.asarray(member @ (values * masks))
    counts = np.asarray(member @ masks)
    has = (counts > 0).astype(float)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return means, has


def _membership(base_index: np.ndarray, n_base: int) -> sparse.csr_matrix:
    """``(n_base, n_probes)`` 0/1 matrix: probe j belongs to base item i. Sparse (one entry per probe):
    a dense one grows with n_base × n_probes, so its products would grow with the square of the data."""
    n = len(base_index)
    return sparse.csr_matrix((np.ones(n), (np.asarray(base_index, dtype=np.intp), np.arange(n))),
                             shape=(n_base, n))


per_base_means = _per_base
"""Public name of the per-base means of Eq. (6) (``_per_base``), for readers of a run's grades."""
membership = _membership
"""Public name of the base-item membership matrix (``_membership``)."""


def base_weighted_mean(values: np.ndarray, base_index: np.ndarray, n_base: int,
                       mask: np.ndarray | None = None) -> float:
    """Eq. (6): the mean over base items of the mean over each base item's interventions.

    Base items without a member in ``mask`` do not enter the outer mean. NaN when none has one.
    """
    values = np.asarray(values, dtype=float)
    mask = np.ones(len(values), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    means, has = _per_base(values, mask[:, None], np.asarray(base_index), n_base)
    n = has[:, 0].sum()
    return float(means[:, 0].sum() / n) if n else float("nan")


def _estimates(means: np.ndarray, has: np.ndarray) -> np.ndarray:
    """Point estimates of Eq. (6), one per column (NaN for an empty subset)."""
    n = has.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (means * has).sum(axis=0) / np.where(n > 0, n, 1), np.nan)


def _boot_estimates(counts: np.ndarray, means: np.ndarray, has: np.ndarray) -> np.ndarray:
    """``(n_boot, k)`` Eq. (6) in every resample: ``counts`` is the base-item multiplicity matrix."""
    # One product of the counts matrix with [numerators | denominators]; einsum avoids the BLAS
    # thread start-up that dominates at small sizes (one column per subset), BLAS wins at many
    # columns (one per threshold, when τ is re-selected in every resample).
    stacked = np.hstack([means * has, has])
    if stacked.shape[1] <= 64:
        both = np.einsum("bn,nk->bk", counts, stacked)
    else:
        with _blas_threads(counts.shape[1]):
            both = counts @ stacked
    k = has.shape[1]
    num, den = both[:, :k], both[:, k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _eta_squared(values: Sequence[float], groups: Sequence[str]) -> float | None:
    """η²: share of the variance of ``values`` explained by ``groups`` (between / total SS)."""
    v = np.asarray(values, dtype=float)
    g = np.asarray(groups)
    if len(v) < 2 or len(set(g)) < 2:
        return None
    grand = v.mean()
    total = float(((v - grand) ** 2).sum())
    if total <= _EPS:
        return None
    between = sum(float((g == k).sum()) * (float(v[g == k].mean()) - grand) ** 2 for k in set(g))
    return between / total

"""The scope − strength gap's null (construct-validity.txt §5.2): axis labels permuted within base
items or across the construct arm, chosen by the design (``choose_gap_null``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgeaudit.analyses.validity.design import _Design
from judgeaudit.analyses.validity.rates import _ci, _num
from judgeaudit.probes.taxonomy import CONSTRUCT_AXES
from judgeaudit.stats.resample import percentile_interval, permutation_p, permute_within_groups

GAP_NULLS = ("auto", "construct_arm", "within_base")
#: ``auto`` permutes within base items when at least this share of the construct arm's base items
#: carry edits on both axes (judgeaudit's own rule; the paper's design, one construct edit per base
#: item, has none and the bundled set, every slot on every base, has all).
WITHIN_BASE_SHARE = 0.5

_CHUNK = 4_000_000
"""Permutations are summed in blocks of about this many (permutation, probe) cells, so memory stays
bounded whatever the number of probes."""


def choose_gap_null(d: _Design) -> tuple[str, str]:
    """The gap null the design supports, with the reason. Within a base item the axis label is
    exchangeable under the null whatever the design, and that shuffle keeps every base item's own
    scope/strength split, so on a design whose base items carry several construct edits it has its
    nominal size (the across-arm shuffle unbalances the split and is conservative there, with less
    power); with one construct edit per base item it cannot move, and the across-arm shuffle is the
    test (§5.2)."""
    arm = d.in_arm & ~d.is_control & np.isin(d.axis, CONSTRUCT_AXES)
    bases = np.unique(d.base_index[arm])
    if not len(bases):
        return "construct_arm", "no construct-arm probes on the scope or strength axis"
    scope = np.unique(d.base_index[arm & (d.axis == "scope")])
    strength = np.unique(d.base_index[arm & (d.axis == "strength")])
    both = len(np.intersect1d(scope, strength))
    share = both / len(bases)
    which = "within_base" if share >= WITHIN_BASE_SHARE else "construct_arm"
    return which, (f"{both} of {len(bases)} base items in the construct arm carry edits on both axes "
                   f"({'≥' if which == 'within_base' else '<'} {WITHIN_BASE_SHARE:.0%}): axis labels permuted "
                   + ("within each base item" if which == "within_base" else "across the construct arm"))


def _gap_permutation_p(f: np.ndarray, sel: np.ndarray, d: _Design, observed: float, n_perm: int,
                       seed: int, *, within_base: bool = False, perms: dict | None = None) -> float | None:
    """Axis-label permutation null of the scope − strength gap (§5.2): the axis labels of the
    construct-arm probes are shuffled across the arm with grades (hence flips at τ) held fixed, and
    the gap recomputed by Eq. (6) under each shuffle. ``within_base`` restricts the shuffle to
    each base item's own probes; with one construct edit per base item (the paper's design) that
    null cannot move (``choose_gap_null`` picks between the two by the design). ``perms`` keeps the last
    draw, for the next judge with the same usable construct probes (the same seed gives it the same
    shuffles)."""
    idx = np.flatnonzero(sel)
    if len(idx) < 2:
        return None
    is_scope = (d.axis[idx] == "scope")
    groups = d.base_index[idx] if within_base else np.zeros(len(idx), dtype=int)
    key = (idx.tobytes(), within_base, n_perm, seed)
    if perms is None or key not in perms:
        perm = permute_within_groups(is_scope, groups, n_perm, seed)  # (n_perm, n_c) bool
        if perms is not None:
            perms.clear()          # judges with the same usable probes share one draw
            perms[key] = perm
    else:
        perm = perms[key]
    _, g = np.unique(d.base_index[idx], return_inverse=True)
    by_base = np.argsort(g, kind="stable")                # the probes listed base item by base item
    starts = np.flatnonzero(np.r_[True, np.diff(g[by_base]) != 0])
    flips = f[idx].astype(bool)
    n_all, f_all = np.bincount(g).astype(float), np.bincount(g, weights=flips)
    fl = flips[by_base]
    null = np.empty(len(perm))
    step = max(1, _CHUNK // max(len(idx), 1))
    for lo in range(0, len(perm), step):
        P = perm[lo:lo + step][:, by_base]
        # per-base counts of scope-labelled probes and of their flips (strength: the rest); whole numbers,
        # so exact in any order, and row-major so each permutation's mean over base items adds in one order
        n_sc = np.add.reduceat(P, starts, axis=1, dtype=float)
        f_sc = np.add.reduceat(P & fl, starts, axis=1, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            sc = f_sc / n_sc
            st = (f_all - f_sc) / (n_all - n_sc)
        null[lo:lo + step] = np.nanmean(sc, axis=1) - np.nanmean(st, axis=1)
    return permutation_p(observed, null, "two-sided")


def axis_gap(f: np.ndarray, cons: np.ndarray, d: _Design, est: Mapping[str, float], cis: Mapping[str, Any],
             boot: np.ndarray, col: Mapping[str, int], subsets: Mapping[str, np.ndarray], *, level: float,
             n_perm: int, seed: int, gap_null: str, perms: dict | None = None) -> tuple[dict[str, Any], bool]:
    """R on each measurable axis and the scope − strength gap at the operating point (§5.2): its
    paired bootstrap interval, its permutation p-value under ``gap_null`` and, with human labels, the
    gap on unanimously labelled probes.

    Args:
        f: ``(n_probes,)`` flips at τ; ``cons``: the usable construct-arm probes.
        est, cis: point estimates and intervals of every subset column; ``boot`` its resamples and
            ``col`` the column of each subset.

    Returns:
        ``(stats, gap_ok)``: the entries of the judge's stats, and whether the gap is reported.
    """
    out: dict[str, Any] = {}
    scope_ax, strength_ax = d.axes["scope"]["measurable"], d.axes["strength"]["measurable"]
    if scope_ax:
        out["R_scope"] = _num(est["scope"])
        out["R_scope_ci"] = cis["scope"]
    if strength_ax:
        out["R_strength"] = _num(est["strength"])
        out["R_strength_ci"] = cis["strength"]
    gap_ok = bool(scope_ax and strength_ax and out["R_scope"] is not None and out["R_strength"] is not None)
    if gap_ok:
        gap = est["scope"] - est["strength"]
        out["gap"] = _num(gap)
        out["gap_ci"] = _ci(*percentile_interval(boot[:, col["scope"]] - boot[:, col["strength"]], level))
        if n_perm > 0:
            out["gap_perm_p"] = _gap_permutation_p(f, cons & np.isin(d.axis, CONSTRUCT_AXES), d,
                                                   gap, n_perm, seed, within_base=gap_null == "within_base",
                                                   perms=perms)
        if d.direction_source == "human":
            gu = est["scope_unan"] - est["strength_unan"]
            out["gap_unanimous"] = {"gap": _num(gu),
                                    "ci": _ci(*percentile_interval(boot[:, col["scope_unan"]]
                                                                   - boot[:, col["strength_unan"]], level)),
                                    "n": int((subsets["scope_unan"] | subsets["strength_unan"]).sum())}
    return out, gap_ok

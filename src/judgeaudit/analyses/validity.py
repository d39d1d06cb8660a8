"""The (S, R) validity profile of a graded judge (construct-validity.txt §2, §4.1–4.2, §5.1–5.2,
Appendices A–D, H S2/S4).

Inputs are two tables:

* the probe table (``records.PROBE_COLUMNS``): one row per (base item, intervention);
* the verdict table: at least ``judge_id, request_id, score, parse_ok, error, epoch``. The grade of
  a base item's original has ``request_id = base_id``; an edited text's has ``request_id =
  probe_id``. ``score`` is the graded overreach score (1–9, possibly a non-integer expected score).
  Rows with an error, ``parse_ok`` False or a NaN score are unusable: they are counted, never
  silently dropped. Epoch 0 gives the profile; epochs ≥ 1 are re-grades, used only for regrade
  agreement: the share of re-graded requests whose grade is reproduced exactly (App. D, Figure 10),
  with the agreement of the binary verdict at τ beside it as ``regrade_binary_agreement``.

For every judge the binary verdict at threshold τ is ``flagged = score ≥ τ`` (Remark 1: we cut the
grade ourselves), a probe *flips* when its original and edited verdicts differ, and

* ``S`` = share of construct-preserving (control) probes that do not flip,
* ``R`` = share of construct-changing probes that flip,

both by Eq. (6): base items weighted equally, interventions equally within a base item. Beside R,
``R_plus`` counts the construct flips toward the labelled direction (a higher grade is more
overreach, so the edit labelled as overreaching is flagged and its original is not) and
``wrong_way_rate`` the flips the other way; R = R⁺ + wrong-way rate. The frontier (Def. 4) is
traced over every attained threshold; the operating point is the threshold with the highest R
subject to S ≥ the floor. Intervals resample base items (App. A.2), one counts matrix shared by
every judge and every statistic, so all intervals are paired, and the operating point is chosen
again in every resample. ``R_excess`` (R − (1 − S)) reads each half of the base items at the τ
chosen on the other half, so that the choice of τ cannot make a judge with no sensitivity look
sensitive (``analyses.excess``, with its interval's measured coverage). The scope − strength gap's null permutes axis labels (§5.2) within base items where the
design gives base items edits on both axes, across the construct arm where a base item carries one
construct edit (``choose_gap_null``; the run records which).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.excess import crossfit_excess
from judgeaudit.probes.taxonomy import AXES, CONSTRUCT_AXES, CONSTRUCT_SLOTS, SLOTS, axis_of
from judgeaudit.probes.taxonomy import intended_direction as slot_direction
from judgeaudit.stats.agreement import majority_label, raw_pairwise_agreement
from judgeaudit.stats.resample import bootstrap_counts, percentile_ci, permutation_p, permute_within_groups

__all__ = [
    "JudgeProfile",
    "ValidityResult",
    "base_weighted_mean",
    "flips_at",
    "frontier_hull",
    "matched_operating_point",
    "validity_profile",
]

USABLE_POINT_SHARE = 0.01
"""A grade value is a usable operating point if it carries at least this share of a judge's
usable grades (App. D, Figure 10)."""

SLOT_ORDER: tuple[str, ...] = tuple(s.name for s in SLOTS)
_EPS = 1e-12


# ----------------------------------------------------------------------------- small estimators


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
        member: the ``(n_base, n_probes)`` membership matrix of ``base_index``, when the caller
            already has it.

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
    sums = member @ (values * masks)
    counts = member @ masks
    has = (counts > 0).astype(float)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return means, has


def _membership(base_index: np.ndarray, n_base: int) -> np.ndarray:
    """``(n_base, n_probes)`` 0/1 matrix: probe j belongs to base item i."""
    member = np.zeros((n_base, len(base_index)))
    member[base_index, np.arange(len(base_index))] = 1.0
    return member


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
    both = np.einsum("bn,nk->bk", counts, stacked) if stacked.shape[1] <= 64 else counts @ stacked
    k = has.shape[1]
    num, den = both[:, :k], both[:, k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


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


# ----------------------------------------------------------------------------- result objects


def _in_cross_judge_means(j: JudgeProfile) -> bool:
    """Whether a judge enters the cross-judge means (per-slot mean flip rate, η² over judges): an
    interpretable judge under study, not a reference instrument and not a single point."""
    s = j.stats
    return bool(s["interpretable"] and not s["single_point"] and not s.get("reference_instrument"))


def _mean_flip_rate(judges: Sequence[JudgeProfile], slot: str) -> float | None:
    """Mean flip rate on ``slot`` at the operating points of the judges that enter cross-judge means
    (``_in_cross_judge_means``) and measured it."""
    rates = [j.stats["per_slot"][slot]["flip_rate"] for j in judges
             if _in_cross_judge_means(j) and j.stats["per_slot"].get(slot, {}).get("flip_rate") is not None]
    return float(np.mean(rates)) if rates else None


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _ci(lo: Any, hi: Any) -> list[float | None] | None:
    lo, hi = _num(lo), _num(hi)
    return None if lo is None or hi is None else [lo, hi]


@dataclass(frozen=True)
class JudgeProfile:
    """One judge's profile at its matched-invariance operating point, with its frontier.

    ``stats`` holds everything in the ``judges[<id>]`` block of ``result.json``.
    """

    judge_id: str
    stats: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.stats[key]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.stats)


@dataclass(frozen=True)
class ValidityResult:
    """The validity analysis of one probe set and one or more judges.

    ``to_dict()`` is the ``result.json`` shape: top-level ``s_floor, bar, n_base, n_probes,
    direction_source`` (plus the slot/axis measurability tables, the length checks and notes) and
    one block per judge under ``judges``.
    """

    s_floor: float
    bar: float
    level: float
    n_boot: int
    n_perm: int
    seed: int
    n_base: int
    n_probes: int
    direction_source: str
    judges: tuple[JudgeProfile, ...]
    slots: Mapping[str, Mapping[str, Any]]
    axes: Mapping[str, Mapping[str, Any]]
    length: Mapping[str, Any]
    notes: tuple[str, ...] = field(default_factory=tuple)
    gap_null: str = "construct_arm"
    tau_in_bootstrap: str = "reselect"
    gap_null_reason: str = ""

    def judge(self, judge_id: str) -> JudgeProfile:
        for j in self.judges:
            if j.judge_id == judge_id:
                return j
        raise KeyError(judge_id)

    def __getitem__(self, judge_id: str) -> JudgeProfile:
        return self.judge(judge_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "s_floor": self.s_floor,
            "bar": self.bar,
            "n_base": self.n_base,
            "n_probes": self.n_probes,
            "direction_source": self.direction_source,
            "level": self.level,
            "n_boot": self.n_boot,
            "n_perm": self.n_perm,
            "seed": self.seed,
            "bootstrap_unit": "base_id",
            "gap_null": self.gap_null,
            "gap_null_reason": self.gap_null_reason,
            "tau_in_bootstrap": self.tau_in_bootstrap,
            "cross_judge_judges": [j.judge_id for j in self.judges if _in_cross_judge_means(j)],
            "slots": {k: dict(v) for k, v in self.slots.items()},
            "axes": {k: dict(v) for k, v in self.axes.items()},
            "length": dict(self.length),
            "notes": list(self.notes),
            "judges": {j.judge_id: j.to_dict() for j in self.judges},
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per judge, in the shape of the paper's Table 5 (with intervals)."""
        rows = []
        for j in self.judges:
            s = j.stats
            ci = lambda k, i: (s[k][i] if s.get(k) else None)  # noqa: E731
            rows.append({
                "judge": j.judge_id, "tau": s["tau"], "S": s["S"], "S_lo": ci("S_ci", 0),
                "S_hi": ci("S_ci", 1), "R": s["R"], "R_lo": ci("R_ci", 0), "R_hi": ci("R_ci", 1),
                "R_scope": s["R_scope"], "R_strength": s["R_strength"], "gap": s["gap"],
                "gap_lo": ci("gap_ci", 0), "gap_hi": ci("gap_ci", 1), "gap_perm_p": s["gap_perm_p"],
                "control_flip_rate": s["control_flip_rate"], "usable_points": s["usable_points"],
                "regrade_agreement": s["regrade_agreement"],
                "regrade_binary_agreement": s["regrade_binary_agreement"], "parse_failures": s["parse_failures"],
                "interpretable": s["interpretable"], "single_point": s["single_point"],
                "R_plus": s["R_plus"], "wrong_way_rate": s["wrong_way_rate"], "R_excess": s["R_excess"],
                "reference_instrument": s["reference_instrument"],
            })
        return pd.DataFrame(rows)

    def slot_frame(self) -> pd.DataFrame:
        """One row per slot, in the shape of the paper's Tables 3–4 (n, agreement, yield) plus the
        mean flip rate at their operating points over the judges under study (interpretable, not a
        reference instrument, not a single point)."""
        rows = []
        for slot in SLOT_ORDER:
            info = self.slots[slot]
            rows.append({"slot": slot, "axis": info["axis"], "n": info["n_in_arm"],
                         "n_probes": info["n_probes"], "agreement": info["agreement"],
                         "yield": info["yield"], "measurable": info["measurable"],
                         "mean_flip_rate": _mean_flip_rate(self.judges, slot)})
        return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- the design


@dataclass(frozen=True)
class _Design:
    probe_ids: np.ndarray
    base_index: np.ndarray
    bases: np.ndarray
    slot: np.ndarray
    axis: np.ndarray
    is_control: np.ndarray
    in_arm: np.ndarray
    unanimous: np.ndarray
    d_len: np.ndarray
    base_len: np.ndarray
    edit_len: np.ndarray
    direction_source: str
    slots: dict[str, dict[str, Any]]
    axes: dict[str, dict[str, Any]]
    notes: list[str]


def _labels_of(v: Any) -> list[str] | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    labs = [str(x) for x in list(v)]
    return labs or None


def _facts_differ(meta: Any) -> bool:
    """Appendix C: a pair the annotators say asserts different facts is a generator failure. Read
    from ``meta["facts_differ"]`` (one bool per annotator, as ``probes.merge`` writes it); True on
    a strict majority."""
    if not isinstance(meta, dict):
        return False
    fd = meta.get("facts_differ")
    if not isinstance(fd, list | tuple):
        return False
    vals = [bool(x) for x in fd if x is not None]
    return bool(vals) and sum(vals) * 2 > len(vals)


def _agreement(labels: list[list[str]], bar: float) -> tuple[float, bool]:
    """Raw pairwise agreement of the label lists (NaN when none) and whether it reaches ``bar`` (App. C)."""
    agr = raw_pairwise_agreement(labels) if labels else float("nan")
    return agr, bool(not math.isnan(agr) and agr >= bar)


def _design(probes: pd.DataFrame, bar: float) -> _Design:
    need = {"probe_id", "base_id", "slot", "original", "edited"}
    missing = need - set(probes.columns)
    if missing:
        raise ValueError(f"probe table lacks columns {sorted(missing)}")
    if probes["probe_id"].duplicated().any():
        raise ValueError("probe table has duplicate probe_id values")
    unknown = sorted(set(probes["slot"]) - set(SLOT_ORDER))
    if unknown:
        raise ValueError(f"probe table has unknown slots {unknown}")
    probes = probes.reset_index(drop=True)
    n = len(probes)
    bases, base_index = np.unique(probes["base_id"].astype(str).to_numpy(), return_inverse=True)
    slot = probes["slot"].astype(str).to_numpy()
    axis = np.array([axis_of(s) for s in slot])
    is_control = axis == "control"
    designed = np.array([slot_direction(s) for s in slot])
    labels = [_labels_of(v) for v in probes["labels"]] if "labels" in probes else [None] * n
    has_labels = np.array([lab is not None for lab in labels])
    notes: list[str] = []

    base_len = probes["original"].astype(str).str.len().to_numpy(dtype=float)
    edit_len = probes["edited"].astype(str).str.len().to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_len = np.where(base_len > 0, (edit_len - base_len) / base_len, np.nan)

    slots: dict[str, dict[str, Any]] = {}
    axes: dict[str, dict[str, Any]] = {}
    if has_labels.any():
        source = "human"
        majority = np.array([majority_label(lab) if lab else None for lab in labels], dtype=object)
        match = np.array([m is not None and m == d for m, d in zip(majority, designed, strict=True)])
        unanimous = np.array([lab is not None and len(lab) >= 2 and len(set(lab)) == 1 for lab in labels]) & match
        axis_ok: dict[str, bool] = {}
        for ax in AXES:
            sel = [labels[i] for i in np.flatnonzero((axis == ax) & has_labels)]
            agr, axis_ok[ax] = _agreement(sel, bar)
            axes[ax] = {"agreement": _num(agr), "measurable": axis_ok[ax], "n_annotated": len(sel)}
        slot_ok: dict[str, bool] = {}
        for s in SLOT_ORDER:
            idx = np.flatnonzero(slot == s)
            lab_idx = [i for i in idx if has_labels[i]]
            sel = [labels[i] for i in lab_idx]
            agr, slot_agrees = _agreement(sel, bar)
            ok = slot_agrees and axis_ok[axis_of(s)]
            slot_ok[s] = ok
            flat = [x for lab in sel for x in lab]
            dom = max((flat.count(c) for c in set(flat)), default=0) / len(flat) if flat else None
            maj = [majority[i] for i in lab_idx]
            n_match = int(sum(match[i] for i in lab_idx))
            slots[s] = {
                "axis": axis_of(s), "n_probes": int(len(idx)), "n_annotated": len(sel),
                "n_unlabelled": int(len(idx) - len(sel)), "agreement": _num(agr),
                "measurable": ok, "n_usable": n_match,
                "yield": (n_match / len(sel)) if sel else None,
                "n_cannot_tell": int(sum(m == "cannot_tell" for m in maj)),
                "n_no_majority": int(sum(m is None for m in maj)),
                "n_other_direction": int(sum(m is not None and m != "cannot_tell" and m != slot_direction(s)
                                             for m in maj)),
                "dominant_label_share": dom,
                "dominant_label_flag": bool(dom is not None and dom >= 0.9),
            }
            if sel and not ok:
                why = (f"agreement {agr:.3f} below the bar {bar}" if not math.isnan(agr) and agr < bar
                       else "its axis is below the bar" if not axis_ok[axis_of(s)]
                       else "no item carries two or more labels")
                notes.append(f"slot {s} is not measurable ({why}); excluded from "
                             f"{'S' if axis_of(s) == 'control' else 'R and the axis comparison'}")
        for ax in AXES:
            if axes[ax]["n_annotated"] and not axis_ok[ax]:
                notes.append(f"axis {ax} is not measurable (agreement {axes[ax]['agreement']}); excluded")
        facts_bad = np.array([_facts_differ(m) for m in (probes["meta"] if "meta" in probes else [None] * n)])
        for s in SLOT_ORDER:
            slots[s]["n_facts_differ"] = int((facts_bad & (slot == s)).sum())
        in_arm = has_labels & match & ~facts_bad & np.array([slot_ok[s] for s in slot])
        n_unl = int((~has_labels).sum())
        if n_unl:
            notes.append(f"{n_unl} probes carry no human labels and are excluded from both arms")
        n_ct = sum(v["n_cannot_tell"] for v in slots.values())
        n_nm = sum(v["n_no_majority"] for v in slots.values())
        n_lab = int(has_labels.sum())
        n_fd = int(facts_bad.sum())
        notes.append(f"cannot-tell majority on {n_ct} of {n_lab} annotated probes ({n_ct / n_lab:.1%}); "
                     f"no majority label on {n_nm} ({n_nm / n_lab:.1%}); both leave the primary analysis "
                     f"(Appendix C). {n_fd} probes whose annotators (by strict majority) said the facts "
                     "differ are discarded as generator failures.")
        for ax in AXES:
            axes[ax]["n_in_arm"] = int((in_arm & (axis == ax)).sum())
    else:
        source = "intended"
        given = probes["intended_direction"].to_numpy(dtype=object) if "intended_direction" in probes \
            else np.full(n, None, dtype=object)
        intended = np.array([g if isinstance(g, str) else d for g, d in zip(given, designed, strict=True)])
        in_arm = intended == designed
        unanimous = np.zeros(n, dtype=bool)
        off = int((~in_arm).sum())
        if off:
            notes.append(f"{off} probes carry an intended_direction other than their slot's and are excluded")
        for s in SLOT_ORDER:
            idx = slot == s
            slots[s] = {"axis": axis_of(s), "n_probes": int(idx.sum()), "n_annotated": 0,
                        "n_unlabelled": int(idx.sum()), "agreement": None, "measurable": True,
                        "n_usable": int((in_arm & idx).sum()), "yield": None, "n_cannot_tell": None,
                        "n_no_majority": None, "n_other_direction": None,
                        "dominant_label_share": None, "dominant_label_flag": False}
        for ax in AXES:
            axes[ax] = {"agreement": None, "measurable": True, "n_annotated": 0,
                        "n_in_arm": int((in_arm & (axis == ax)).sum())}
        notes.append("directions are author-intended and not human-verified")
    for s in SLOT_ORDER:
        slots[s]["n_in_arm"] = int((in_arm & (slot == s)).sum())
        slots[s].setdefault("n_facts_differ", None)
        slots[s]["arm"] = "control" if axis_of(s) == "control" else "construct"
    if "group" in probes and probes["group"].nunique() < len(bases):
        notes.append("the group column is coarser than base items; intervals resample base items, "
                     "the unit Appendix A.2 names")
    return _Design(probe_ids=probes["probe_id"].astype(str).to_numpy(), base_index=base_index,
                   bases=bases, slot=slot, axis=axis, is_control=is_control, in_arm=in_arm,
                   unanimous=unanimous, d_len=d_len, base_len=base_len, edit_len=edit_len,
                   direction_source=source, slots=slots, axes=axes, notes=notes)


# ----------------------------------------------------------------------------- one judge


def _member(ids: pd.Series, allowed: Any) -> np.ndarray:
    """Boolean mask of ``ids`` that are in the set ``allowed`` (a hash lookup per row)."""
    allowed = allowed if isinstance(allowed, (set, frozenset, dict)) else set(allowed)
    return np.fromiter((x in allowed for x in ids.tolist()), dtype=bool, count=len(ids))


def _column_cis(boot: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of every column of ``boot``: one quantile call for the columns without
    NaN resamples, ``stats.resample.percentile_ci`` (NaN-aware) for the rest."""
    lo = np.full(boot.shape[1], np.nan)
    hi = np.full(boot.shape[1], np.nan)
    nan_cols = np.isnan(boot).any(axis=0)
    clean = ~nan_cols
    if clean.any():
        alpha = (1.0 - level) / 2.0
        lo[clean], hi[clean] = np.quantile(boot[:, clean], [alpha, 1.0 - alpha], axis=0)
    partial = nan_cols & ~np.isnan(boot).all(axis=0)
    if partial.any():
        lo[partial], hi[partial] = percentile_ci(boot[:, partial], level, axis=0)
    return lo, hi


def _judge_profile(judge_id: str, rows: pd.DataFrame, d: _Design, *, counts: np.ndarray, s_floor: float,
                   level: float, n_perm: int, seed: int, gap_null: str = "construct_arm",
                   tau_in_bootstrap: str = "reselect") -> JudgeProfile:
    notes: list[str] = []
    # A reference instrument (reference:constant, :length, ...) is known by the backend its verdict
    # rows record, never by its id: it calibrates the others and stays out of cross-judge means.
    reference = bool(len(rows) and "provider" in rows and (rows["provider"] == "reference").all())
    rows = rows.copy()
    rows["request_id"] = rows["request_id"].astype(str)
    rows["epoch"] = pd.to_numeric(rows["epoch"], errors="coerce").fillna(0).astype(int) if "epoch" in rows else 0
    rows["score"] = pd.to_numeric(rows["score"], errors="coerce")
    wanted = np.concatenate([d.bases, d.probe_ids])
    wanted_set = set(wanted.tolist())
    rows = rows[_member(rows["request_id"], wanted_set)]  # this probe set's requests only
    err = rows["error"].notna() if "error" in rows else pd.Series(False, index=rows.index)
    pok = rows["parse_ok"].fillna(False).astype(bool) if "parse_ok" in rows else pd.Series(True, index=rows.index)
    rows["_usable"] = ~err & pok & rows["score"].notna()
    n_errors = int(err.sum())
    n_parse = int((~err & ~pok).sum())
    n_nan = int((~err & pok & rows["score"].isna()).sum())
    dup = rows.duplicated(["request_id", "epoch"], keep="first")
    if dup.any():
        notes.append(f"{int(dup.sum())} duplicate (request, epoch) rows; the first of each was used")
        rows = rows[~dup]
    e0 = rows[rows["epoch"] == 0]
    grade = dict(zip(e0.loc[e0["_usable"], "request_id"], e0.loc[e0["_usable"], "score"].astype(float), strict=True))
    n_missing = int(len(wanted_set - set(e0["request_id"])))
    base_ids = d.bases[d.base_index]
    bs = np.array([grade.get(b, np.nan) for b in base_ids], dtype=float)
    es = np.array([grade.get(p, np.nan) for p in d.probe_ids], dtype=float)
    usable_p = ~np.isnan(bs) & ~np.isnan(es)
    arm = d.in_arm & usable_p
    ctrl = arm & d.is_control
    cons = arm & ~d.is_control
    n_unusable_probes = int((d.in_arm & ~usable_p).sum())
    if n_unusable_probes:
        notes.append(f"{n_unusable_probes} probes in the arms lack a usable original or edited grade "
                     "and are left out of S and R")

    scores = np.array(list(grade.values()), dtype=float)
    n_b = len(d.bases)
    values, freq = np.unique(scores, return_counts=True)
    usable_points = int((freq >= USABLE_POINT_SHARE * len(scores) - _EPS).sum()) if len(scores) else 0
    if len(scores) and not np.allclose(values, np.round(values)):
        notes.append("grades are non-integer (expected scores); usable points count exact grade values")

    stats: dict[str, Any] = {
        "S": None, "R": None, "R_scope": None, "R_strength": None, "gap": None, "gap_ci": None,
        "gap_perm_p": None, "S_ci": None, "R_ci": None, "tau": None, "interpretable": False,
        "per_slot": {}, "frontier": [], "usable_points": usable_points, "regrade_agreement": None,
        "parse_failures": n_parse,
        # extras
        "R_scope_ci": None, "R_strength_ci": None, "control_flip_rate": None, "control_flip_rate_ci": None,
        "hull": [], "single_point": False, "operating_point_degenerate": None,
        "distinct_grades": int(len(values)), "n_grades": int(len(e0)), "n_usable_grades": int(len(scores)),
        "errors": n_errors, "nan_scores": n_nan, "missing": n_missing, "unusable_probes": n_unusable_probes,
        "n_control": int(ctrl.sum()), "n_construct": int(cons.sum()),
        "regrade_exact_agreement": None, "n_regraded": 0, "gap_unanimous": None,
        "length": {}, "eta2_axis": None, "notes": notes,
        "regrade_binary_agreement": None, "R_excess": None, "R_excess_ci": None,
        "R_plus": None, "R_plus_ci": None, "wrong_way_rate": None, "wrong_way_rate_ci": None,
        "directional": None, "tau_boot_same_share": None, "reference_instrument": reference,
    }
    if not len(scores):
        stats["single_point"] = True
        notes.append("the judge returned no usable grades: reported as a single point with no profile")
        return JudgeProfile(judge_id, stats)

    taus = np.append(values, values[-1] + 1.0)
    degenerate = np.zeros(len(taus), dtype=bool)
    degenerate[0] = degenerate[-1] = True
    F = flips_at(bs, es, taus)  # (n_probes, n_tau), meaningful where usable_p
    F = np.where(usable_p[:, None], F, False)
    mc, hc = _per_base(F, np.repeat(ctrl[:, None], len(taus), 1), d.base_index, n_b)
    mr, hr = _per_base(F, np.repeat(cons[:, None], len(taus), 1), d.base_index, n_b)
    S_all = 1.0 - _estimates(mc, hc)
    R_all = _estimates(mr, hr)
    frontier = [(_num(s), _num(r), float(t)) for s, r, t in zip(S_all, R_all, taus, strict=True)]
    stats["frontier"] = [list(p) for p in frontier]
    stats["hull"] = [list(p) for p in frontier_hull(frontier)]
    if len(values) == 1:
        stats["single_point"] = True
        notes.append(f"the judge returned a single distinct grade ({values[0]:g}): it is a constant "
                     "instrument and is reported as a single point")
        idx, interp = 0, False   # the degenerate corner (1, 0): no threshold moves its verdict
    else:
        idx, interp = matched_operating_point(S_all, R_all, taus, degenerate, s_floor)
    if np.isnan(S_all).all():
        notes.append("no usable control probes: S cannot be estimated, so R is not reported (Corollary 1)")
        return JudgeProfile(judge_id, stats)
    if idx is None:
        notes.append("no usable construct probes: R cannot be estimated")
        return JudgeProfile(judge_id, stats)
    tau = float(taus[idx])
    stats["tau"] = tau
    stats["interpretable"] = interp
    stats["operating_point_degenerate"] = bool(degenerate[idx])
    if not interp:
        notes.append(f"no non-degenerate threshold reaches S ≥ {s_floor}: the judge is uninterpretable and "
                     "its R is not evidence of sensitivity (Corollary 1)")
    elif degenerate[idx] and not stats["single_point"]:
        notes.append("the operating point is a constant corner (every or no grade flagged): no threshold "
                     "that reaches the floor makes the judge move on a construct edit")

    f = F[:, idx]
    # ---- every subset evaluated at τ, in one matrix: one column per (kind of move, subset)
    scope_ax, strength_ax = d.axes["scope"]["measurable"], d.axes["strength"]["measurable"]
    subsets: dict[str, np.ndarray] = {"control": ctrl, "construct": cons,
                                      "scope": cons & (d.axis == "scope"),
                                      "strength": cons & (d.axis == "strength")}
    for s in SLOT_ORDER:
        subsets[f"slot:{s}"] = arm & (d.slot == s)
    subsets["scope_unan"] = subsets["scope"] & d.unanimous
    subsets["strength_unan"] = subsets["strength"] & d.unanimous
    subsets["scope_longer"] = subsets["scope"] & (d.d_len > 0)
    subsets["strength_longer"] = subsets["strength"] & (d.d_len > 0)
    subsets["scope_shorter"] = subsets["scope"] & (d.d_len < 0)
    subsets["strength_shorter"] = subsets["strength"] & (d.d_len < 0)
    columns: list[tuple[str, str, np.ndarray]] = [(k, "flip", m) for k, m in subsets.items()]
    columns += [(f"{k}{sign}", kind, subsets[k]) for k in ("construct", "scope", "strength")
                for sign, kind in (("+", "toward"), ("-", "wrong"))]
    names = [c[0] for c in columns]
    kinds = [c[1] for c in columns]
    masks = np.column_stack([c[2] for c in columns])

    def moves_at(t: int) -> dict[str, np.ndarray]:
        """Flips at ``taus[t]``, split by direction. A construct probe enters the arm only when its
        direction (the annotators' majority, or without labels the intended one) is the slot's
        designed ``edited``: the edit is the member that claims more than the evidence licenses.
        A higher grade means more overreach, so a flip toward that label flags the edit and not
        its original; a flip the wrong way flags the original and not the edit."""
        with np.errstate(invalid="ignore"):
            b, e = bs >= taus[t], es >= taus[t]
        return {"flip": F[:, t], "toward": usable_p & e & ~b, "wrong": usable_p & b & ~e}

    member = _membership(d.base_index, n_b)

    def columns_at(t: int) -> tuple[np.ndarray, np.ndarray]:
        mv = moves_at(t)
        return _per_base(np.column_stack([mv[k] for k in kinds]).astype(float), masks, d.base_index, n_b, member)

    means, has = columns_at(idx)
    est = dict(zip(names, _estimates(means, has), strict=True))
    # Intervals are those of the whole procedure (τ chosen as argmax R s.t. S ≥ floor, then the
    # statistics read at it): τ is re-selected inside every resample, so the selection's optimism
    # is in the interval rather than hidden by it.
    if not len(counts):
        tau_b = np.zeros(0, dtype=int)
    elif tau_in_bootstrap == "reselect" and not stats["single_point"]:
        tau_b, _ = matched_operating_points(1.0 - _boot_estimates(counts, mc, hc), _boot_estimates(counts, mr, hr),
                                            taus, degenerate, s_floor)
    else:
        tau_b = np.full(len(counts), idx)
    boot = np.full((len(counts), len(names)), np.nan)
    for u in np.unique(tau_b[tau_b >= 0]):
        sel = tau_b == u
        mu, hu = (means, has) if u == idx else columns_at(int(u))
        boot[sel] = _boot_estimates(counts[sel], mu, hu)
    stats["tau_boot_same_share"] = _num(np.mean(tau_b == idx)) if len(tau_b) else None
    col = {k: i for i, k in enumerate(names)}
    if len(boot):
        lo_all, hi_all = _column_cis(boot, level)
    cis = {k: (_ci(lo_all[i], hi_all[i]) if len(boot) else None) for k, i in col.items()}

    def ci_of(samples: np.ndarray) -> list[float | None] | None:
        if not len(samples) or np.isnan(samples).all():
            return None
        lo, hi = percentile_ci(samples, level)
        return _ci(lo, hi)

    cfr = est["control"]
    stats["S"] = _num(1.0 - cfr)
    stats["control_flip_rate"] = _num(cfr)
    stats["R"] = _num(est["construct"])
    c_ci = cis["control"]
    stats["control_flip_rate_ci"] = c_ci
    stats["S_ci"] = None if c_ci is None else [1.0 - c_ci[1], 1.0 - c_ci[0]]
    stats["R_ci"] = cis["construct"]
    # ---- R − (1 − S) without post-selection optimism (the operating point cross-fitted)
    if not stats["single_point"]:
        cf, cf_ci = crossfit_excess(mc, hc, mr, hr, lambda S_, R_: matched_operating_points(
            S_, R_, taus, degenerate, s_floor)[0], counts, seed, level=level)
        stats["R_excess"] = _num(cf)
        stats["R_excess_ci"] = None if cf_ci is None else _ci(*cf_ci)
    # ---- directional sensitivity: R = R⁺ + wrong-way rate, per base item and so under Eq. (6)
    stats["R_plus"] = _num(est["construct+"])
    stats["R_plus_ci"] = cis["construct+"]
    stats["wrong_way_rate"] = _num(est["construct-"])
    stats["wrong_way_rate_ci"] = cis["construct-"]
    mv = moves_at(idx)
    directional: dict[str, Any] = {"n_flips": int((mv["flip"] & cons).sum()),
                                   "n_toward": int((mv["toward"] & cons).sum()),
                                   "n_wrong_way": int((mv["wrong"] & cons).sum())}
    for ax, measurable in (("scope", scope_ax), ("strength", strength_ax)):
        directional[ax] = {"R_plus": _num(est[f"{ax}+"]) if measurable else None,
                           "R_plus_ci": cis[f"{ax}+"] if measurable else None,
                           "wrong_way_rate": _num(est[f"{ax}-"]) if measurable else None,
                           "wrong_way_rate_ci": cis[f"{ax}-"] if measurable else None,
                           "n_flips": int((mv["flip"] & subsets[ax]).sum()),
                           "n_wrong_way": int((mv["wrong"] & subsets[ax]).sum())}
    stats["directional"] = directional
    if directional["n_flips"] and directional["n_wrong_way"] * 2 >= directional["n_flips"]:
        notes.append(f"{directional['n_wrong_way']} of {directional['n_flips']} construct flips at τ go the "
                     "wrong way (the edit graded as overreaching less than its original): R counts them, R⁺ "
                     "does not")
    if scope_ax:
        stats["R_scope"] = _num(est["scope"])
        stats["R_scope_ci"] = cis["scope"]
    if strength_ax:
        stats["R_strength"] = _num(est["strength"])
        stats["R_strength_ci"] = cis["strength"]
    gap_ok = scope_ax and strength_ax and stats["R_scope"] is not None and stats["R_strength"] is not None
    if gap_ok:
        gap = est["scope"] - est["strength"]
        stats["gap"] = _num(gap)
        stats["gap_ci"] = ci_of(boot[:, col["scope"]] - boot[:, col["strength"]])
        if n_perm > 0:
            stats["gap_perm_p"] = _gap_permutation_p(f, cons & np.isin(d.axis, CONSTRUCT_AXES), d,
                                                     gap, n_perm, seed, within_base=gap_null == "within_base")
        if d.direction_source == "human":
            gu = est["scope_unan"] - est["strength_unan"]
            stats["gap_unanimous"] = {"gap": _num(gu),
                                      "ci": ci_of(boot[:, col["scope_unan"]] - boot[:, col["strength_unan"]]),
                                      "n": int((subsets["scope_unan"] | subsets["strength_unan"]).sum())}
    else:
        notes.append("the scope − strength gap is not reported: an axis is not measurable or has no usable probes")

    per_slot: dict[str, dict[str, Any]] = {}
    for s in SLOT_ORDER:
        m = subsets[f"slot:{s}"]
        measurable = d.slots[s]["measurable"]
        per_slot[s] = {"n": int(m.sum()), "flip_rate": _num(est[f"slot:{s}"]) if measurable else None,
                       "flip_rate_ci": cis[f"slot:{s}"] if measurable else None,
                       "axis": axis_of(s), "arm": d.slots[s]["arm"], "measurable": measurable}
    stats["per_slot"] = per_slot
    slot_r = [(per_slot[s]["flip_rate"], axis_of(s)) for s in CONSTRUCT_SLOTS
              if per_slot[s]["flip_rate"] is not None]
    stats["eta2_axis"] = _eta_squared([v for v, _ in slot_r], [a for _, a in slot_r]) if slot_r else None

    # ---- §5.2 length checks for this judge
    texts_len = {**{b: float(L) for b, L in zip(base_ids, d.base_len, strict=True)},
                 **{p: float(L) for p, L in zip(d.probe_ids, d.edit_len, strict=True)}}
    pairs = [(texts_len[k], v) for k, v in grade.items() if k in texts_len]
    rho = None
    if len(pairs) >= 3:
        from scipy.stats import spearmanr

        x, y = np.array(pairs).T
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            rho = _num(spearmanr(x, y).statistic)
    stats["length"] = {
        "spearman_grade_length": rho, "n_graded": len(pairs), "length_unit": "characters",
        "gap_lengthened": _num(est["scope_longer"] - est["strength_longer"]) if gap_ok else None,
        "n_lengthened": int((subsets["scope_longer"] | subsets["strength_longer"]).sum()),
        "gap_shortened": _num(est["scope_shorter"] - est["strength_shorter"]) if gap_ok else None,
        "n_shortened": int((subsets["scope_shorter"] | subsets["strength_shorter"]).sum()),
    }

    # ---- instrument quality: regrade agreement (App. D)
    known = _member(rows["request_id"], grade.keys())
    re = rows[(rows["epoch"].to_numpy() >= 1) & rows["_usable"].to_numpy() & known]
    if len(re):
        first = re["request_id"].map(grade).to_numpy(dtype=float)
        again = re["score"].to_numpy(dtype=float)
        # App. D, Figure 10: regrade agreement is exact reproduction of the grade; the agreement of
        # the binary verdict at τ is a weaker property, reported under its own name.
        stats["regrade_agreement"] = float(np.mean(np.isclose(first, again)))
        stats["regrade_exact_agreement"] = stats["regrade_agreement"]
        stats["regrade_binary_agreement"] = float(np.mean((first >= tau) == (again >= tau)))
        stats["n_regraded"] = int(len(re))
    return JudgeProfile(judge_id, stats)


def _gap_permutation_p(f: np.ndarray, sel: np.ndarray, d: _Design, observed: float, n_perm: int,
                       seed: int, *, within_base: bool = False) -> float | None:
    """Axis-label permutation null of the scope − strength gap (§5.2): the axis labels of the
    construct-arm probes are shuffled across the arm with grades (hence flips at τ) held fixed, and
    the gap recomputed by Eq. (6) under each shuffle. ``within_base`` restricts the shuffle to
    each base item's own probes; with one construct edit per base item (the paper's design) that
    null cannot move (``choose_gap_null`` picks between the two by the design)."""
    idx = np.flatnonzero(sel)
    if len(idx) < 2:
        return None
    is_scope = (d.axis[idx] == "scope")
    groups = d.base_index[idx] if within_base else np.zeros(len(idx), dtype=int)
    perm = permute_within_groups(is_scope, groups, n_perm, seed)  # (n_perm, n_c) bool
    uniq, g = np.unique(d.base_index[idx], return_inverse=True)
    member = np.zeros((len(idx), len(uniq)))
    member[np.arange(len(idx)), g] = 1.0
    fl = f[idx].astype(float)
    P = perm.astype(float)
    Q = 1.0 - P
    with np.errstate(invalid="ignore", divide="ignore"):
        sc = (P * fl) @ member / (P @ member)
        st = (Q * fl) @ member / (Q @ member)
    null = np.nanmean(sc, axis=1) - np.nanmean(st, axis=1)
    return permutation_p(observed, null, "two-sided")


# ----------------------------------------------------------------------------- entry point


def _length_table(d: _Design) -> dict[str, Any]:
    """Median |Δlength| (fraction of the original's length) per slot and axis over the probes that
    enter the arms (§5.2, Table 6), with the signed median and the share lengthened."""
    def summary(m: np.ndarray) -> dict[str, Any]:
        x = d.d_len[m & ~np.isnan(d.d_len)]
        if not len(x):
            return {"n": 0, "median_abs_dlen": None, "median_dlen": None, "share_longer": None}
        return {"n": int(len(x)), "median_abs_dlen": float(np.median(np.abs(x))),
                "median_dlen": float(np.median(x)), "share_longer": float(np.mean(x > 0))}

    return {"unit": "characters, as a fraction of the original's length",
            "per_slot": {s: summary(d.in_arm & (d.slot == s)) for s in SLOT_ORDER},
            "per_axis": {a: summary(d.in_arm & (d.axis == a)) for a in AXES}}


GAP_NULLS = ("auto", "construct_arm", "within_base")
#: ``auto`` permutes within base items when at least this share of the construct arm's base items
#: carry edits on both axes (judgeaudit's own rule; the paper's design, one construct edit per base
#: item, has none and the bundled set, every slot on every base, has all).
WITHIN_BASE_SHARE = 0.5


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
TAU_IN_BOOTSTRAP = ("reselect", "fixed")


def validity_profile(probes: pd.DataFrame, verdicts: pd.DataFrame, *, s_floor: float = 0.90,
                     bar: float = 0.75, n_boot: int = 2000, n_perm: int = 2000, level: float = 0.95,
                     seed: int = 0, gap_null: str = "auto",
                     tau_in_bootstrap: str = "reselect") -> ValidityResult:
    """The (S, R) validity profile of every judge in a verdict table (construct-validity.txt §2,
    §4.2, §5.1–5.2, App. A–D).

    Args:
        probes: the probe table (``records.PROBE_COLUMNS``; ``labels`` and ``intended_direction``
            optional).
        verdicts: the verdict table (``judge_id, request_id, score, parse_ok, error, epoch``).
        s_floor: the invariance floor for the matched operating point, set before the run.
        bar: the raw pairwise agreement a slot or axis must reach to be measurable (App. C).
        n_boot: bootstrap resamples of base items (0: no intervals).
        n_perm: axis-label permutations for the gap's null (0: no p-value).
        level: interval coverage.
        seed: seed of the counts matrix and of the permutations.
        gap_null: ``"auto"`` (default: chosen by the design, ``choose_gap_null``),
            ``"construct_arm"`` (§5.2: axis labels permuted across the construct arm) or
            ``"within_base"`` (only within each base item: degenerate with one construct edit per
            base item). The result records the null used and why (``gap_null_reason``).
        tau_in_bootstrap: ``"reselect"`` (the operating point is chosen again in every resample, so
            the intervals are those of the whole procedure) or ``"fixed"`` (τ held at the point
            estimate's value: ignores the selection, kept for comparison).

    Returns:
        A ``ValidityResult``; judges in order of first appearance in ``verdicts``.
    """
    if probes.empty:
        raise ValueError("the probe table is empty")
    for c in ("judge_id", "request_id", "score"):
        if c not in verdicts.columns:
            raise ValueError(f"verdict table lacks column {c!r}")
    if gap_null not in GAP_NULLS:
        raise ValueError(f"gap_null must be one of {GAP_NULLS}, not {gap_null!r}")
    if tau_in_bootstrap not in TAU_IN_BOOTSTRAP:
        raise ValueError(f"tau_in_bootstrap must be one of {TAU_IN_BOOTSTRAP}, not {tau_in_bootstrap!r}")
    d = _design(probes, bar)
    if gap_null == "auto":
        gap_null, gap_null_reason = choose_gap_null(d)
    else:
        gap_null_reason = "requested"
    n_b = len(d.bases)
    counts = bootstrap_counts(n_b, n_boot, seed).astype(float) if n_boot > 0 else np.zeros((0, n_b))
    judges = []
    for jid in pd.unique(verdicts["judge_id"]):
        rows = verdicts[verdicts["judge_id"] == jid]
        judges.append(_judge_profile(str(jid), rows, d, counts=counts, s_floor=s_floor, level=level,
                                     n_perm=n_perm, seed=seed, gap_null=gap_null,
                                     tau_in_bootstrap=tau_in_bootstrap))
    length = _length_table(d)
    slot_r = {s: r for s in CONSTRUCT_SLOTS if (r := _mean_flip_rate(judges, s)) is not None}
    length["eta2_axis_mean_over_judges"] = _eta_squared(list(slot_r.values()), [axis_of(s) for s in slot_r])
    return ValidityResult(s_floor=s_floor, bar=bar, level=level, n_boot=n_boot, n_perm=n_perm, seed=seed,
                          n_base=n_b, n_probes=len(d.probe_ids), direction_source=d.direction_source,
                          judges=tuple(judges), slots=d.slots, axes=d.axes, length=length,
                          notes=tuple(d.notes), gap_null=gap_null, tau_in_bootstrap=tau_in_bootstrap,
                          gap_null_reason=gap_null_reason)


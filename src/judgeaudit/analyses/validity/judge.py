"""One judge's (S, R) profile, assembled in named steps (construct-validity.txt §2, §4.2, §5.1–5.2,
App. A–D):

1. ``_read_grades``: this probe set's verdict rows, with the unusable ones counted;
2. ``_lay_on_design``: each probe's original and edited grade, and the probes each arm can use;
3. ``_thresholds``: the flip matrix over every attained threshold and the frontier it traces;
4. ``_operating_point``: the matched-invariance threshold τ and whether the judge is interpretable;
5. ``_subset_columns`` and ``_resample``: every subset's rate at τ and its base-item bootstrap, with τ
   chosen again in every resample;
6. the blocks read from them: S and R, ``R_excess`` (``analyses.excess``), the directions
   (``directions``), the axes and their gap (``gap``), the slots, the length checks (``length``) and
   the regrade agreement (``_regrade``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from judgeaudit.analyses.validity.design import SLOT_ORDER, _Design
from judgeaudit.analyses.validity.directions import directional_block, moves_at, wrong_way_note
from judgeaudit.analyses.excess import crossfit_excess
from judgeaudit.analyses.validity.frontier import (
    frontier_hull,
    matched_operating_point,
    matched_operating_points,
)
from judgeaudit.analyses.validity.gap import axis_gap
from judgeaudit.analyses.validity.length import length_checks
from judgeaudit.analyses.validity.rates import (
    _EPS,
    _boot_estimates,
    _ci,
    _estimates,
    _eta_squared,
    _num,
    _per_base,
    flips_at,
)
from judgeaudit.analyses.validity.result import JudgeProfile
from judgeaudit.analyses.validity.verdicts import Requests, Table
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, axis_of
from judgeaudit.stats.resample import percentile_ci

USABLE_POINT_SHARE = 0.01
"""A grade value is a usable operating point if it carries at least this share of a judge's
usable grades (App. D, Figure 10)."""


# ----------------------------------------------------------------------------- 1–2: grades on the design


@dataclass(frozen=True)
class _Grades:
    """A judge's verdict rows for one probe set, read onto its design: one row per (request, epoch)."""

    request: np.ndarray         # the request's number (``verdicts.Requests``)
    epoch: np.ndarray
    score: np.ndarray
    usable: np.ndarray
    e0_request: np.ndarray      # the usable epoch-0 rows, in table order: the request ...
    e0_score: np.ndarray        # ... and its grade
    grade: np.ndarray           # the usable epoch-0 grade of every request (NaN where none)
    n_grades: int               # epoch-0 rows, usable or not
    n_errors: int
    n_parse: int
    n_nan: int
    n_missing: int


@dataclass(frozen=True)
class _Arms:
    """Each probe's original (``bs``) and edited (``es``) grade and the probes each arm can use."""

    bs: np.ndarray
    es: np.ndarray
    usable: np.ndarray          # both grades usable
    arm: np.ndarray             # in an arm and usable
    ctrl: np.ndarray
    cons: np.ndarray
    n_unusable: int             # in an arm, not usable


def _is_reference(t: Table, rows: np.ndarray) -> bool:
    """A reference instrument (reference:constant, :length, ...) is known by the backend its verdict
    rows record, never by its id: it calibrates the others and stays out of cross-judge means."""
    return bool(len(rows) and t.reference is not None and t.reference[rows].all())


def _first_of_each(request: np.ndarray, epoch: np.ndarray) -> np.ndarray:
    """Whether each row is the first of its (request, epoch)."""
    order = np.lexsort((epoch, request))            # stable: equal keys keep their table order
    r, e = request[order], epoch[order]
    first = np.ones(len(order), dtype=bool)
    first[order[1:]] = (r[1:] != r[:-1]) | (e[1:] != e[:-1])
    return first


def _read_grades(t: Table, rows: np.ndarray, req: Requests, notes: list[str]) -> _Grades:
    """This probe set's rows of one judge (``rows``: positions in the verdict table): errors, parse
    failures and NaN scores are unusable and counted; a duplicate (request, epoch) keeps its first row
    (with a note)."""
    rows = rows[t.request[rows] >= 0]               # this probe set's requests only
    err, pok = t.error[rows], t.parsed[rows]
    scored = t.scored[rows]
    n_errors = int(err.sum())
    n_parse = int((~err & ~pok).sum())
    n_nan = int((~err & pok & ~scored).sum())
    first = _first_of_each(t.request[rows], t.epoch[rows])
    if not first.all():
        notes.append(f"{int((~first).sum())} duplicate (request, epoch) rows; the first of each was used")
        rows, err, pok, scored = rows[first], err[first], pok[first], scored[first]
    request, epoch, score = t.request[rows], t.epoch[rows], t.score[rows]
    usable = ~err & pok & scored
    e0 = epoch == 0
    ok = e0 & usable
    grade = np.full(len(req.index), np.nan)
    grade[request[ok]] = score[ok]
    return _Grades(request=request, epoch=epoch, score=score, usable=usable, e0_request=request[ok],
                   e0_score=score[ok], grade=grade, n_grades=int(e0.sum()), n_errors=n_errors, n_parse=n_parse,
                   n_nan=n_nan, n_missing=len(req.index) - int(e0.sum()))


def _lay_on_design(g: _Grades, req: Requests, d: _Design, notes: list[str]) -> _Arms:
    """Each probe's original and edited grade; a probe enters S or R only with both usable."""
    bs = g.grade[req.base]
    es = g.grade[req.edit]
    usable = ~np.isnan(bs) & ~np.isnan(es)
    arm = d.in_arm & usable
    n_unusable = int((d.in_arm & ~usable).sum())
    if n_unusable:
        notes.append(f"{n_unusable} probes in the arms lack a usable original or edited grade "
                     "and are left out of S and R")
    return _Arms(bs=bs, es=es, usable=usable, arm=arm, ctrl=arm & d.is_control, cons=arm & ~d.is_control,
                 n_unusable=n_unusable)


def _empty_stats(g: _Grades, a: _Arms, values: np.ndarray, n_usable: int, usable_points: int,
                 reference: bool, notes: list[str]) -> dict[str, Any]:
    """Every entry of a judge's ``result.json`` block, filled with what is known before τ."""
    return {
        "S": None, "R": None, "R_scope": None, "R_strength": None, "gap": None, "gap_ci": None,
        "gap_perm_p": None, "S_ci": None, "R_ci": None, "tau": None, "interpretable": False,
        "per_slot": {}, "frontier": [], "usable_points": usable_points, "regrade_agreement": None,
        "parse_failures": g.n_parse,
        # extras
        "R_scope_ci": None, "R_strength_ci": None, "control_flip_rate": None, "control_flip_rate_ci": None,
        "hull": [], "single_point": False, "operating_point_degenerate": None,
        "distinct_grades": int(len(values)), "n_grades": g.n_grades, "n_usable_grades": n_usable,
        "errors": g.n_errors, "nan_scores": g.n_nan, "missing": g.n_missing, "unusable_probes": a.n_unusable,
        "n_control": int(a.ctrl.sum()), "n_construct": int(a.cons.sum()),
        "regrade_exact_agreement": None, "n_regraded": 0, "gap_unanimous": None,
        "length": {}, "eta2_axis": None, "notes": notes,
        "regrade_binary_agreement": None, "R_excess": None, "R_excess_ci": None,
        "R_plus": None, "R_plus_ci": None, "wrong_way_rate": None, "wrong_way_rate_ci": None,
        "directional": None, "tau_boot_same_share": None, "reference_instrument": reference,
    }


# ----------------------------------------------------------------------------- 3–4: frontier and τ


@dataclass(frozen=True)
class _Thresholds:
    """Every attained grade as a threshold (plus one above the top, flagging none), the flip matrix
    over them and the per-base control / construct flip means that trace the frontier."""

    taus: np.ndarray
    degenerate: np.ndarray      # the thresholds that flag every grade or none
    F: np.ndarray               # (n_probes, n_tau) flips, False where a probe is not usable
    mc: np.ndarray
    hc: np.ndarray
    mr: np.ndarray
    hr: np.ndarray
    S: np.ndarray
    R: np.ndarray


def _thresholds(values: np.ndarray, a: _Arms, d: _Design, member: sparse.csr_matrix) -> _Thresholds:
    """The flip matrix at every attained threshold and S, R there (Def. 4); ``member``: the base-item
    membership matrix (``rates._membership``)."""
    n_b = len(d.bases)
    taus = np.append(values, values[-1] + 1.0)
    degenerate = np.zeros(len(taus), dtype=bool)
    degenerate[0] = degenerate[-1] = True
    F = flips_at(a.bs, a.es, taus)  # (n_probes, n_tau), meaningful where usable
    F = np.where(a.usable[:, None], F, False)
    mc, hc = _per_base(F, np.repeat(a.ctrl[:, None], len(taus), 1), d.base_index, n_b, member)
    mr, hr = _per_base(F, np.repeat(a.cons[:, None], len(taus), 1), d.base_index, n_b, member)
    return _Thresholds(taus=taus, degenerate=degenerate, F=F, mc=mc, hc=hc, mr=mr, hr=hr,
                       S=1.0 - _estimates(mc, hc), R=_estimates(mr, hr))


def _operating_point(th: _Thresholds, values: np.ndarray, stats: dict[str, Any], notes: list[str],
                     s_floor: float) -> tuple[int, bool] | None:
    """The frontier and its hull into ``stats``, then the matched-invariance τ (§2.3, Corollary 1).
    None when S or R cannot be estimated (with the note saying which)."""
    frontier = [(_num(s), _num(r), float(t)) for s, r, t in zip(th.S, th.R, th.taus, strict=True)]
    stats["frontier"] = [list(p) for p in frontier]
    stats["hull"] = [list(p) for p in frontier_hull(frontier)]
    if len(values) == 1:
        stats["single_point"] = True
        notes.append(f"the judge returned a single distinct grade ({values[0]:g}): it is a constant "
                     "instrument and is reported as a single point")
        idx, interp = 0, False   # the degenerate corner (1, 0): no threshold moves its verdict
    else:
        idx, interp = matched_operating_point(th.S, th.R, th.taus, th.degenerate, s_floor)
    if np.isnan(th.S).all():
        notes.append("no usable control probes: S cannot be estimated, so R is not reported (Corollary 1)")
        return None
    if idx is None:
        notes.append("no usable construct probes: R cannot be estimated")
        return None
    stats["tau"] = float(th.taus[idx])
    stats["interpretable"] = interp
    stats["operating_point_degenerate"] = bool(th.degenerate[idx])
    if not interp:
        notes.append(f"no non-degenerate threshold reaches S ≥ {s_floor}: the judge is uninterpretable and "
                     "its R is not evidence of sensitivity (Corollary 1)")
    elif th.degenerate[idx] and not stats["single_point"]:
        notes.append("the operating point is a constant corner (every or no grade flagged): no threshold "
                     "that reaches the floor makes the judge move on a construct edit")
    return idx, interp


# ----------------------------------------------------------------------------- 5: subsets at τ, resampled


def _subsets(a: _Arms, d: _Design) -> dict[str, np.ndarray]:
    """Every subset of probes a rate is read on: the arms, the axes, the slots, the unanimously
    labelled probes of each axis, and each axis's lengthening and shortening edits."""
    subsets: dict[str, np.ndarray] = {"control": a.ctrl, "construct": a.cons,
                                      "scope": a.cons & (d.axis == "scope"),
                                      "strength": a.cons & (d.axis == "strength")}
    for s in SLOT_ORDER:
        subsets[f"slot:{s}"] = a.arm & (d.slot == s)
    subsets["scope_unan"] = subsets["scope"] & d.unanimous
    subsets["strength_unan"] = subsets["strength"] & d.unanimous
    subsets["scope_longer"] = subsets["scope"] & (d.d_len > 0)
    subsets["strength_longer"] = subsets["strength"] & (d.d_len > 0)
    subsets["scope_shorter"] = subsets["scope"] & (d.d_len < 0)
    subsets["strength_shorter"] = subsets["strength"] & (d.d_len < 0)
    return subsets


@dataclass(frozen=True)
class _Columns:
    """One column per (kind of move, subset): every statistic at a threshold in one matrix."""

    names: list[str]
    kinds: list[str]
    masks: np.ndarray
    member: np.ndarray

    def at(self, t: int, th: _Thresholds, a: _Arms, d: _Design) -> tuple[np.ndarray, np.ndarray]:
        """Per-base means and presence of every column at ``taus[t]``."""
        mv = moves_at(th.F, a.bs, a.es, a.usable, th.taus, t)
        return _per_base(np.column_stack([mv[k] for k in self.kinds]).astype(float), self.masks,
                         d.base_index, len(d.bases), self.member)


def _subset_columns(subsets: dict[str, np.ndarray], member: sparse.csr_matrix) -> _Columns:
    columns: list[tuple[str, str, np.ndarray]] = [(k, "flip", m) for k, m in subsets.items()]
    columns += [(f"{k}{sign}", kind, subsets[k]) for k in ("construct", "scope", "strength")
                for sign, kind in (("+", "toward"), ("-", "wrong"))]
    return _Columns(names=[c[0] for c in columns], kinds=[c[1] for c in columns],
                    masks=np.column_stack([c[2] for c in columns]),
                    member=member)


def _resample(cols: _Columns, th: _Thresholds, a: _Arms, d: _Design, idx: int, means: np.ndarray,
              has: np.ndarray, counts: np.ndarray, *, s_floor: float, reselect: bool
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(boot, tau_b)``: every column's Eq. (6) rate in every resample, and the threshold index each
    resample reads it at.

    Intervals are those of the whole procedure (τ chosen as argmax R s.t. S ≥ floor, then the
    statistics read at it): with ``reselect``, τ is re-selected inside every resample, so the
    selection's optimism is in the interval rather than hidden by it.
    """
    if not len(counts):
        tau_b = np.zeros(0, dtype=int)
    elif reselect:
        tau_b, _ = matched_operating_points(1.0 - _boot_estimates(counts, th.mc, th.hc),
                                            _boot_estimates(counts, th.mr, th.hr),
                                            th.taus, th.degenerate, s_floor)
    else:
        tau_b = np.full(len(counts), idx)
    boot = np.full((len(counts), len(cols.names)), np.nan)
    for u in np.unique(tau_b[tau_b >= 0]):
        sel = tau_b == u
        mu, hu = (means, has) if u == idx else cols.at(int(u), th, a, d)
        boot[sel] = _boot_estimates(counts[sel], mu, hu)
    return boot, tau_b


# ----------------------------------------------------------------------------- 6: the blocks


def _rates(est: dict[str, float], cis: dict[str, Any]) -> dict[str, Any]:
    """S (as 1 − the control flip rate) and R at τ, with their intervals."""
    cfr = est["control"]
    c_ci = cis["control"]
    return {"S": _num(1.0 - cfr), "control_flip_rate": _num(cfr), "R": _num(est["construct"]),
            "control_flip_rate_ci": c_ci, "S_ci": None if c_ci is None else [1.0 - c_ci[1], 1.0 - c_ci[0]],
            "R_ci": cis["construct"]}


def _per_slot(est: dict[str, float], cis: dict[str, Any], subsets: dict[str, np.ndarray],
              d: _Design) -> dict[str, dict[str, Any]]:
    """Each slot's flip rate at τ with its interval (None where the slot is not measurable)."""
    per_slot: dict[str, dict[str, Any]] = {}
    for s in SLOT_ORDER:
        m = subsets[f"slot:{s}"]
        measurable = d.slots[s]["measurable"]
        per_slot[s] = {"n": int(m.sum()), "flip_rate": _num(est[f"slot:{s}"]) if measurable else None,
                       "flip_rate_ci": cis[f"slot:{s}"] if measurable else None,
                       "axis": axis_of(s), "arm": d.slots[s]["arm"], "measurable": measurable}
    return per_slot


def _regrade(g: _Grades, tau: float) -> dict[str, Any]:
    """Instrument quality (App. D, Figure 10): regrade agreement is exact reproduction of the grade;
    the agreement of the binary verdict at τ is a weaker property, reported under its own name."""
    first = g.grade[g.request]                      # NaN where the request has no usable epoch-0 grade
    re = (g.epoch >= 1) & g.usable & ~np.isnan(first)
    if not re.any():
        return {}
    first, again = first[re], g.score[re]
    agreement = float(np.mean(np.isclose(first, again)))
    return {"regrade_agreement": agreement, "regrade_exact_agreement": agreement,
            "regrade_binary_agreement": float(np.mean((first >= tau) == (again >= tau))),
            "n_regraded": int(re.sum())}


# ----------------------------------------------------------------------------- the assembly


def _judge_profile(judge_id: str, t: Table, rows: np.ndarray, req: Requests, d: _Design, *, counts: np.ndarray,
                   member: sparse.csr_matrix, s_floor: float, level: float, n_perm: int, seed: int,
                   gap_null: str = "construct_arm", tau_in_bootstrap: str = "reselect",
                   perms: dict | None = None) -> JudgeProfile:
    """One judge's profile from its ``rows`` (positions in the verdict table ``t``); ``member``: the
    base-item membership matrix of ``d`` (``rates._membership``), shared by every judge."""
    notes: list[str] = []
    reference = _is_reference(t, rows)
    g = _read_grades(t, rows, req, notes)
    a = _lay_on_design(g, req, d, notes)

    scores = g.e0_score
    values, freq = np.unique(scores, return_counts=True)
    usable_points = int((freq >= USABLE_POINT_SHARE * len(scores) - _EPS).sum()) if len(scores) else 0
    if len(scores) and not np.allclose(values, np.round(values)):
        notes.append("grades are non-integer (expected scores); usable points count exact grade values")
    stats = _empty_stats(g, a, values, int(len(scores)), usable_points, reference, notes)
    if not len(scores):
        stats["single_point"] = True
        notes.append("the judge returned no usable grades: reported as a single point with no profile")
        return JudgeProfile(judge_id, stats)

    th = _thresholds(values, a, d, member)
    point = _operating_point(th, values, stats, notes, s_floor)
    if point is None:
        return JudgeProfile(judge_id, stats)
    idx, _ = point
    tau = float(th.taus[idx])

    subsets = _subsets(a, d)
    cols = _subset_columns(subsets, member)
    means, has = cols.at(idx, th, a, d)
    est = dict(zip(cols.names, _estimates(means, has), strict=True))
    boot, tau_b = _resample(cols, th, a, d, idx, means, has, counts, s_floor=s_floor,
                            reselect=tau_in_bootstrap == "reselect" and not stats["single_point"])
    stats["tau_boot_same_share"] = _num(np.mean(tau_b == idx)) if len(tau_b) else None
    col = {k: i for i, k in enumerate(cols.names)}
    if len(boot):
        lo_all, hi_all = percentile_ci(boot, level, axis=0)
    cis = {k: (_ci(lo_all[i], hi_all[i]) if len(boot) else None) for k, i in col.items()}

    stats.update(_rates(est, cis))
    # ---- R − (1 − S) without post-selection optimism (the operating point cross-fitted)
    if not stats["single_point"]:
        cf, cf_ci = crossfit_excess(th.mc, th.hc, th.mr, th.hr, lambda S_, R_: matched_operating_points(
            S_, R_, th.taus, th.degenerate, s_floor)[0], counts, seed, level=level)
        stats["R_excess"] = _num(cf)
        stats["R_excess_ci"] = None if cf_ci is None else _ci(*cf_ci)
    # ---- directional sensitivity: R = R⁺ + wrong-way rate, per base item and so under Eq. (6)
    stats["R_plus"] = _num(est["construct+"])
    stats["R_plus_ci"] = cis["construct+"]
    stats["wrong_way_rate"] = _num(est["construct-"])
    stats["wrong_way_rate_ci"] = cis["construct-"]
    measurable = {ax: d.axes[ax]["measurable"] for ax in ("scope", "strength")}
    directional = directional_block(moves_at(th.F, a.bs, a.es, a.usable, th.taus, idx), est, cis, subsets,
                                    measurable)
    stats["directional"] = directional
    if (note := wrong_way_note(directional, stats["wrong_way_rate_ci"], stats["R_plus_ci"])) is not None:
        notes.append(note)
    # ---- the axes and the scope − strength gap (§5.2)
    gap_stats, gap_ok = axis_gap(th.F[:, idx], a.cons, d, est, cis, boot, col, subsets, level=level,
                                 n_perm=n_perm, seed=seed, gap_null=gap_null, perms=perms)
    stats.update(gap_stats)
    if not gap_ok:
        notes.append("the scope − strength gap is not reported: an axis is not measurable or has no usable probes")

    stats["per_slot"] = per_slot = _per_slot(est, cis, subsets, d)
    slot_r = [(per_slot[s]["flip_rate"], axis_of(s)) for s in CONSTRUCT_SLOTS
              if per_slot[s]["flip_rate"] is not None]
    stats["eta2_axis"] = _eta_squared([v for v, _ in slot_r], [ax for _, ax in slot_r]) if slot_r else None
    stats["length"] = length_checks(req.length[g.e0_request], g.e0_score, est, subsets, gap_ok)
    stats.update(_regrade(g, tau))
    return JudgeProfile(judge_id, stats)

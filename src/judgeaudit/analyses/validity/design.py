"""The probe design of a validity run: which probes enter the control and construct arms, which slots
and axes are measurable, and where the directions come from (construct-validity.txt §4.2, App. C).

With human labels, a probe enters its arm when the annotators' majority label is its slot's designed
direction, its slot and axis reach the agreement bar, and the annotators did not say the facts differ;
without labels, when its intended direction is its slot's.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity.rates import _num
from judgeaudit.probes.taxonomy import AXES, SLOTS, axis_of
from judgeaudit.probes.taxonomy import intended_direction as slot_direction
from judgeaudit.stats.agreement import majority_label, raw_pairwise_agreement

SLOT_ORDER: tuple[str, ...] = tuple(s.name for s in SLOTS)


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


def str_values(col: pd.Series) -> np.ndarray:
    """``col.astype(str)`` as a NumPy object array (a missing value stays NaN); the cast is skipped when
    the column already has pandas' string dtype, where it changes nothing."""
    dtype = col.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.na_value is np.nan):
        col = col.astype(str)
    return col.to_numpy(dtype=object)


def _char_lengths(col: pd.Series) -> np.ndarray:
    """``col.astype(str).str.len()`` as floats: each text's length in characters, NaN where missing."""
    texts = str_values(col)
    if pd.isna(texts).any():
        return np.array([len(x) if isinstance(x, str) else np.nan for x in texts], dtype=float)
    return np.fromiter(map(len, texts), dtype=float, count=len(texts))


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of an object array of strings, by one hash pass and a
    sort of the distinct values (a missing value falls back to ``np.unique`` and its error)."""
    codes, uniques = pd.factorize(values)
    if (codes < 0).any():
        return np.unique(values, return_inverse=True)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return uniques[order], rank[codes]


def _design(probes: pd.DataFrame, bar: float) -> _Design:
    need = {"probe_id", "base_id", "slot", "original", "edited"}
    missing = need - set(probes.columns)
    if missing:
        raise ValueError(f"probe table lacks columns {sorted(missing)}")
    if not probes["probe_id"].is_unique:
        raise ValueError("probe table has duplicate probe_id values")
    if not set(pd.unique(probes["slot"])) <= set(SLOT_ORDER):
        unknown = sorted(set(probes["slot"]) - set(SLOT_ORDER))
        raise ValueError(f"probe table has unknown slots {unknown}")
    n = len(probes)
    bases, base_index = _sorted_codes(str_values(probes["base_id"]))
    slot = str_values(probes["slot"])
    slot_code, slot_names = pd.factorize(slot)
    of_slot = {s: slot_code == k for k, s in enumerate(slot_names)}
    of_slot.update({s: np.zeros(n, dtype=bool) for s in SLOT_ORDER if s not in of_slot})
    axis = np.array([axis_of(s) for s in slot_names])[slot_code]
    is_control = axis == "control"
    designed = np.array([slot_direction(s) for s in slot_names])[slot_code]
    if "labels" in probes and any(map(operator.is_not, probes["labels"].to_numpy(dtype=object), repeat(None))):
        labels = [_labels_of(v) for v in probes["labels"]]
        has_labels = np.array([lab is not None for lab in labels])
    else:
        labels, has_labels = [None] * n, np.zeros(n, dtype=bool)
    notes: list[str] = []

    base_len = _char_lengths(probes["original"])
    edit_len = _char_lengths(probes["edited"])
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
            idx = np.flatnonzero(of_slot[s])
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
            slots[s]["n_facts_differ"] = int((facts_bad & of_slot[s]).sum())
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
        given_str = np.fromiter(map(isinstance, given, repeat(str)), dtype=bool, count=n)
        in_arm = ~given_str | (given == designed)    # a probe without a given direction has its slot's
        unanimous = np.zeros(n, dtype=bool)
        off = int((~in_arm).sum())
        if off:
            notes.append(f"{off} probes carry an intended_direction other than their slot's and are excluded")
        for s in SLOT_ORDER:
            idx = of_slot[s]
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
        slots[s]["n_in_arm"] = int((in_arm & of_slot[s]).sum())
        slots[s].setdefault("n_facts_differ", None)
        slots[s]["arm"] = "control" if axis_of(s) == "control" else "construct"
    if "group" in probes and probes["group"].nunique() < len(bases):
        notes.append("the group column is coarser than base items; intervals resample base items, "
                     "the unit Appendix A.2 names")
    return _Design(probe_ids=str_values(probes["probe_id"]), base_index=base_index,
                   bases=bases, slot=slot, axis=axis, is_control=is_control, in_arm=in_arm,
                   unanimous=unanimous, d_len=d_len, base_len=base_len, edit_len=edit_len,
                   direction_source=source, slots=slots, axes=axes, notes=notes)


probe_design = _design
"""Public name of the probe design of a probe table (``_design``: arms, axes, base items), for readers
of a run's probes (``card.paired``)."""

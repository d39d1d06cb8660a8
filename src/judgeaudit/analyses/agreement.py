"""Human direction agreement per slot and per axis (construct-validity.txt §4.2, Table 3; Appendix C).

Per cell (slot, axis, all): raw pairwise agreement (the measurability bar, pre-set at 0.75, is on
this statistic, not on κ), Fleiss' κ beside it, the pairwise rate of every annotator pair, items on
which all annotators gave different answers, yield (items whose strict-majority label matches the
slot's intended direction), cannot-tell and facts-differ rates, and a flag on every cell where one
category holds ≥ 90% of the labels (where κ is degenerate and raw agreement is the honest
number). A slot or axis below the bar is marked not measurable: it is excluded from R, never
reported with a wider interval. The human–verifier agreement the Protocol 1 reporting rule asks
for is reported beside it when the probes carry the verifier's own directional answer.

Input: the probe table (``records.PROBE_COLUMNS``) with ``labels`` in a fixed annotator order
and, as written by ``probes.merge``, ``meta["facts_differ"]`` (one bool per annotator) and
``meta["verifier_report"]["second_claims_more"]`` (from ``probes.build``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.probes.taxonomy import AXES, SLOTS, axis_of, intended_direction
from judgeaudit.stats.agreement import (fleiss_kappa, majority_label, raw_pairwise_agreement,
                                        rater_pair_agreement)

DIRECTIONS: tuple[str, ...] = ("edited", "original", "neither", "cannot_tell")
DEFAULT_BAR = 0.75
DEFAULT_DOMINANCE = 0.90

_BASE_COLUMNS = ["level", "slot", "axis", "n", "agree", "fleiss_kappa"]
_TAIL_COLUMNS = ["pair_min", "pair_max", "all_differ", "no_majority", "usable", "yield", "cannot_tell_rate",
                 "facts_differ_rate", "verifier_agree", "dominant", "dominant_share", "dominance_flag",
                 "measurable", "note"]


def _labels(v: Any) -> list[str] | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    lab = [str(x) for x in v]
    return lab if len(lab) >= 2 else None


def _facts_differ(meta: Any) -> list[bool] | None:
    if not isinstance(meta, dict):
        return None
    fd = meta.get("facts_differ")
    vals = [bool(x) for x in fd if x is not None] if isinstance(fd, list | tuple) else []
    return vals or None


def _verifier_noticed(meta: Any) -> bool | None:
    if not isinstance(meta, dict):
        return None
    rep = meta.get("verifier_report")
    if isinstance(rep, dict) and isinstance(rep.get("second_claims_more"), bool):
        return rep["second_claims_more"]
    return None


def _cell(level: str, slot: str, axis: str, rows: pd.DataFrame, n_raters: int, bar: float,
          dominance: float) -> dict[str, Any]:
    labels: list[list[str]] = list(rows["_labels"])
    n = len(labels)
    out: dict[str, Any] = {"level": level, "slot": slot, "axis": axis, "n": n}
    pair_names = [f"agree_{i + 1}_{j + 1}" for i, j in combinations(range(n_raters), 2)]
    if n == 0:
        out.update({c: float("nan") for c in ["agree", "fleiss_kappa", *pair_names]})
        out.update(pair_min=float("nan"), pair_max=float("nan"), all_differ=0, no_majority=0, usable=0,
                   **{"yield": float("nan")}, cannot_tell_rate=float("nan"), facts_differ_rate=float("nan"),
                   verifier_agree=float("nan"), dominant=None, dominant_share=float("nan"),
                   dominance_flag=False, measurable=False, note="no labelled items")
        return out
    agree = raw_pairwise_agreement(labels)
    same_m = len({len(x) for x in labels}) == 1
    kappa = fleiss_kappa(labels, DIRECTIONS) if same_m else float("nan")
    pairs = rater_pair_agreement([x + [None] * (n_raters - len(x)) for x in labels])
    rates = [float(pairs[i, j]) for i, j in combinations(range(n_raters), 2)]
    majority = [majority_label(x) for x in labels]
    usable = sum(m is not None and m == d for m, d in zip(majority, rows["_intended"], strict=True))
    counts = Counter(lab for x in labels for lab in x)
    n_labels = sum(counts.values())
    dominant, dom_n = counts.most_common(1)[0]
    fd = [f for f in rows["_facts_differ"] if f is not None]
    fd_flat = [b for f in fd for b in f]
    va = [(noticed, m == "edited") for noticed, m in zip(rows["_verifier"], majority, strict=True)
          if noticed is not None and m is not None]
    measurable = bool(agree >= bar)
    dom_share = dom_n / n_labels
    notes = []
    if not measurable:
        notes.append("below bar; not measurable, excluded from R")
    if dom_share >= dominance:
        notes.append(f"one category holds {dom_share:.0%} of labels (κ degenerate)")
    out.update({"agree": agree, "fleiss_kappa": kappa, **dict(zip(pair_names, rates, strict=True)),
                "pair_min": float(np.nanmin(rates)) if rates else float("nan"),
                "pair_max": float(np.nanmax(rates)) if rates else float("nan"),
                "all_differ": int(sum(len(x) >= 3 and len(set(x)) == len(x) for x in labels)),
                "no_majority": int(sum(m is None for m in majority)),
                "usable": int(usable), "yield": usable / n,
                "cannot_tell_rate": counts.get("cannot_tell", 0) / n_labels,
                "facts_differ_rate": (sum(fd_flat) / len(fd_flat)) if fd_flat else float("nan"),
                "verifier_agree": (sum(a == b for a, b in va) / len(va)) if va else float("nan"),
                "dominant": dominant, "dominant_share": dom_share, "dominance_flag": bool(dom_share >= dominance),
                "measurable": measurable, "note": "; ".join(notes)})
    return out


@dataclass(frozen=True)
class AgreementResult:
    """Table 3 in full: one row per slot, per axis and overall.

    Attributes:
        per_slot: rows for every taxonomy slot present, in taxonomy order.
        per_axis: rows for scope, strength and control.
        overall: the pooled row.
        bar: the raw-pairwise-agreement bar (pre-set 0.75).
        dominance: the share at which a single category is flagged (0.90).
        n_unlabelled: probes carrying fewer than two labels (left out of every cell).
    """

    per_slot: pd.DataFrame
    per_axis: pd.DataFrame
    overall: dict[str, Any]
    bar: float
    dominance: float
    n_unlabelled: int
    n_raters: int
    pair_columns: list[str] = field(default_factory=list)

    def not_measurable(self) -> dict[str, list[str]]:
        """Slots and axes whose raw pairwise agreement is below the bar."""
        return {"slots": self.per_slot.loc[~self.per_slot["measurable"], "slot"].tolist(),
                "axes": self.per_axis.loc[~self.per_axis["measurable"], "axis"].tolist()}

    def excluded_slots(self) -> list[str]:
        """Slots excluded from R: below the bar themselves, or on an axis below the bar."""
        bad_axes = set(self.not_measurable()["axes"])
        ps = self.per_slot
        return ps.loc[~ps["measurable"] | ps["axis"].isin(bad_axes), "slot"].tolist()

    def table3(self) -> pd.DataFrame:
        """The paper's Table 3 shape: slot, axis, n, agree, usable, note."""
        return self.per_slot[["slot", "axis", "n", "agree", "usable", "note"]].copy()

    def to_frame(self) -> pd.DataFrame:
        return pd.concat([self.per_slot, self.per_axis, pd.DataFrame([self.overall])], ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        def rec(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                    for r in df.to_dict(orient="records")]

        return {"bar": self.bar, "dominance": self.dominance, "n_raters": self.n_raters,
                "n_unlabelled": self.n_unlabelled, "not_measurable": self.not_measurable(),
                "excluded_slots": self.excluded_slots(), "per_slot": rec(self.per_slot),
                "per_axis": rec(self.per_axis), "overall": rec(pd.DataFrame([self.overall]))[0]}


def direction_agreement(probes: pd.DataFrame, *, bar: float = DEFAULT_BAR,
                        dominance: float = DEFAULT_DOMINANCE) -> AgreementResult:
    """Agreement of the human direction labels per slot, per axis and overall (§4.2, Table 3; App. C).

    Args:
        probes: the probe table; ``labels`` holds each probe's labels in a fixed annotator order.
        bar: raw pairwise agreement at or above which a slot or axis is measurable.
        dominance: the single-category share at which a cell is flagged.

    Returns:
        An ``AgreementResult``; a pure function of the table.
    """
    labels = probes["labels"] if "labels" in probes else [None] * len(probes)
    meta = probes["meta"] if "meta" in probes else [None] * len(probes)
    df = pd.DataFrame({
        "slot": probes["slot"].astype(str),
        "_labels": [_labels(v) for v in labels],
        "_facts_differ": [_facts_differ(m) for m in meta],
        "_verifier": [_verifier_noticed(m) for m in meta],
    })
    df["axis"] = df["slot"].map(axis_of)
    df["_intended"] = df["slot"].map(intended_direction)
    labelled = df[df["_labels"].notna()]
    n_raters = max((len(x) for x in labelled["_labels"]), default=0)
    pair_cols = [f"agree_{i + 1}_{j + 1}" for i, j in combinations(range(n_raters), 2)]
    cols = [*_BASE_COLUMNS, *pair_cols, *_TAIL_COLUMNS]
    present = set(df["slot"])
    slot_rows = [_cell("slot", s.name, s.axis, labelled[labelled["slot"] == s.name], n_raters, bar, dominance)
                 for s in SLOTS if s.name in present]
    axis_rows = [_cell("axis", "", ax, labelled[labelled["axis"] == ax], n_raters, bar, dominance)
                 for ax in AXES if ax in set(df["axis"])]
    overall = _cell("all", "", "", labelled, n_raters, bar, dominance)
    return AgreementResult(per_slot=pd.DataFrame(slot_rows, columns=cols), per_axis=pd.DataFrame(axis_rows, columns=cols),
                           overall=overall, bar=bar, dominance=dominance, n_unlabelled=int(len(df) - len(labelled)),
                           n_raters=n_raters, pair_columns=pair_cols)

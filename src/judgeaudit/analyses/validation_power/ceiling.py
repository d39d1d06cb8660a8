"""The human ceiling ``a_hum`` of Definition 6 (construct-validity.txt; App. E: it "carries its own
interval"): the statistic ``a_imp`` is, κ of a prediction against the label, with one annotator as
the prediction and the strict majority of the other annotators as the label."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgeaudit.analyses.validation_power.scoring import _group_confusions, _kappa_of
from judgeaudit.stats.agreement import category_counts, majority_label
from judgeaudit.stats.resample import bootstrap_counts, percentile_ci


@dataclass(frozen=True)
class HumanCeiling:
    """``a_hum`` (Def. 6) and how it was obtained: κ of one annotator (the "prediction") against
    the strict majority of the set's other annotators on that item (the "label"), pooled over
    every held-out annotator of every item — the statistic ``a_imp`` is (κ of a prediction against
    the label, pooled), on the same label space."""

    kappa: float
    ci: tuple[float, float]
    n_items: int
    n_rows: int
    n_no_majority: int
    n_outside_label_space: int
    fleiss_kappa: float

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "ci": list(self.ci), "n_items": self.n_items, "n_rows": self.n_rows,
                "n_no_majority_of_others": self.n_no_majority,
                "n_outside_label_space": self.n_outside_label_space,
                "annotator_fleiss_kappa": self.fleiss_kappa}


def held_out_annotator_rows(labels: Sequence[Sequence[str]], label_space: Sequence[str]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Every (item, held-out annotator) row of the human ceiling: ``(item index, label = strict
    majority of the other annotators, prediction = the held-out annotator's label, weight)`` plus
    the numbers of rows dropped because the others have no strict majority and because the label
    or the prediction lies outside ``label_space``.

    Rules (documented in the report): items with fewer than two labels have no one to hold out
    against; the others' majority is strict (more than half; ``stats.agreement.majority_label``),
    and where there is none the row is dropped — the rule by which a set's own label is a tie and
    the item leaves a_imp's scoring; a row is scored only when both its label and its prediction
    lie in ``label_space`` (a_imp's label space: a ``tie`` vote is an abstention no member can
    make). Each held-out annotator of an item with m labels weighs 1/m, so every item weighs the
    same before undefined rows are dropped (items weighted equally, not annotations:
    construct-validity.txt App. A.2): the statistic is that of drawing an item, then one of its
    annotators, and scoring the draw where its label is defined. A dropped row's weight is not
    handed to the item's other annotators: on an item labelled (x, x, y) only the dissenting y
    has a defined label, and renormalising would let that one row count as a whole item.
    """
    space = set(label_space)
    item, lab, pred, wt = [], [], [], []
    no_major = outside = 0
    for i, votes in enumerate(labels):
        if len(votes) < 2:
            continue
        scored = []
        for j, v in enumerate(votes):
            maj = majority_label(list(votes[:j]) + list(votes[j + 1:]))
            if maj is None:
                no_major += 1
            elif maj not in space or v not in space:
                outside += 1
            else:
                scored.append((maj, v))
        for maj, v in scored:
            item.append(i)
            lab.append(maj)
            pred.append(v)
            wt.append(1.0 / len(votes))
    return (np.array(item, dtype=int), np.array(lab, dtype=object).astype(str),
            np.array(pred, dtype=object).astype(str), np.array(wt, dtype=float), no_major, outside)


def fleiss_kappa_general(labels: Sequence[Sequence[str]]) -> float:
    """Fleiss' κ allowing a different number of annotators per item (items with < 2 labels are
    skipped): mean per-item agreement against pooled category shares."""
    return float(_fleiss_stats_boot(labels, np.zeros(len(labels), dtype=int), None)[0])


def _fleiss_stats_boot(labels: Sequence[Sequence[str]], groups: np.ndarray,
                       counts: np.ndarray | None) -> np.ndarray:
    cats = sorted({c for x in labels for c in x})
    keep = np.array([len(x) >= 2 for x in labels])
    mat = category_counts(labels, cats)
    m = mat.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_i = np.where(keep, (np.sum(mat * mat, axis=1) - m) / (m * (m - 1)), 0.0)
    gvals, ginv = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    G = len(gvals)
    sum_p = np.zeros(G)
    n_it = np.zeros(G)
    cat_tot = np.zeros((G, len(cats)))
    np.add.at(sum_p, ginv, p_i)
    np.add.at(n_it, ginv, keep.astype(float))
    np.add.at(cat_tot, ginv, mat * keep[:, None])
    w = np.ones((1, G)) if counts is None else counts
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = (w @ sum_p) / (w @ n_it)
        tot = w @ cat_tot
        p_j = tot / tot.sum(axis=1, keepdims=True)
        p_e = np.sum(p_j**2, axis=1)
        k = (p_bar - p_e) / (1.0 - p_e)
    return np.where(np.isclose(p_e, 1.0), 0.0, k)


def human_ceiling(labels: Sequence[Sequence[str]], groups: np.ndarray, *, label_space: Sequence[str],
                  n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> HumanCeiling:
    """``a_hum`` (Def. 6): each annotator held out against the strict majority of the others,
    κ of the pooled (item-weighted) rows on ``label_space`` (see ``held_out_annotator_rows``),
    with a percentile interval from a bootstrap over ``groups`` (App. E: a_hum "carries its own
    interval"). ``labels[i]`` are the annotators' labels of row ``i``; ``groups[i]`` its group."""
    item, lab, pred, wt, no_major, outside = held_out_annotator_rows(labels, label_space)
    gvals, ginv = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    fleiss = fleiss_kappa_general(labels) if any(len(x) >= 2 for x in labels) else float("nan")
    if len(item) == 0:
        return HumanCeiling(float("nan"), (float("nan"), float("nan")), 0, 0, no_major, outside, fleiss)
    cats = sorted(set(label_space))
    per_group = _group_confusions(lab, pred, ginv[item], len(gvals), cats, wt)
    point = float(_kappa_of(per_group)[0])
    lo, hi = percentile_ci(_kappa_of(per_group, bootstrap_counts(len(gvals), n_boot, seed)), level)
    return HumanCeiling(point, (float(lo), float(hi)), int(len(np.unique(item))), int(len(item)), no_major,
                        outside, fleiss)

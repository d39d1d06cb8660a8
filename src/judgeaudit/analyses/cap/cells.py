"""The cells of one benchmark (conditional-accuracy-profiles.txt §3.1–3.3, App. D, H, K, L): every
judge's unit-level numerators and denominators per (condition, metric), by the operator each condition
is measured with, and the exclusion counts of each cell.

Operators (Appendix D):

* content C1–C4 and ``overall``: position-averaged accuracy (PA) on the cell's subset;
* C7: strict both-correct [v_AB = v_BA = a*], with consistency, acc_AB, acc_BA;
* C5/C6 with paired variants: strict and consistency over the two variants, averaged over the two
  orderings; without variants: BC on the cell's subsets, consistency, and BC on the other items as
  ``reference``;
* C8: [the evaluator says the A/B rationale supports the verdict] on the evaluated correct-verdict
  items, with the cell's accuracy and their product ``unconditional``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITION_CODES, CONTENT, FailurePolicy
from judgeaudit.analyses.cap.coverage import _rows_for
from judgeaudit.analyses.cap.indicators import _join_judge, _paired
from judgeaudit.analyses.cap.intervals import _Acc
from judgeaudit.datasets._common import CoverageCell

Key = tuple[str, str, str]   # (judge, condition, metric)


@dataclass
class _SetCells:
    """What one set's cells collect: the accumulator, each cell's (status, operator), the product
    cells formed after the bootstrap, the judges with q0/q1, and the exclusion rows."""

    set_name: str
    rows: pd.DataFrame
    units: pd.Index
    acc: _Acc
    meta: dict[Key, tuple[str, str]] = field(default_factory=dict)
    products: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    q_judges: list[str] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)

    def add(self, key: Key, num: np.ndarray, den: np.ndarray, op: tuple[str, str]) -> None:
        self.acc.add(key, num, den)
        self.meta[key] = op


@dataclass(frozen=True)
class _JudgeRows:
    """One judge's row-aligned indicators on a set, with the two accuracies every operator reads."""

    jid: str
    ind: pd.DataFrame
    base: np.ndarray            # the non-augmented rows
    valid: np.ndarray
    pa: np.ndarray              # position-averaged accuracy
    strict: np.ndarray          # BC, the strict both-correct indicator of C5–C7

    @classmethod
    def of(cls, jid: str, rows: pd.DataFrame, ind: pd.DataFrame) -> _JudgeRows:
        pa = 0.5 * (ind["corr_ab"].to_numpy().astype(float) + ind["corr_ba"].to_numpy().astype(float))
        strict = (ind["corr_ab"] & ind["corr_ba"]).to_numpy().astype(float)
        return cls(jid=jid, ind=ind, base=(~rows["augmented"]).to_numpy(), valid=ind["valid"].to_numpy(),
                   pa=pa, strict=strict)


def _exclusion(sc: _SetCells, j: _JudgeRows, code: str, m: np.ndarray) -> None:
    """Appendix L: the cell's in-scope items, its parse and API failures and the items used."""
    scope = m & j.ind["scope"].to_numpy()
    fa, fb = j.ind["fail_ab"].to_numpy(), j.ind["fail_ba"].to_numpy()
    api = scope & ((fa == "api") | (fb == "api"))
    parse = scope & ~api & ((fa == "parse") | (fb == "parse"))
    used = scope & j.valid
    sc.exclusions.append({"set": sc.set_name, "judge_id": j.jid, "condition": code,
                          "n_scope": int(scope.sum()), "n_parse": int(parse.sum()),
                          "n_api": int(api.sum()), "n_used": int(used.sum())})


def _overall_cells(sc: _SetCells, j: _JudgeRows) -> None:
    """PA over all non-augmented items, both failure views of PA and BC, and q1 / q0 (App. K)."""
    jid, ind, m, valid = j.jid, j.ind, j.base, j.valid
    sc.add((jid, "overall", "value"), j.pa, m & valid, ("overall", "PA over all items, both orderings"))
    _exclusion(sc, j, "overall", m)
    # both failure views of overall (PA) and strict (BC), whatever ``failures`` says, so a reader can
    # reconcile with a benchmark's own statistics (which count failures as wrong)
    ok_both = (ind["ok_ab"] & ind["ok_ba"]).to_numpy()
    in_scope = ind["scope"].to_numpy()
    for metric, v, den in (("excluded", j.pa, m & ok_both), ("as_wrong", j.pa, m & in_scope),
                           ("strict_excluded", j.strict, m & ok_both), ("strict_as_wrong", j.strict, m & in_scope)):
        sc.add((jid, "overall", metric), v, den,
               ("overall", "failures " + ("excluded" if "excl" in metric else "counted wrong")))
    # q1 / q0 (Appendix K): accuracy when a* is shown first / second, on the same items and with
    # failures treated exactly as in the raw accuracy (``valid``); each item gives one verdict to
    # each, and both are recomputed in every bootstrap replicate (joint with the raw cells)
    lab = sc.rows["label"].to_numpy()
    corr_ab, corr_ba = ind["corr_ab"].to_numpy(), ind["corr_ba"].to_numpy()
    den_q = m & valid
    sc.acc.add((jid, "overall", "q1"), np.where(lab == "A", corr_ab, corr_ba).astype(float), den_q)
    sc.acc.add((jid, "overall", "q0"), np.where(lab == "A", corr_ba, corr_ab).astype(float), den_q)
    sc.meta[(jid, "overall", "q1")] = sc.meta[(jid, "overall", "q0")] = (
        "overall", "accuracy with a* shown first (q1) / second (q0), both orderings")
    sc.q_judges.append(jid)


def _content_cell(sc: _SetCells, j: _JudgeRows, code: str, cell: CoverageCell, op: tuple[str, str]) -> None:
    """C1–C4: PA on the cell's subset."""
    m = _rows_for(sc.rows, cell).to_numpy()
    sc.add((j.jid, code, "value"), j.pa, m & j.valid, op)
    _exclusion(sc, j, code, m)


def _position_cell(sc: _SetCells, j: _JudgeRows, code: str, cell: CoverageCell, op: tuple[str, str]) -> None:
    """C7: strict both-correct over the two orderings, with consistency and each ordering's accuracy."""
    m = _rows_for(sc.rows, cell).to_numpy()
    den = m & j.valid
    for metric, v in (("value", j.strict), ("strict", j.strict),
                      ("consistency", j.ind["same"].to_numpy().astype(float)),
                      ("acc_AB", j.ind["corr_ab"].to_numpy().astype(float)),
                      ("acc_BA", j.ind["corr_ba"].to_numpy().astype(float))):
        sc.add((j.jid, code, metric), v, den, op)
    _exclusion(sc, j, code, m)


def _variant_cell(sc: _SetCells, j: _JudgeRows, code: str, cell: CoverageCell, op: tuple[str, str]) -> None:
    """C5/C6: over paired presentation variants where the set declares them, else BC on the cell's
    subsets with the natural items' BC as ``reference`` (App. H)."""
    rows = sc.rows
    if cell.variants is not None and len(cell.variants) == 2:
        v1, v2 = cell.variants
        sub = rows if cell.subsets is None else rows[rows["subset"].isin(cell.subsets)]
        s_u, c_u, den_u, scope = _paired(sub, j.ind.loc[sub.index], v1, v2, sc.units)
        for metric, v in (("value", s_u), ("strict", s_u), ("consistency", c_u)):
            sc.acc.add_units((j.jid, code, metric), v, den_u)
            sc.meta[(j.jid, code, metric)] = op
        sc.exclusions.append({"set": sc.set_name, "judge_id": j.jid, "condition": code,
                              "n_scope": int(scope.sum()), "n_parse": int(scope.sum() - den_u.sum()),
                              "n_api": 0, "n_used": int(den_u.sum())})
        return
    m = _rows_for(rows, cell).to_numpy()
    den = m & j.valid
    for metric, v in (("value", j.strict), ("strict", j.strict),
                      ("consistency", j.ind["same"].to_numpy().astype(float))):
        sc.add((j.jid, code, metric), v, den, op)
    sc.add((j.jid, code, "reference"), j.strict, j.base & ~m & j.valid, op)
    _exclusion(sc, j, code, m)


@dataclass(frozen=True)
class Rationales:
    """The C8 evaluator's labels: ``supports`` per (pair, judge), and every (pair, judge) it was asked."""

    supports: pd.Series
    asked: pd.MultiIndex

    @classmethod
    def of(cls, labels: pd.DataFrame | None) -> Rationales | None:
        if labels is None or not len(labels):
            return None
        rl = labels.dropna(subset=["supports"]).drop_duplicates(["pair_id", "judge_id"])
        return cls(supports=rl.set_index(["pair_id", "judge_id"])["supports"].astype(bool),
                   asked=pd.MultiIndex.from_frame(labels[["pair_id", "judge_id"]].astype(str)))


def _rationale_cell(sc: _SetCells, j: _JudgeRows, code: str, cell: CoverageCell, op: tuple[str, str],
                    rl: Rationales | None, failures: FailurePolicy) -> None:
    """C8: CAP_8 on the evaluated correct-verdict items; Pr[v_AB = a*] on the whole cell, with
    failures handled as in every other cell; their product (per replicate) is the unconditional
    supported-correct rate of §4.1."""
    rows, jid, ind = sc.rows, j.jid, j.ind
    m = _rows_for(rows, cell).to_numpy()
    ok_ab = ind["ok_ab"].to_numpy()
    corr_ab = ind["corr_ab"].to_numpy()
    key = pd.MultiIndex.from_arrays([rows["pair_id"], np.repeat(jid, len(rows))]) if rl is not None else None
    if rl is not None:
        lab8 = rl.supports.reindex(key)
        has = lab8.notna().to_numpy()
        sup = lab8.fillna(False).astype(bool).to_numpy()
    else:
        has = np.zeros(len(rows), bool)
        sup = np.zeros(len(rows), bool)
    sc.acc.add((jid, code, "value"), sup.astype(float), m & ok_ab & corr_ab & has)
    ab_valid = ok_ab if failures == "exclude" else ind["scope"].to_numpy()
    sc.acc.add((jid, code, "accuracy"), corr_ab.astype(float), m & ab_valid)
    sc.meta[(jid, code, "value")] = op
    sc.meta[(jid, code, "accuracy")] = op
    sc.meta[(jid, code, "unconditional")] = op
    sc.products.append((jid, code, "unconditional", "accuracy", "value"))
    in_cell = m & ind["scope"].to_numpy() & corr_ab
    if rl is not None:
        unread = key.isin(rl.asked) & ~has
        sc.exclusions.append({"set": sc.set_name, "judge_id": jid, "condition": code,
                              "n_scope": int(in_cell.sum()), "n_parse": int((in_cell & unread).sum()),
                              "n_api": 0, "n_used": int((in_cell & has).sum())})


def judge_cells(sc: _SetCells, jid: str, table: pd.DataFrame, cov: dict[str, CoverageCell],
                failures: FailurePolicy, rl: Rationales | None) -> None:
    """Every cell of one judge on one set, in the condition order of the registry; a judge with no
    in-scope item on the set contributes none."""
    ind = _join_judge(sc.rows, table, failures)
    if not ind["scope"].any():
        return
    j = _JudgeRows.of(jid, sc.rows, ind)
    _overall_cells(sc, j)
    for code in CONDITION_CODES:
        cell = cov.get(code)
        if cell is None or cell.status == "unavailable":
            continue
        op = (cell.status, cell.operator)
        if code in CONTENT:
            _content_cell(sc, j, code, cell, op)
        elif code == "C7":
            _position_cell(sc, j, code, cell, op)
        elif code in ("C5", "C6"):
            _variant_cell(sc, j, code, cell, op)
        elif code == "C8":
            _rationale_cell(sc, j, code, cell, op, rl, failures)

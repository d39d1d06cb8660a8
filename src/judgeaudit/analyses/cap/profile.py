"""The entry point of a CAP run (conditional-accuracy-profiles.txt §3, App. D, H, J, K, L, M): every
judge's cells on every benchmark, then the cross-set tables read from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.bias import _bias_rows
from judgeaudit.analyses.cap.cells import Rationales, _SetCells, judge_cells
from judgeaudit.analyses.cap.conditions import FailurePolicy
from judgeaudit.analyses.cap.coverage import coverage_rows
from judgeaudit.analyses.cap.families import _l1_table
from judgeaudit.analyses.cap.indicators import _prep_pairs
from judgeaudit.analyses.cap.intervals import UNIT_COLUMNS, _Acc, _estimate, _products
from judgeaudit.analyses.cap.ranking import _spearman_table
from judgeaudit.analyses.cap.result import BENCHMARK_SCORE_COLUMNS, CapResult
from judgeaudit.analyses.cap.stress import _stress_table
from judgeaudit.datasets._common import (
    TWO_ORDER_COLUMNS,
    CoverageCell,
    table_family,
    table_model,
)
from judgeaudit.errors import InputError
from judgeaudit.stats.resample import bootstrap_counts, rng_for


def cap_profile(
    pairs: pd.DataFrame,
    judges: dict[str, pd.DataFrame],
    coverage: dict[str, dict[str, CoverageCell]],
    *,
    rationale_labels: pd.DataFrame | None = None,
    evaluator: dict[str, Any] | None = None,
    stress: list[tuple[str, str]] | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    level: float = 0.95,
    failures: FailurePolicy = "exclude",
    n_perm: int = 9999,
    benchmark_scores: pd.DataFrame | None = None,
) -> CapResult:
    """Conditional accuracy profile of every judge on every benchmark in ``pairs``.

    Estimates, per benchmark (``source_set``) and judge, CAP_c (Eq. 1) for c = C1..C8 plus the
    overall position-averaged accuracy, each with a percentile bootstrap interval over units
    (``base_id``; ``n_boot`` resamples shared by every cell of the set). Operators (Appendix D):

    * content C1–C4 and ``overall``: position-averaged accuracy (PA), mean over the item's two
      orderings of [v = a*], on the cell's subset;
    * C7: strict both-correct [v_AB = v_BA = a*], with consistency [v_AB = v_BA], acc_AB, acc_BA;
    * C5/C6 with paired variants (``cell.variants = (x1, x2)``): per ordering strict
      [v(x1) = v(x2) = a*] and consistency [v(x1) = v(x2)], averaged over the two orderings;
      without variants (LLMBar's adversarial-surface subsets): BC on the cell's subsets with the
      order-consistency counterpart, and the BC on the other (natural) items as ``reference``;
    * C8: on the evaluated items correct under the A/B ordering (all of them, or the evaluator's
      sample), [evaluator says the A/B rationale supports the verdict]; ``unconditional`` =
      Pr[v_AB = a* and supported] = Pr[v_AB = a*] · CAP_8 beside it (§4.1), the accuracy taken on
      the whole cell and the product formed in every bootstrap replicate (joint bootstrap).

    The bootstrap unit is the base item (``base_id``): a pair's two orderings and all its
    presentation variants are resampled together.

    Failures (Appendix L): with ``failures="exclude"`` an item whose needed verdicts include a
    parse or API failure leaves the cell's denominator and is counted in ``exclusions``; with
    ``"wrong"`` it stays and counts as incorrect and inconsistent (LLMBar's own convention).

    Also computes the Appendix K bias correction for C1–C4 and overall (q0, q1 and the raw cell
    recomputed in each replicate; undefined where q0 + q1 − 1 ≤ 0), Spearman ρ of judge
    rankings per condition shared by two sets (Eq. 2, permutation p), stress degradation
    δ = CAP(base) − CAP(stress) for each declared pair (Eq. 3), and the L1 profile distance
    between judges of each set (Appendix J).
    """
    if n_boot < 2:
        raise InputError("n_boot must be at least 2", field="bootstrap")
    if failures not in ("exclude", "wrong"):
        raise InputError("failures must be 'exclude' or 'wrong'", field="failures")
    df = _prep_pairs(pairs)
    rng = rng_for(seed)
    for jid, t in judges.items():
        miss = [c for c in TWO_ORDER_COLUMNS if c not in t.columns]
        if miss:
            raise InputError(f"judge {jid!r} table lacks column(s) {', '.join(miss)}", field=miss[0])
    families = {jid: table_family(t) for jid, t in judges.items()}
    models = {jid: table_model(t) for jid, t in judges.items()}
    rl = Rationales.of(rationale_labels)
    judge_parts = _judge_parts(df, judges)

    n_units: dict[str, int] = {}
    cell_rows: list[dict[str, Any]] = []
    unit_frames: list[pd.DataFrame] = []
    excl_rows: list[dict[str, Any]] = []
    bias_rows: list[dict[str, Any]] = []
    cov_rows: list[dict[str, Any]] = []
    boots: dict[tuple[str, str, str, str], np.ndarray] = {}

    for set_name, rows in df.groupby("source_set", sort=False):
        rows = rows.reset_index(drop=True)
        if set_name not in coverage:
            raise InputError(f"no coverage declared for set {set_name!r}", field="coverage")
        cov = coverage[set_name]
        cov_rows += coverage_rows(set_name, cov)
        units = pd.Index(rows["base_id"].unique())
        n_units[set_name] = len(units)
        counts = bootstrap_counts(len(units), n_boot, rng)
        sc = _SetCells(set_name, rows, units, _Acc(len(units), units.get_indexer(rows["base_id"])))
        for jid, table in judge_parts.get(set_name, {}).items():
            judge_cells(sc, jid, table, cov, failures, rl)
        excl_rows += sc.exclusions

        est = _estimate(sc.acc, counts, level)
        unit_frames += _unit_frames(sc, units)
        _products(est, sc.products, level)
        for key, (v, lo, hi, n, b) in est.items():
            jid, code, metric = key
            status, operator = sc.meta[key]
            cell_rows.append({"set": set_name, "judge_id": jid, "family": families.get(jid),
                              "condition": code, "metric": metric, "value": v, "ci_lo": lo,
                              "ci_hi": hi, "n": n, "coverage": status, "operator": operator})
            if b is not None:
                boots[(set_name, jid, code, metric)] = b
        bias_rows += _bias_rows(set_name, sc.q_judges, est, level)

    cells = pd.DataFrame(cell_rows, columns=["set", "judge_id", "family", "condition", "metric", "value",
                                             "ci_lo", "ci_hi", "n", "coverage", "operator"])
    result_sets = list(dict.fromkeys(cells["set"]))
    sp = _spearman_table(cells, result_sets, n_perm, rng)
    st = _stress_table(cells, boots, stress or [], level)
    l1 = _l1_table(cells, families, models)
    return CapResult(
        cells=cells,
        coverage=pd.DataFrame(cov_rows, columns=["set", "condition", "status", "operator"]),
        exclusions=pd.DataFrame(excl_rows, columns=["set", "judge_id", "condition", "n_scope", "n_parse",
                                                    "n_api", "n_used"]),
        bias_corrected=pd.DataFrame(bias_rows, columns=[
            "set", "judge_id", "condition", "raw", "q0", "q1", "se_q0", "se_q1", "denominator",
            "corrected", "ci_lo", "ci_hi", "saturated", "ci_above_1", "undefined", "boot_undefined"]),
        spearman=sp, stress=st, l1=l1, families=families, evaluator=evaluator, n_boot=n_boot,
        seed=seed if isinstance(seed, int) or seed is None else None, failures=failures, boot=boots,
        benchmark_scores=_benchmark_scores(benchmark_scores),
        units=pd.concat(unit_frames, ignore_index=True) if unit_frames else pd.DataFrame(columns=list(UNIT_COLUMNS)),
        level=level, n_units=n_units, models=models,
    )


def _benchmark_scores(table: pd.DataFrame | None) -> pd.DataFrame:
    if table is None:
        return pd.DataFrame(columns=list(BENCHMARK_SCORE_COLUMNS))
    miss = [c for c in BENCHMARK_SCORE_COLUMNS if c not in table.columns]
    if miss:
        raise InputError(f"benchmark score table lacks column(s) {', '.join(miss)}", field=miss[0])
    return table[list(BENCHMARK_SCORE_COLUMNS)].reset_index(drop=True)


def _judge_parts(df: pd.DataFrame, judges: dict[str, pd.DataFrame]) -> dict[str, dict[str, pd.DataFrame]]:
    """Which judges saw which set: a judge is joined only to the sets it has verdicts on."""
    set_of_pair = df.drop_duplicates("pair_id").set_index("pair_id")["source_set"]
    judge_parts: dict[str, dict[str, pd.DataFrame]] = {}
    for jid, t in judges.items():
        sets_j = t["pair_id"].map(set_of_pair)
        for s_name, part in t.groupby(sets_j, sort=False):
            judge_parts.setdefault(s_name, {})[jid] = part
    return judge_parts


def _unit_frames(sc: _SetCells, units: pd.Index) -> list[pd.DataFrame]:
    """Per resampling unit the numerator and denominator of every bootstrapped cell of the set: one frame, the
    cells in the order they were added and each cell's units in the set's order, units with no denominator left
    out."""
    if not sc.acc.keys:
        return []
    den = np.stack(sc.acc.dens)            # (cells, units)
    num = np.stack(sc.acc.nums)
    cell, unit = np.nonzero(den > 0)      # cell-major, units ascending within a cell
    keys = np.array(sc.acc.keys, dtype=object).reshape(len(sc.acc.keys), 3)
    return [pd.DataFrame({"set": np.repeat(np.array([sc.set_name], dtype=object), len(cell)),
                          "unit": units.astype(str).to_numpy(dtype=object)[unit],
                          "judge_id": keys[cell, 0], "condition": keys[cell, 1], "metric": keys[cell, 2],
                          "num": num[cell, unit], "den": den[cell, unit]})]

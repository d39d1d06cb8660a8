"""The result object of a CAP run (conditional-accuracy-profiles.txt §3, App. H, J, K, L, M) and its
``result.json`` shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITIONS, MAIN_STATUSES
from judgeaudit.analyses.cap.intervals import UNIT_COLUMNS
from judgeaudit.analyses.cap.schema import SCHEMA_VERSION

#: A benchmark's own headline score of a judge, reported beside CAP (e.g. JudgeBench's pair-level rule).
BENCHMARK_SCORE_COLUMNS = ("set", "judge_id", "rule", "value", "n")


@dataclass(frozen=True)
class CapResult:
    """CAP result of one run (every set, every judge, every condition).

    Attributes:
        cells: long table, one row per (set, judge, condition, metric) with value, ci_lo, ci_hi,
            n, coverage, operator. Metrics: ``value`` for every condition (strict for C5–C7),
            ``strict``/``consistency`` for C5–C7, ``acc_AB``/``acc_BA`` for C7, ``reference``
            (Natural-subset BC) for an unpaired C5, ``accuracy`` (Pr[v_AB = a*] on the cell) and
            ``unconditional`` (accuracy x CAP_8, §4.1) for C8, and condition ``overall``
            (position-averaged accuracy over all non-augmented items) with ``q0``/``q1``
            (Appendix K) and both failure views of PA and strict BC (``excluded``, ``as_wrong``,
            ``strict_excluded``, ``strict_as_wrong``).
        coverage: the coverage matrix (set, condition, status, operator).
        exclusions: Appendix L table (set, judge, condition, n_scope, n_parse, n_api, n_used).
        bias_corrected: Appendix K table (set, judge, condition, raw, q0, q1, se_q0, se_q1,
            denominator, corrected, ci, saturated, ci_above_1, undefined, boot_undefined).
        spearman: Eq. 2 table (condition, set_a, set_b, n_judges, rho, p, coverage_a, coverage_b).
        stress: Eq. 3 / Table 6 (base, stress, judge, condition, delta, ci_lo, ci_hi, coverage of
            both cells, in_mean); condition ``mean`` is the per-judge mean over C1–C7.
        l1: Appendix J table (set, judge_a, judge_b, family_a, family_b, same_family, l1,
            conditions).
        families: judge id -> family.
        evaluator: C8 evaluator record (id, family, allow_same_family, human agreement) or None.
        n_boot, seed, failures: estimator settings.
        benchmark_scores: the benchmarks' own headline scores (set, judge_id, rule, value, n), shown
            beside CAP's overall values.
        published_statistics: per shipped judge-output file, the benchmark's own published counts
            beside their recomputation with failures counted wrong and excluded
            (``datasets.llmbar.reconcile_statistics``); empty when the sets ship none.
    """

    cells: pd.DataFrame
    coverage: pd.DataFrame
    exclusions: pd.DataFrame
    bias_corrected: pd.DataFrame
    spearman: pd.DataFrame
    stress: pd.DataFrame
    l1: pd.DataFrame
    families: dict[str, str | None]
    evaluator: dict[str, Any] | None
    n_boot: int
    seed: int | None
    failures: str
    boot: dict[tuple[str, str, str, str], np.ndarray] = field(default_factory=dict, repr=False,
                                                              compare=False)
    benchmark_scores: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(BENCHMARK_SCORE_COLUMNS)))
    units: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(UNIT_COLUMNS)), repr=False,
                                compare=False)
    """Per resampling unit (base item) the numerator and denominator of every bootstrapped cell: a cell
    is Σ num / Σ den over its set's units (for a paired comparison of two runs)."""
    published_statistics: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)
    level: float = 0.95
    """The intervals' confidence level."""
    n_units: dict[str, int] = field(default_factory=dict)
    """Per set, the base items its intervals resample."""
    models: dict[str, str | None] = field(default_factory=dict)
    """judge id -> its model as its verdict table recorded it (None: none recorded)."""

    def to_frame(self) -> pd.DataFrame:
        return self.cells.copy()

    def value(self, set_name: str, judge: str, condition: str, metric: str = "value") -> float | None:
        m = self.cells[(self.cells["set"] == set_name) & (self.cells["judge_id"] == judge)
                       & (self.cells["condition"] == condition) & (self.cells["metric"] == metric)]
        if m.empty or pd.isna(m["value"].iloc[0]):
            return None
        return float(m["value"].iloc[0])

    def profile_table(self, set_name: str, include: tuple[str, ...] = MAIN_STATUSES) -> pd.DataFrame:
        """Table 3's shape: one row per judge, ``overall`` then C1–C8 values (None where the cell
        is unavailable or its status is not in ``include``)."""
        c = self.cells[(self.cells["set"] == set_name) & (self.cells["metric"] == "value")]
        rows = []
        for judge, g in c.groupby("judge_id", sort=False):
            row: dict[str, Any] = {"judge": judge}
            for _, r in g.iterrows():
                ok = r["condition"] == "overall" or r["coverage"] in include
                row[r["condition"]] = r["value"] if ok else None
                row[r["condition"] + "_ci"] = (r["ci_lo"], r["ci_hi"]) if ok else None
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """The result.json shape (``analyses.cap.schema.CapFile`` reads it): per set, per judge, per condition
        ``value``, ``ci``, ``n``, ``coverage`` (+ ``strict``/``consistency`` for C5–C7, ``acc_AB``/``acc_BA`` for
        C7), ``overall`` and the judge's ``identity``; per set its ``n_units``; plus exclusions and the cross-set
        ``spearman``, ``stress``, ``l1`` tables."""

        def num(x: Any) -> float | None:
            return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)

        sets: dict[str, Any] = {}
        for (s, j), g in self.cells.groupby(["set", "judge_id"], sort=False):
            judge: dict[str, Any] = {"family": self.families.get(j), "conditions": {},
                                     "identity": {"family": self.families.get(j), "model": self.models.get(j),
                                                  "template": None, "scale": None}}
            for cond, gc in g.groupby("condition", sort=False):
                by = {r["metric"]: r for _, r in gc.iterrows()}
                v = by["value"]
                entry: dict[str, Any] = {
                    "value": num(v["value"]), "ci": [num(v["ci_lo"]), num(v["ci_hi"])],
                    "n": int(v["n"]), "coverage": v["coverage"], "operator": v["operator"],
                }
                for m, r in by.items():
                    if m != "value":
                        entry[m] = {"value": num(r["value"]), "ci": [num(r["ci_lo"]), num(r["ci_hi"])],
                                    "n": int(r["n"])}
                if cond == "overall":
                    judge["overall"] = entry
                else:
                    judge["conditions"][cond] = entry
            sets.setdefault(s, {"coverage": {}, "judges": {}, "n_units": self.n_units.get(s)})["judges"][j] = judge
        for r in _records(self.benchmark_scores):
            if r["set"] in sets and r["judge_id"] in sets[r["set"]]["judges"]:
                sets[r["set"]]["judges"][r["judge_id"]]["benchmark_score"] = {
                    "value": r["value"], "rule": r["rule"], "n": r["n"]}
        for _, r in self.coverage.iterrows():
            if r["set"] in sets:
                sets[r["set"]]["coverage"][r["condition"]] = {"status": r["status"], "operator": r["operator"]}
        for s in sets:
            ex = self.exclusions[self.exclusions["set"] == s]
            sets[s]["exclusions"] = ex.drop(columns=["set"]).to_dict(orient="records")
            bc = self.bias_corrected[self.bias_corrected["set"] == s]
            sets[s]["bias_corrected"] = _records(bc.drop(columns=["set"]))
        return {
            "schema_version": SCHEMA_VERSION,
            "conditions": [c.__dict__ for c in CONDITIONS],
            "settings": {"n_boot": self.n_boot, "seed": self.seed, "failures": self.failures, "level": self.level},
            "evaluator": self.evaluator,
            "sets": sets,
            "spearman": _records(self.spearman),
            "stress": _records(self.stress),
            "l1": _records(self.l1),
            **({"published_statistics": _records(self.published_statistics)}
               if len(self.published_statistics) else {}),
        }


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in df.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and np.isnan(v) else
                        (v.item() if isinstance(v, np.generic) else v)) for k, v in r.items()})
    return out

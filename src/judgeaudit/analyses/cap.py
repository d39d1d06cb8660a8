"""Conditional accuracy profiles (CAP) of pairwise judges.

Specification: conditional-accuracy-profiles.txt §3.1 (Eq. 1, Table 1), §3.2 (Table 2 coverage),
§3.3 (estimators), Appendices D (operators), H (strict vs. consistency), J (within-family L1),
K (bias-corrected estimates), L (exclusions), M (Eq. 2 Spearman, Eq. 3 stress degradation).

Inputs are tables only:

* ``pairs``: the pairwise table of one or more benchmarks (``records.PAIRWISE_COLUMNS``; a
  ``base_id`` column names the resampling unit, default ``pair_id``; a ``variant`` column marks
  presentation variants, default ``"original"``; ``augmented`` marks generated variants).
* ``judges``: the per-item two-order tables (``datasets._common.TWO_ORDER_COLUMNS``), one per
  judge, ``choice_ba`` already in the original frame.
* ``coverage``: per benchmark (``source_set``), per condition, a ``CoverageCell``.
* optionally ``rationale_labels`` (pair_id, judge_id, supports) from the C8 evaluator.

Every cell is an accuracy (Eq. 1) over its subset with a nonparametric bootstrap over units
(1,000 resamples by default) computed as one matrix product: a ``(n_boot, n_units)``
multiplicity matrix times the unit-level numerators and denominators of every cell at once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgeaudit.datasets._common import TWO_ORDER_COLUMNS, CoverageCell, table_family, table_model
from judgeaudit.errors import InputError
from judgeaudit.families import model_key, same_family, shared, vendors
from judgeaudit.stats.resample import bootstrap_counts, percentile_ci, rng_for
from judgeaudit.stats.tests import spearman_permutation

Category = Literal["content", "robustness", "explanation"]


@dataclass(frozen=True)
class Condition:
    """One CAP condition (Table 1): its subset and item-level indicator."""

    code: str
    name: str
    category: Category
    subset: str
    measurement: str


#: The frozen condition registry (Table 1). Robustness (C5–C7) uses the strict "both correct"
#: criterion; the pure-consistency counterpart is always computed beside it (Appendix H).
CONDITIONS: tuple[Condition, ...] = (
    Condition("C1", "factual", "content", "factual-fabrication items", "Pr[v = a*]"),
    Condition("C2", "logical", "content", "logical-reversal items", "Pr[v = a*]"),
    Condition("C3", "scope-overclaim", "content", "overclaim items", "Pr[v = a*]"),
    Condition("C4", "scope-omission", "content", "omission items", "Pr[v = a*]"),
    Condition("C5", "style", "robustness", "plain/polished variants", "Pr[v(x1) = v(x2) = a*]"),
    Condition("C6", "length", "robustness", "plain/padded variants", "Pr[v(x1) = v(x2) = a*]"),
    Condition("C7", "position", "robustness", "A/B and B/A orderings", "Pr[v(x_AB) = v(x_BA) = a*]"),
    Condition("C8", "rationale", "explanation", "correct-verdict items", "Pr[e(rho) supports v]"),
)
CONDITION_CODES = tuple(c.code for c in CONDITIONS)
CONDITION_BY_CODE = {c.code: c for c in CONDITIONS}
CONTENT = ("C1", "C2", "C3", "C4")
ROBUSTNESS = ("C5", "C6", "C7")

assert CONDITION_CODES == ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"), "CAP registry drifted"
assert tuple(c.name for c in CONDITIONS) == (
    "factual", "logical", "scope-overclaim", "scope-omission", "style", "length", "position", "rationale"
), "CAP registry drifted"
assert {c.code for c in CONDITIONS if c.category == "robustness"} == set(ROBUSTNESS)

#: Statuses entering the main table; approx and augmented cells are reported beside, never averaged
#: with direct ones (§4, Appendix D).
MAIN_STATUSES = ("direct", "approx")

FailurePolicy = Literal["exclude", "wrong"]

#: A benchmark's own headline score of a judge, reported beside CAP (e.g. JudgeBench's pair-level rule).
BENCHMARK_SCORE_COLUMNS = ("set", "judge_id", "rule", "value", "n")


# --------------------------------------------------------------------------------------------
# per-row indicators


def _prep_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("pair_id", "label", "source_set") if c not in pairs.columns]
    if missing:
        raise InputError(f"pairs table lacks column(s) {', '.join(missing)}", field=missing[0])
    df = pairs.copy()
    if "base_id" not in df.columns:
        df["base_id"] = df["pair_id"]
    df["base_id"] = df["base_id"].fillna(df["pair_id"])
    if "variant" not in df.columns:
        df["variant"] = "original"
    df["variant"] = df["variant"].fillna("original")
    if "augmented" not in df.columns:
        df["augmented"] = False
    df["augmented"] = df["augmented"].fillna(False).astype(bool)
    if "subset" not in df.columns:
        df["subset"] = None
    return df


def _join_judge(rows: pd.DataFrame, table: pd.DataFrame, policy: FailurePolicy) -> pd.DataFrame:
    """Row-aligned verdict indicators of one judge on one set's rows."""
    t = table.drop_duplicates("pair_id").set_index("pair_id")
    j = rows[["pair_id", "label"]].join(t, on="pair_id")
    out = pd.DataFrame(index=rows.index)
    out["scope"] = j["judge_id"].notna().to_numpy() & rows["label"].isin(["A", "B"]).to_numpy()
    for o in ("ab", "ba"):
        choice = j[f"choice_{o}"]
        fail = j[f"failure_{o}"]
        ok = choice.notna() & fail.isna()
        scope = out["scope"].to_numpy()
        out[f"ok_{o}"] = ok.to_numpy() & scope
        # a missing choice without a recorded failure kind is a parse failure
        kind = np.where(fail.notna().to_numpy(), fail.astype(object).to_numpy(), "parse")
        out[f"fail_{o}"] = np.where(scope & ~ok.to_numpy(), kind, None)
        out[f"choice_{o}"] = choice.where(ok, None)
        out[f"corr_{o}"] = (choice == j["label"]).to_numpy() & ok.to_numpy()
    out["same"] = (out["choice_ab"] == out["choice_ba"]).to_numpy() & out["ok_ab"] & out["ok_ba"]
    if policy == "exclude":
        out["valid"] = out["ok_ab"] & out["ok_ba"]
    else:
        out["valid"] = out["scope"]
    return out


# --------------------------------------------------------------------------------------------
# result


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
        """The result.json shape: per set, per judge, per condition ``value``, ``ci``, ``n``,
        ``coverage`` (+ ``strict``/``consistency`` for C5–C7, ``acc_AB``/``acc_BA`` for C7),
        ``overall``; plus exclusions and the cross-set ``spearman``, ``stress``, ``l1`` tables."""

        def num(x: Any) -> float | None:
            return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)

        sets: dict[str, Any] = {}
        for (s, j), g in self.cells.groupby(["set", "judge_id"], sort=False):
            judge: dict[str, Any] = {"family": self.families.get(j), "conditions": {}}
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
            sets.setdefault(s, {"coverage": {}, "judges": {}})["judges"][j] = judge
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
            "conditions": [c.__dict__ for c in CONDITIONS],
            "settings": {"n_boot": self.n_boot, "seed": self.seed, "failures": self.failures},
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


# --------------------------------------------------------------------------------------------
# estimation


UNIT_COLUMNS = ("set", "unit", "judge_id", "condition", "metric", "num", "den")


@dataclass
class _Acc:
    """Collects unit-level numerators/denominators of every cell of one set."""

    n_units: int
    unit_index: np.ndarray  # row -> unit
    keys: list[tuple[str, str, str]] = field(default_factory=list)  # (judge, condition, metric)
    nums: list[np.ndarray] = field(default_factory=list)
    dens: list[np.ndarray] = field(default_factory=list)

    def add(self, key: tuple[str, str, str], num: np.ndarray, den: np.ndarray) -> None:
        self.keys.append(key)
        self.nums.append(np.bincount(self.unit_index, weights=num * den, minlength=self.n_units))
        self.dens.append(np.bincount(self.unit_index, weights=den.astype(float), minlength=self.n_units))

    def add_units(self, key: tuple[str, str, str], num_u: np.ndarray, den_u: np.ndarray) -> None:
        self.keys.append(key)
        self.nums.append(num_u * den_u)
        self.dens.append(den_u.astype(float))


def _estimate(acc: _Acc, counts: np.ndarray, level: float) -> dict[tuple[str, str, str], tuple]:
    if not acc.keys:
        return {}
    num = np.stack(acc.nums, axis=1)
    den = np.stack(acc.dens, axis=1)
    point_den = den.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = num.sum(axis=0) / point_den
        cf = counts.astype(float)
        boot = (cf @ num) / (cf @ den)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = percentile_ci(boot, level, axis=0)
    out = {}
    for k, key in enumerate(acc.keys):
        n = int(round(point_den[k]))
        if n == 0:
            out[key] = (np.nan, np.nan, np.nan, 0, None)
        else:
            out[key] = (point[k], lo[k], hi[k], n, boot[:, k])
    return out


def _products(est: dict[tuple[str, str, str], tuple], products: list[tuple[str, str, str, str, str]],
              level: float) -> None:
    """Adds product cells (judge, condition, metric) = factor_a * factor_b to ``est``, the point from
    the two point estimates and the interval from the product of their replicates, which share the
    resampled units (a joint bootstrap: both factors recomputed in every replicate)."""
    for jid, code, metric, fa, fb in products:
        a, b = est.get((jid, code, fa)), est.get((jid, code, fb))
        if a is None or b is None or a[4] is None or b[4] is None:
            est[(jid, code, metric)] = (np.nan, np.nan, np.nan, 0 if a is None else a[3], None)
            continue
        boot = a[4] * b[4]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = percentile_ci(boot, level)
        est[(jid, code, metric)] = (a[0] * b[0], float(lo), float(hi), a[3], boot)


def _paired(rows: pd.DataFrame, ind: pd.DataFrame, v1: str, v2: str,
            units: pd.Index) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Series]:
    """Unit-level strict/consistency indicators for variant pairs (x1, x2) of one base item:
    per ordering o, strict_o = [v_o(x1) = v_o(x2) = a*], cons_o = [v_o(x1) = v_o(x2)]; the unit
    value is the mean over the two orderings (both orderings of both variants required)."""
    sel1 = rows["variant"] == v1
    sel2 = rows["variant"] == v2
    a = ind[sel1].assign(base_id=rows.loc[sel1, "base_id"]).drop_duplicates("base_id").set_index("base_id")
    b = ind[sel2].assign(base_id=rows.loc[sel2, "base_id"]).drop_duplicates("base_id").set_index("base_id")
    common = a.index.intersection(b.index)
    a, b = a.loc[common], b.loc[common]
    valid = (a["valid"] & b["valid"]).to_numpy()
    strict = 0.5 * ((a["corr_ab"].to_numpy() & b["corr_ab"].to_numpy()).astype(float)
                    + (a["corr_ba"].to_numpy() & b["corr_ba"].to_numpy()).astype(float))
    cons = 0.5 * ((a["choice_ab"].to_numpy() == b["choice_ab"].to_numpy()) & a["ok_ab"].to_numpy()
                  & b["ok_ab"].to_numpy()).astype(float) \
        + 0.5 * ((a["choice_ba"].to_numpy() == b["choice_ba"].to_numpy()) & a["ok_ba"].to_numpy()
                 & b["ok_ba"].to_numpy()).astype(float)
    pos = units.get_indexer(common)
    n_u = len(units)
    den_u = np.zeros(n_u)
    s_u = np.zeros(n_u)
    c_u = np.zeros(n_u)
    den_u[pos] = valid
    s_u[pos] = strict
    c_u[pos] = cons
    scope = pd.Series((a["scope"] & b["scope"]).to_numpy(), index=common)
    return s_u, c_u, den_u, scope


def _rows_for(rows: pd.DataFrame, cell: CoverageCell) -> pd.Series:
    m = ~rows["augmented"]
    if cell.subsets is not None:
        m &= rows["subset"].isin(cell.subsets)
    if cell.variants is not None:
        m &= rows["variant"].isin(cell.variants)
    return m


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
    rl = None
    if rationale_labels is not None and len(rationale_labels):
        rl = rationale_labels.dropna(subset=["supports"]).drop_duplicates(["pair_id", "judge_id"])
        rl = rl.set_index(["pair_id", "judge_id"])["supports"].astype(bool)
        rl_asked = pd.MultiIndex.from_frame(rationale_labels[["pair_id", "judge_id"]].astype(str))

    # which judges saw which set (a judge is joined only to the sets it has verdicts on)
    set_of_pair = df.drop_duplicates("pair_id").set_index("pair_id")["source_set"]
    judge_parts: dict[str, dict[str, pd.DataFrame]] = {}
    for jid, t in judges.items():
        sets_j = t["pair_id"].map(set_of_pair)
        for s_name, part in t.groupby(sets_j, sort=False):
            judge_parts.setdefault(s_name, {})[jid] = part

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
        for code in CONDITION_CODES:
            c = cov.get(code)
            cov_rows.append({"set": set_name, "condition": code,
                             "status": c.status if c else "unavailable",
                             "operator": c.operator if c else ""})
        units = pd.Index(rows["base_id"].unique())
        unit_index = units.get_indexer(rows["base_id"])
        counts = bootstrap_counts(len(units), n_boot, rng)
        acc = _Acc(len(units), unit_index)
        meta: dict[tuple[str, str, str], tuple[str, str]] = {}
        q_judges: list[str] = []
        products: list[tuple[str, str, str, str, str]] = []

        for jid, table in judge_parts.get(set_name, {}).items():
            ind = _join_judge(rows, table, failures)
            if not ind["scope"].any():
                continue
            base = ~rows["augmented"]
            valid = ind["valid"].to_numpy()

            def excl(code: str, m: np.ndarray) -> None:
                sc = m & ind["scope"].to_numpy()
                fa, fb = ind["fail_ab"].to_numpy(), ind["fail_ba"].to_numpy()
                api = sc & ((fa == "api") | (fb == "api"))
                parse = sc & ~api & ((fa == "parse") | (fb == "parse"))
                used = sc & valid
                excl_rows.append({"set": set_name, "judge_id": jid, "condition": code,
                                  "n_scope": int(sc.sum()), "n_parse": int(parse.sum()),
                                  "n_api": int(api.sum()), "n_used": int(used.sum())})

            pa = 0.5 * (ind["corr_ab"].to_numpy().astype(float) + ind["corr_ba"].to_numpy().astype(float))
            # BC, the strict both-correct indicator of C5-C7
            strict = (ind["corr_ab"] & ind["corr_ba"]).to_numpy().astype(float)
            # overall
            m = base.to_numpy()
            acc.add((jid, "overall", "value"), pa, m & valid)
            meta[(jid, "overall", "value")] = ("overall", "PA over all items, both orderings")
            excl("overall", m)
            # both failure views of overall (PA) and strict (BC), whatever ``failures`` says, so a reader can
            # reconcile with a benchmark's own statistics (which count failures as wrong)
            ok_both = (ind["ok_ab"] & ind["ok_ba"]).to_numpy()
            in_scope = ind["scope"].to_numpy()
            for metric, v, den in (("excluded", pa, m & ok_both), ("as_wrong", pa, m & in_scope),
                                   ("strict_excluded", strict, m & ok_both), ("strict_as_wrong", strict, m & in_scope)):
                acc.add((jid, "overall", metric), v, den)
                meta[(jid, "overall", metric)] = ("overall", "failures " + ("excluded" if "excl" in metric
                                                                            else "counted wrong"))
            # q1 / q0 (Appendix K): accuracy when a* is shown first / second, on the same items and with
            # failures treated exactly as in the raw accuracy (``valid``); each item gives one verdict to
            # each, and both are recomputed in every bootstrap replicate (joint with the raw cells)
            lab = rows["label"].to_numpy()
            corr_ab, corr_ba = ind["corr_ab"].to_numpy(), ind["corr_ba"].to_numpy()
            den_q = base.to_numpy() & valid
            acc.add((jid, "overall", "q1"), np.where(lab == "A", corr_ab, corr_ba).astype(float), den_q)
            acc.add((jid, "overall", "q0"), np.where(lab == "A", corr_ba, corr_ab).astype(float), den_q)
            meta[(jid, "overall", "q1")] = meta[(jid, "overall", "q0")] = (
                "overall", "accuracy with a* shown first (q1) / second (q0), both orderings")
            q_judges.append(jid)

            for code in CONDITION_CODES:
                cell = cov.get(code)
                if cell is None or cell.status == "unavailable":
                    continue
                op = (cell.status, cell.operator)
                if code in CONTENT:
                    m = _rows_for(rows, cell).to_numpy()
                    acc.add((jid, code, "value"), pa, m & valid)
                    meta[(jid, code, "value")] = op
                    excl(code, m)
                elif code == "C7":
                    m = _rows_for(rows, cell).to_numpy()
                    den = m & valid
                    for metric, v in (("value", strict), ("strict", strict),
                                      ("consistency", ind["same"].to_numpy().astype(float)),
                                      ("acc_AB", ind["corr_ab"].to_numpy().astype(float)),
                                      ("acc_BA", ind["corr_ba"].to_numpy().astype(float))):
                        acc.add((jid, code, metric), v, den)
                        meta[(jid, code, metric)] = op
                    excl(code, m)
                elif code in ("C5", "C6"):
                    if cell.variants is not None and len(cell.variants) == 2:
                        v1, v2 = cell.variants
                        sub = rows if cell.subsets is None else rows[rows["subset"].isin(cell.subsets)]
                        s_u, c_u, den_u, scope = _paired(sub, ind.loc[sub.index], v1, v2, units)
                        for metric, v in (("value", s_u), ("strict", s_u), ("consistency", c_u)):
                            acc.add_units((jid, code, metric), v, den_u)
                            meta[(jid, code, metric)] = op
                        excl_rows.append({"set": set_name, "judge_id": jid, "condition": code,
                                          "n_scope": int(scope.sum()),
                                          "n_parse": int(scope.sum() - den_u.sum()), "n_api": 0,
                                          "n_used": int(den_u.sum())})
                    else:
                        m = _rows_for(rows, cell).to_numpy()
                        den = m & valid
                        for metric, v in (("value", strict), ("strict", strict),
                                          ("consistency", ind["same"].to_numpy().astype(float))):
                            acc.add((jid, code, metric), v, den)
                            meta[(jid, code, metric)] = op
                        ref = base.to_numpy() & ~m & valid
                        acc.add((jid, code, "reference"), strict, ref)
                        meta[(jid, code, "reference")] = op
                        excl(code, m)
                elif code == "C8":
                    m = _rows_for(rows, cell).to_numpy()
                    ok_ab = ind["ok_ab"].to_numpy()
                    corr_ab = ind["corr_ab"].to_numpy()
                    key = pd.MultiIndex.from_arrays([rows["pair_id"], np.repeat(jid, len(rows))])
                    if rl is not None:
                        lab8 = rl.reindex(key)
                        has = lab8.notna().to_numpy()
                        sup = lab8.fillna(False).astype(bool).to_numpy()
                    else:
                        has = np.zeros(len(rows), bool)
                        sup = np.zeros(len(rows), bool)
                    # CAP_8 on the evaluated correct-verdict items; Pr[v_AB = a*] on the whole cell, with
                    # failures handled as in every other cell; their product (per replicate) is the
                    # unconditional supported-correct rate of §4.1
                    acc.add((jid, code, "value"), sup.astype(float), m & ok_ab & corr_ab & has)
                    ab_valid = ok_ab if failures == "exclude" else ind["scope"].to_numpy()
                    acc.add((jid, code, "accuracy"), corr_ab.astype(float), m & ab_valid)
                    meta[(jid, code, "value")] = op
                    meta[(jid, code, "accuracy")] = op
                    meta[(jid, code, "unconditional")] = op
                    products.append((jid, code, "unconditional", "accuracy", "value"))
                    sc = m & ind["scope"].to_numpy() & corr_ab
                    if rl is not None:
                        unread = key.isin(rl_asked) & ~has
                        excl_rows.append({"set": set_name, "judge_id": jid, "condition": code,
                                          "n_scope": int(sc.sum()), "n_parse": int((sc & unread).sum()),
                                          "n_api": 0, "n_used": int((sc & has).sum())})

        est = _estimate(acc, counts, level)
        for key, num, den in zip(acc.keys, acc.nums, acc.dens, strict=True):
            used = den > 0
            unit_frames.append(pd.DataFrame({"set": set_name, "unit": units[used].astype(str), "judge_id": key[0],
                                             "condition": key[1], "metric": key[2], "num": num[used],
                                             "den": den[used]}))
        _products(est, products, level)
        for key, (v, lo, hi, n, b) in est.items():
            jid, code, metric = key
            status, operator = meta[key]
            cell_rows.append({"set": set_name, "judge_id": jid, "family": families.get(jid),
                              "condition": code, "metric": metric, "value": v, "ci_lo": lo,
                              "ci_hi": hi, "n": n, "coverage": status, "operator": operator})
            if b is not None:
                boots[(set_name, jid, code, metric)] = b
        bias_rows += _bias_rows(set_name, q_judges, est, level)

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
    )


def _benchmark_scores(table: pd.DataFrame | None) -> pd.DataFrame:
    if table is None:
        return pd.DataFrame(columns=list(BENCHMARK_SCORE_COLUMNS))
    miss = [c for c in BENCHMARK_SCORE_COLUMNS if c not in table.columns]
    if miss:
        raise InputError(f"benchmark score table lacks column(s) {', '.join(miss)}", field=miss[0])
    return table[list(BENCHMARK_SCORE_COLUMNS)].reset_index(drop=True)


def bias_correct(raw: float, q0: float, q1: float) -> float:
    """Appendix K plug-in correction: (CAP_raw + q0 − 1) / (q0 + q1 − 1).

    q1 is the judge's accuracy when the better response is shown first and q0 when it is shown
    second (position-conditional accuracies on the same set). Values above 1 are *saturated*:
    the correction over-compensates (the paper reports them flagged, not clipped). A
    denominator q0 + q1 − 1 ≤ 0 (a judge no better than chance across positions) leaves the
    correction undefined: NaN, never a number."""
    den = q0 + q1 - 1
    if not den > 0:
        return float("nan")
    return float((raw + q0 - 1) / den)


def _bias_rows(set_name: str, judges: list[str], est: dict[tuple[str, str, str], tuple],
               level: float) -> list[dict[str, Any]]:
    """Appendix K table rows of one set: the plug-in correction of overall and C1–C4 with a joint
    bootstrap in which the raw cell, q0 and q1 are all recomputed from the same resampled base
    items (their standard errors are the bootstrap standard deviations, so clustering of rows
    within a base item and the correlation of raw with q are carried). A point or replicate with
    q0 + q1 − 1 ≤ 0 is undefined: the row is flagged ``undefined`` with no value, and replicates
    with a non-positive denominator are left out of the interval and counted (``boot_undefined``)."""
    out = []
    for jid in judges:
        q0, q1 = est.get((jid, "overall", "q0")), est.get((jid, "overall", "q1"))
        if q0 is None or q1 is None or q0[4] is None or q1[4] is None:
            continue
        den_b = q0[4] + q1[4] - 1
        den = q0[0] + q1[0] - 1
        for code in ("overall",) + CONTENT:
            raw = est.get((jid, code, "value"))
            if raw is None or raw[3] == 0 or raw[4] is None:
                continue
            undefined = not den > 0
            with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                cb = np.where(den_b > 0, (raw[4] + q0[4] - 1) / den_b, np.nan)
                lo, hi = (np.nan, np.nan) if undefined else percentile_ci(cb, level)
            corrected = bias_correct(raw[0], q0[0], q1[0])
            out.append({"set": set_name, "judge_id": jid, "condition": code, "raw": raw[0], "q0": q0[0],
                        "q1": q1[0], "se_q0": float(np.nanstd(q0[4], ddof=1)),
                        "se_q1": float(np.nanstd(q1[4], ddof=1)), "denominator": float(den),
                        "corrected": corrected, "ci_lo": float(lo), "ci_hi": float(hi),
                        "saturated": bool(not undefined and corrected > 1.0),
                        "ci_above_1": bool(not undefined and lo > 1.0), "undefined": undefined,
                        "boot_undefined": float(np.mean(~(den_b > 0)))})
    return out


def _values(cells: pd.DataFrame, set_name: str, code: str) -> pd.DataFrame:
    return cells[(cells["set"] == set_name) & (cells["condition"] == code) & (cells["metric"] == "value")
                 & cells["value"].notna()]


def _spearman_table(cells: pd.DataFrame, sets: list[str], n_perm: int,
                    rng: np.random.Generator) -> pd.DataFrame:
    """Eq. 2: Spearman ρ of judge values per condition measurable on both sets (≥ 3 shared
    judges), with a permutation p-value; coverage statuses of both cells are carried."""
    rows = []
    v = cells[(cells["metric"] == "value") & cells["value"].notna()
              & cells["condition"].isin(CONDITION_CODES)]
    by = {k: g.set_index("judge_id") for k, g in v.groupby(["set", "condition"], sort=False)}
    for a, b in combinations(sets, 2):
        for code in CONDITION_CODES:
            xa, xb = by.get((a, code)), by.get((b, code))
            if xa is None or xb is None:
                continue
            shared = sorted(set(xa.index) & set(xb.index))
            if len(shared) < 3:
                continue
            xa, xb = xa.loc[shared], xb.loc[shared]
            rho, p = spearman_permutation(xa["value"].to_numpy(), xb["value"].to_numpy(), n_perm=n_perm,
                                          seed=rng)
            rows.append({"condition": code, "set_a": a, "set_b": b, "n_judges": len(shared), "rho": rho,
                         "p": p, "coverage_a": xa["coverage"].iloc[0], "coverage_b": xb["coverage"].iloc[0]})
    return pd.DataFrame(rows, columns=["condition", "set_a", "set_b", "n_judges", "rho", "p", "coverage_a",
                                       "coverage_b"])


def _stress_table(cells: pd.DataFrame, boots: dict, pairs: list[tuple[str, str]],
                  level: float) -> pd.DataFrame:
    """Eq. 3 / Table 6: δ_c(j) = CAP_c(j; base) − CAP_c(j; stress) for every judge and condition
    measured the same way on both sets (a main-table cell, direct or approximate, with one status
    on both: augmented cells and a direct cell against an approximate one are left out), and per
    judge the mean over its C1–C7 rows (Table 6's "Mean"; C8 is reported but omitted from the mean,
    as there). Intervals are percentile intervals of the difference (or of the mean difference) of
    the two sets' independent bootstrap replicates."""
    rows = []
    known = set(cells["set"])
    for base, stress in pairs:
        for s in (base, stress):
            if s not in known:
                raise InputError(f"stress pair names unknown set {s!r}; sets: {', '.join(sorted(known))}",
                                 field="stress")
        per_judge: dict[str, list[tuple[float, np.ndarray | None]]] = {}
        for code in CONDITION_CODES:
            vb, vs = _values(cells, base, code), _values(cells, stress, code)
            vb = vb[vb["coverage"].isin(MAIN_STATUSES)].set_index("judge_id")
            vs = vs[vs["coverage"].isin(MAIN_STATUSES)].set_index("judge_id")
            for jid in sorted(set(vb.index) & set(vs.index)):
                if vb.loc[jid, "coverage"] != vs.loc[jid, "coverage"]:
                    continue
                bb, bs = boots.get((base, jid, code, "value")), boots.get((stress, jid, code, "value"))
                diff = bb - bs if bb is not None and bs is not None and len(bb) == len(bs) else None
                delta = float(vb.loc[jid, "value"]) - float(vs.loc[jid, "value"])
                in_mean = code != "C8"
                if in_mean:
                    per_judge.setdefault(jid, []).append((delta, diff))
                rows.append(_stress_row(base, stress, jid, code, delta, diff, level, vb.loc[jid, "coverage"],
                                        vs.loc[jid, "coverage"], in_mean))
        for jid, ds in per_judge.items():
            diffs = [d for _, d in ds]
            diff = None if any(d is None for d in diffs) else np.mean(diffs, axis=0)
            rows.append(_stress_row(base, stress, jid, "mean", float(np.mean([d for d, _ in ds])), diff, level,
                                    None, None, False))
    return pd.DataFrame(rows, columns=["base", "stress", "judge_id", "condition", "delta", "ci_lo", "ci_hi",
                                       "coverage_base", "coverage_stress", "in_mean"])


def _stress_row(base: str, stress: str, jid: str, code: str, delta: float, diff: np.ndarray | None,
                level: float, cov_base: str | None, cov_stress: str | None, in_mean: bool) -> dict[str, Any]:
    lo = hi = np.nan
    if diff is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = percentile_ci(diff, level)
    return {"base": base, "stress": stress, "judge_id": jid, "condition": code, "delta": delta,
            "ci_lo": float(lo), "ci_hi": float(hi), "coverage_base": cov_base, "coverage_stress": cov_stress,
            "in_mean": in_mean}


#: How two judges of an L1 row relate (Appendix J compares within-family pairs with cross-family ones).
L1_RELATIONS = ("within family", "cross family", "same model", "overlapping families", "family unknown")


def _relation(fa: str | None, fb: str | None, ma: str | None, mb: str | None) -> str:
    if ma is not None and ma == mb:
        return "same model"  # one model under two prompt modes (LLMBar GPT-4/Vanilla vs GPT-4/CoT)
    common = shared(fa, fb)
    if common is None:
        return "family unknown"
    if same_family(fa, fb):
        return "within family"
    return "overlapping families" if common else "cross family"


def _l1_table(cells: pd.DataFrame, families: dict[str, str | None],
              models: dict[str, str | None] | None = None) -> pd.DataFrame:
    """Appendix J: L1 distance Σ_c |CAP_c(j1) − CAP_c(j2)| between two judges' profiles on the same
    set, over the conditions of the set's main table (Table 3/5: direct and approximate cells,
    C1–C8, so C8 counts wherever it is reported: 93.1 = 84.8 over C1–C7 + 8.3 for C8) that both
    judges have. Reference instruments (no family) are left out; each row says how the two judges
    relate (``L1_RELATIONS``): the same model under two prompt modes is not a within-family pair,
    and an unknown family is never within-family nor cross-family."""
    rows = []
    models = {j: model_key(m) for j, m in (models or {}).items()}
    main = cells[(cells["metric"] == "value") & cells["coverage"].isin(MAIN_STATUSES)
                 & cells["condition"].isin(CONDITION_CODES) & cells["value"].notna()
                 & (cells["judge_id"].map(lambda j: vendors(families.get(j)) != frozenset()))]
    for s, g in main.groupby("set", sort=False):
        prof = g.pivot_table(index="judge_id", columns="condition", values="value", aggfunc="first")
        for a, b in combinations(list(prof.index), 2):
            both = prof.loc[[a, b]].dropna(axis=1)
            if both.shape[1] == 0:
                continue
            fa, fb = families.get(a), families.get(b)
            relation = _relation(fa, fb, models.get(a), models.get(b))
            rows.append({"set": s, "judge_a": a, "judge_b": b, "family_a": fa, "family_b": fb,
                         "same_family": relation == "within family", "relation": relation,
                         "l1": float(np.abs(both.iloc[0] - both.iloc[1]).sum()),
                         "conditions": ",".join(both.columns)})
    return pd.DataFrame(rows, columns=["set", "judge_a", "judge_b", "family_a", "family_b", "same_family",
                                       "relation", "l1", "conditions"])


def l1_summary(l1: pd.DataFrame) -> pd.DataFrame:
    """Table 17's shape: per set, mean L1 of within-family pairs (per family) and the average over
    cross-family pairs; same-model pairs, overlapping and unknown families enter neither."""
    rows = []
    for s, g in l1.groupby("set", sort=False):
        for fam, gf in g[g["relation"] == "within family"].groupby("family_a"):
            rows.append({"set": s, "pair": f"{fam} (WF)", "l1": gf["l1"].mean(), "n_pairs": len(gf)})
        cf = g[g["relation"] == "cross family"]
        if len(cf):
            rows.append({"set": s, "pair": "cross-family avg.", "l1": cf["l1"].mean(), "n_pairs": len(cf)})
    return pd.DataFrame(rows, columns=["set", "pair", "l1", "n_pairs"])

"""Report sections of a CAP result (conditional-accuracy-profiles.txt §4 tables, Fig. 3 radar,
Table 2 coverage matrix, Appendix H strict-vs-consistency, Appendix K, L, M, J tables)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgeaudit.analyses.cap import CONDITION_BY_CODE, CONDITION_CODES, MAIN_STATUSES, CapResult, l1_summary
from judgeaudit.report.html import Headline, Section, esc, figure_html, of_analysis, table_html, units_section

_SHORT = {"direct": "Direct", "approx": "Approx.", "augmented": "Aug.", "unavailable": "—"}


def _pct(v: Any) -> str:
    return "—" if v is None or pd.isna(v) else f"{100 * v:.1f}"


def _cell(r: pd.Series) -> str:
    if pd.isna(r["value"]):
        return "—"
    if r["ci_lo"] == r["ci_hi"]:   # every unit the same share right: the bootstrap has no spread to resample
        if r["value"] in (0.0, 1.0) and r["n"]:
            lo, hi = wilson(int(round(r["n"] * r["value"])), int(r["n"]))
            return f"{100 * r['value']:.1f} ({100 * lo:.0f},{100 * hi:.0f})†"
        return f"{100 * r['value']:.1f} (no spread)†"
    return f"{100 * r['value']:.1f} ({100 * r['ci_lo']:.0f},{100 * r['ci_hi']:.0f})"


SINGLE_POINT_NOTE = ("† every item of the cell has the same share right, so the bootstrap interval is a single point: "
                     "where all are right (or all wrong) the Wilson interval of k of n is shown instead; otherwise "
                     "no interval is given.")


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n (statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


def profile_table(result: CapResult, set_name: str) -> pd.DataFrame:
    """Table 3's shape: judge × (overall, C1–C8), '% (CI)'; approximate cells marked ≈; augmented
    cells n.r. (reported separately); unavailable cells —."""
    c = result.cells[(result.cells["set"] == set_name) & (result.cells["metric"] == "value")]
    cov = result.coverage[result.coverage["set"] == set_name].set_index("condition")["status"]
    rows = []
    for judge, g in c.groupby("judge_id", sort=False):
        by = g.set_index("condition")
        row = {"judge": judge, "overall": _cell(by.loc["overall"]) if "overall" in by.index else "—"}
        for code in CONDITION_CODES:
            status = cov.get(code, "unavailable")
            head = code + ("≈" if status == "approx" else ("aug" if status == "augmented" else ""))
            if status == "unavailable" or code not in by.index:
                row[head] = "—"
            elif status not in MAIN_STATUSES:
                row[head] = "n.r."
            else:
                row[head] = _cell(by.loc[code])
        rows.append(row)
    return pd.DataFrame(rows)


def c8_table(result: CapResult, set_name: str) -> pd.DataFrame:
    """§4.1: per judge, conditional C8 on the evaluated correct-verdict items, the A/B accuracy on
    the cell, and the unconditional supported-correct rate (their product, joint bootstrap)."""
    c = result.cells[(result.cells["set"] == set_name) & (result.cells["condition"] == "C8")]
    rows = []
    for judge, g in c.groupby("judge_id", sort=False):
        by = g.set_index("metric")
        if "value" not in by.index or pd.isna(by.loc["value", "value"]):
            continue
        row = {"judge": judge, "C8 (conditional)": _cell(by.loc["value"]),
               "rationales evaluated": int(by.loc["value", "n"])}
        for m, head in (("accuracy", "Pr[v_AB = a*]"), ("unconditional", "Pr[v_AB = a* ∧ supported]")):
            row[head] = _cell(by.loc[m]) if m in by.index else "—"
        rows.append(row)
    return pd.DataFrame(rows)


def augmented_table(result: CapResult, set_name: str) -> pd.DataFrame:
    c = result.cells[(result.cells["set"] == set_name) & (result.cells["metric"] == "value")
                     & (result.cells["coverage"] == "augmented") & result.cells["value"].notna()]
    return pd.DataFrame([{"judge": r["judge_id"], "condition": r["condition"], "value": _cell(r), "n": r["n"],
                          "operator": r["operator"]} for _, r in c.iterrows()])


def coverage_matrix(result: CapResult) -> pd.DataFrame:
    """Table 2's shape: condition × set status, with the operator behind each cell."""
    rows = []
    for code in CONDITION_CODES:
        row = {"condition": f"{code} {CONDITION_BY_CODE[code].name}"}
        for s, g in result.coverage.groupby("set", sort=False):
            r = g.set_index("condition").loc[code]
            row[s] = _SHORT[r["status"]] + (f": {r['operator']}" if r["status"] != "unavailable" else "")
        rows.append(row)
    return pd.DataFrame(rows)


def strict_vs_consistency(result: CapResult) -> pd.DataFrame:
    """Table 15's shape: per set and judge, strict and consistency for C5–C7 and Δ = cons − strict
    (the stable-but-wrong mass)."""
    c = result.cells[result.cells["metric"].isin(["strict", "consistency"])]
    rows = []
    for (s, j), g in c.groupby(["set", "judge_id"], sort=False):
        row: dict[str, Any] = {"set": s, "judge": j}
        any_value = False
        for code in ("C5", "C6", "C7"):
            x = g[g["condition"] == code].set_index("metric")["value"]
            st, co = x.get("strict"), x.get("consistency")
            any_value |= st is not None and not pd.isna(st)
            row[f"{code} strict"] = _pct(st)
            row[f"{code} cons."] = _pct(co)
            row[f"{code} Δ"] = _pct(co - st) if st is not None and co is not None and not pd.isna(st) \
                and not pd.isna(co) else "—"
        if any_value:
            rows.append(row)
    return pd.DataFrame(rows)


def benchmark_score_table(result: CapResult) -> pd.DataFrame:
    """Per set and judge: the benchmark's own score (its repository's rule) beside CAP's overall
    (position-averaged) and strict (both orders correct) accuracy, each with parse/API failures
    excluded (Appendix L) and counted wrong (as benchmarks' own statistics count them)."""
    bs = result.benchmark_scores
    if bs is None or not len(bs):
        return pd.DataFrame()
    rows = []
    for r in bs.itertuples(index=False):
        def v(metric: str) -> Any:
            return result.value(r.set, r.judge_id, "overall", metric)

        n_ex = result.cells[(result.cells["set"] == r.set) & (result.cells["judge_id"] == r.judge_id)
                            & (result.cells["condition"] == "overall")].set_index("metric")["n"]
        rows.append({"set": r.set, "judge": r.judge_id, "benchmark's own score": f"{100 * r.value:.2f}",
                     "pairs": r.n, "CAP overall (failures excluded)": _pct(v("excluded")),
                     "CAP overall (failures wrong)": _pct(v("as_wrong")),
                     "strict (failures excluded)": _pct(v("strict_excluded")),
                     "strict (failures wrong)": _pct(v("strict_as_wrong")),
                     "items with a failure": int(n_ex.get("as_wrong", 0) - n_ex.get("excluded", 0)),
                     "rule": r.rule})
    return pd.DataFrame(rows)


def published_statistics_sentence(table: pd.DataFrame) -> str:
    """How many shipped judge-output files each failure view reproduces (``reconcile_statistics``)."""
    with_pub = table[table["published"] != "—"]
    n = len(with_pub)
    by = with_pub["reproduced_by"].astype(str)
    wrong = int(by.str.contains("failures wrong").sum())
    excl = int(by.str.contains("failures excluded").sum())
    unparsed = int((with_pub["items with an unparsed winner"] > 0).sum())
    none = int((by == "none").sum())
    s = (f"LLMBar statistics.json: {wrong} of {n} files reproduced with unparsed winners counted wrong (LLMBar's "
         f"rule), {excl} of {n} with them excluded (CAP's default); {unparsed} file(s) have unparsed winners")
    if none:
        s += f"; {none} file(s) reproduced by neither view"
    if len(table) > n:
        s += f"; {len(table) - n} output file(s) ship no statistics.json"
    return s + "."


def published_statistics_section(table: pd.DataFrame) -> Section:
    """The file-by-file reconciliation of the benchmark's published statistics.json."""
    return Section("The benchmark's published statistics, file by file",
                   f"<p>{esc(published_statistics_sentence(table))}</p><p class='note'>Counts k/n of "
                   "correct_False, correct_True, correct_both and equal (positional agreement), as the published "
                   "statistics.json gives them, beside the same counts recomputed from the file's result.json with "
                   "unparsed winners counted wrong (LLMBar's rule: every item in n) and excluded (CAP's default, "
                   "Appendix L: an item with an unparsed winner in either order leaves n).</p>"
                   + table_html(table.rename(columns={"judge_id": "judge", "reproduced_by": "reproduced by"})))


#: Fewer measurable conditions than this and a radar has no area (two axes draw a line, one a dot):
#: the profile is drawn as grouped bars instead.
RADAR_MIN_AXES = 3


def radar_figure(result: CapResult, set_name: str) -> Any:
    """Fig. 3: one polygon per judge over the measurable main-table conditions of the set; grouped
    bars (one group per condition, one bar per judge) where fewer than ``RADAR_MIN_AXES`` are
    measurable."""
    import plotly.graph_objects as go

    c = result.cells[(result.cells["set"] == set_name) & (result.cells["metric"] == "value")
                     & result.cells["condition"].isin(CONDITION_CODES)
                     & result.cells["coverage"].isin(MAIN_STATUSES)]
    conds = [code for code in CONDITION_CODES if c.loc[c["condition"] == code, "value"].notna().any()]
    labels = [f"{code} {CONDITION_BY_CODE[code].name}" for code in conds]
    radar = len(conds) >= RADAR_MIN_AXES
    fig = go.Figure()
    for judge, g in c.groupby("judge_id", sort=False):
        by = g.set_index("condition")["value"]
        vals = [100 * by.get(code) if by.get(code) is not None and not pd.isna(by.get(code)) else None
                for code in conds]
        if radar:
            fig.add_trace(go.Scatterpolar(r=vals + vals[:1], theta=labels + labels[:1], name=judge,
                                          mode="lines+markers"))
        else:
            fig.add_trace(go.Bar(x=labels, y=vals, name=judge))
    layout: dict[str, Any] = {"height": 520, "title": f"CAP profiles on {set_name} (%, raw)",
                              "legend": {"font": {"size": 10}}}
    if radar:
        layout["polar"] = {"radialaxis": {"range": [0, 100]}}
    else:
        layout.update(barmode="group", yaxis={"range": [0, 100], "title": "accuracy (%)"})
    fig.update_layout(**layout)
    return fig


CHANCE = 0.5
"""A pairwise judge choosing a side at random is right half the time (a tie counts as wrong)."""


def headlines(result: CapResult, set_name: str) -> list[Headline]:
    """The summary lines of a set: per judge its overall (position-averaged) accuracy with its interval, read
    against chance (0.5), and where no item was measured, why there is no estimate."""
    c = result.cells[(result.cells["set"] == set_name) & (result.cells["condition"] == "overall")
                     & (result.cells["metric"] == "value")]
    out = []
    for r in c.itertuples(index=False):
        what = f"overall accuracy on {set_name} (position-averaged)"
        if pd.isna(r.value) or not r.n:
            out.append(Headline(r.judge_id, what, "—", "no item measured: every pair was excluded or unjudged"))
            continue
        lo, hi = r.ci_lo, r.ci_hi
        how = ""
        if lo == hi:   # every item has the same share right: the bootstrap has no spread to resample
            if r.value in (0.0, 1.0):
                k = int(round(r.n * r.value))
                lo, hi = wilson(k, int(r.n))
                how = f" (Wilson, {k} of {r.n} items right: the bootstrap interval is a single point here)"
            else:
                out.append(Headline(r.judge_id, what, f"{100 * r.value:.1f}%, n = {r.n}, no interval",
                                    "every item has the same share right, so the bootstrap interval is a single "
                                    "point: no reading against chance is given"))
                continue
        reading = (f"the interval is above {CHANCE:.0%} (a side chosen at random): better than chance on these "
                   f"{r.n} items" if lo > CHANCE else
                   f"the interval is below {CHANCE:.0%}: worse than choosing a side at random" if hi < CHANCE else
                   f"the interval includes {CHANCE:.0%}: not distinguishable from choosing a side at random")
        out.append(Headline(r.judge_id, what, f"{100 * r.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]{how}, n = {r.n}",
                            reading))
    return out


def _condition_name(code: str) -> str:
    return "overall (position-averaged)" if code == "overall" else f"{code} {CONDITION_BY_CODE[code].name}"


def _outcome(share: float) -> str:
    return "right" if share >= 1 else "wrong" if share <= 0 else "partly right"


def _verdict(choice: Any, failure: Any) -> str:
    if isinstance(failure, str) and failure:
        return f"{failure} failure"
    return "—" if choice is None or (isinstance(choice, float) and pd.isna(choice)) else str(choice)


def unit_frame(units: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per set, judge, condition and base item the run counted (its ``units.parquet`` rows of metric
    ``value``): right (every verdict the cell counts on it correct), wrong (none) or partly right (e.g. one order
    of two, or one variant of two) with the share right, beside the correct side and the judge's verdict and
    reply in each order on the item's original pair (its ``pair_verdicts.parquet`` rows). A pair with a parse
    or API failure that the run excluded from every cell is listed once, under "overall", as excluded."""
    u = units[units["metric"] == "value"]
    v = verdicts.assign(base_id=verdicts["base_id"].astype(str), _variant=verdicts["variant"] != "original")
    v = v.sort_values("_variant", kind="stable").drop_duplicates(["set", "judge_id", "base_id"])
    by = {(r.set, r.judge_id, r.base_id): r for r in v.itertuples(index=False)}

    def said(row: dict, pv: Any) -> dict:
        if pv is None:
            return {**row, "correct side": None, "verdict A/B": None,
                    "verdict B/A (original frame)": None, "reply A/B": None,
                    "reply B/A": None}
        return {**row, "correct side": pv.label, "verdict A/B": _verdict(pv.choice_ab, pv.failure_ab),
                "verdict B/A (original frame)": _verdict(pv.choice_ba, pv.failure_ba),
                "reply A/B": pv.rationale_ab, "reply B/A": pv.rationale_ba}

    rows = []
    counted = set()
    for r in u.itertuples(index=False):
        share = float(r.num) / float(r.den)
        counted.add((r.set, r.judge_id, str(r.unit), r.condition))
        rows.append(said({"set": r.set, "judge": r.judge_id, "condition": _condition_name(r.condition),
                          "item": str(r.unit), "outcome": _outcome(share), "share right": share},
                         by.get((r.set, r.judge_id, str(r.unit)))))
    for key, pv in by.items():
        kinds = [f"{f} failure ({o})" for f, o in ((pv.failure_ab, "A/B"), (pv.failure_ba, "B/A"))
                 if isinstance(f, str) and f]
        if kinds and (*key, "overall") not in counted:
            rows.append(said({"set": key[0], "judge": key[1], "condition": _condition_name("overall"),
                              "item": key[2], "outcome": "excluded: " + ", ".join(kinds), "share right": None}, pv))
    cols = ["set", "judge", "condition", "item", "outcome", "share right", "correct side", "verdict A/B",
            "verdict B/A (original frame)", "reply A/B", "reply B/A"]
    return pd.DataFrame(rows, columns=cols)


def cap_units_section(result: CapResult, verdicts: pd.DataFrame | None) -> Section | None:
    """The base items behind the profile cells, browsable and filterable (e.g. the C3 items a judge got wrong,
    or its parse failures), from the run's per-unit cells and its pair verdicts."""
    if verdicts is None or not len(result.units):
        return None
    df = unit_frame(result.units, verdicts)
    counts = ", ".join(f"{n} {k}" for k, n in df["outcome"].value_counts().items())
    return units_section("The items behind the numbers", df, filters=("set", "judge", "condition", "outcome"),
                         caption=f"{len(df)} set × judge × condition × base item rows ({counts}): whether the judge "
                                 "was right on the item as the cell counts it (share right: of the verdicts the "
                                 "cell counts on the item, e.g. both orders for position-averaged accuracy, both "
                                 "variants for C5–C6), the correct side and the judge's verdict and reply in each "
                                 "order on the item's original pair. Filter to a judge, a condition and an outcome "
                                 "(e.g. the items it got wrong, or excluded for a parse failure). Texts are cut at "
                                 "400 characters; in full in this run's pair_verdicts.parquet, and every cell's "
                                 "per-item numerator and denominator in units.parquet.")


def cap_sections(result: CapResult, verdicts: pd.DataFrame | None = None) -> list[Section]:
    """Sections of the CAP report: per set the profile table with intervals and the radar; then the
    coverage matrix, the strict-vs-consistency table, bias-corrected values, cross-set Spearman,
    stress and L1 tables, the exclusions (every number computed from this run's verdicts) and, given the
    run's pair verdicts (``analyses.cap.pair_verdicts``), the items behind the cells."""
    sections: list[Section] = []
    sets = list(dict.fromkeys(result.cells["set"]))
    for s in sets:
        prof = profile_table(result, s)
        body = (f"<p class='note'>Each cell: raw conditional accuracy (%) with its 95% bootstrap interval over "
                f"base items ({result.n_boot} resamples; the unit is the base item: a pair's two orderings and all "
                f"its presentation variants are resampled together). ≈ marks an approximate cell (a native task "
                f"subset used as a "
                f"proxy); augmented cells are n.r. here and listed separately; — means not measurable. "
                f"C5–C7 use the strict both-correct criterion.</p>" + table_html(prof)
                + (f"<p class='note'>{esc(SINGLE_POINT_NOTE)}</p>" if prof.astype(str).apply(
                    lambda c: c.str.endswith("†")).to_numpy().any() else ""))
        c8 = c8_table(result, s)
        if len(c8):
            body += ("<h3>Rationale quality: conditional and unconditional (§4.1)</h3><p class='note'>C8 is "
                     "estimated on the evaluated correct-verdict rationales; the unconditional rate is Pr[v_AB = a*] "
                     "on the whole cell times C8, with both factors recomputed in every bootstrap replicate.</p>"
                     + table_html(c8))
        aug = augmented_table(result, s)
        if len(aug):
            body += "<h3>Augmented cells (not aggregated with direct cells)</h3>" + table_html(aug)
        body += figure_html(radar_figure(result, s))
        banners = []
        if result.evaluator and result.evaluator.get("allow_same_family"):
            banners.append("!The C8 evaluator shares a family with judge(s) "
                           f"{', '.join(result.evaluator.get('same_family_judges') or [])} (explicitly allowed).")
        sections.append(Section(f"CAP profile: {s}", body, banners, headlines=headlines(result, s)))
    bst = benchmark_score_table(result)
    if len(bst):
        sections.append(Section("CAP beside the benchmark's own score", "<p class='note'>The benchmark's own "
                                "score of each judge by its repository's rule, next to CAP's overall "
                                "(position-averaged) and strict (both orderings correct) accuracy with failures "
                                "excluded (Appendix L, CAP's default) and counted wrong (as the benchmark's own "
                                "statistics count them).</p>" + table_html(bst)))
    sections.append(Section("CAP coverage matrix", "<p class='note'>How each benchmark measures each "
                            "condition (Table 2, operators of Appendix D). PA = position-averaged; BC = strict "
                            "both-correct.</p>" + table_html(coverage_matrix(result))))
    svc = strict_vs_consistency(result)
    if len(svc):
        sections.append(Section("CAP robustness: strict vs. pure consistency", "<p class='note'>Δ = consistency "
                                "− strict: the stable-but-wrong mass (Appendix H).</p>" + table_html(svc)))
    bc = result.bias_corrected
    if len(bc):
        t = bc.assign(raw=bc["raw"].map(_pct),
                      corrected=[("undefined: q0 + q1 − 1 ≤ 0" if u else _pct(c)) for u, c in
                                 zip(bc["undefined"], bc["corrected"])],
                      q0=[f"{q:.3f} ± {e:.3f}" for q, e in zip(bc["q0"], bc["se_q0"])],
                      q1=[f"{q:.3f} ± {e:.3f}" for q, e in zip(bc["q1"], bc["se_q1"])],
                      ci=["—" if pd.isna(a) else f"({100 * a:.0f},{100 * b:.0f})"
                          for a, b in zip(bc["ci_lo"], bc["ci_hi"])],
                      saturated=bc["saturated"].map({True: "† saturated", False: ""}))
        t = t[["set", "judge_id", "condition", "q0", "q1", "raw", "corrected", "ci", "saturated"]]
        sections.append(Section("CAP bias-corrected estimates (diagnostic)", "<p class='note'>(raw + q0 − 1) / "
                                "(q0 + q1 − 1) with q1, q0 the accuracies when the better response is shown "
                                "first / second (± their bootstrap standard errors); a joint bootstrap over base "
                                "items recomputes raw, q0 and q1 in every replicate (Appendix K). A denominator "
                                "q0 + q1 − 1 ≤ 0 leaves the correction undefined. † marks saturated cells "
                                "(> 100%): the correction over-compensates there; raw values remain the primary "
                                "quantities.</p>" + table_html(t)))
    extra = ""
    if len(result.spearman):
        extra += "<h3>Cross-benchmark Spearman ρ of judge rankings (Eq. 2)</h3>" + table_html(result.spearman)
    if len(result.stress):
        extra += ("<h3>Stress degradation δ = base − stress (Eq. 3)</h3><p class='note'>Conditions measured the "
                  "same way on both sets (direct or approximate on both, never augmented); 'mean' is the "
                  "per-judge mean over the C1–C7 rows (Table 6; C8 omitted from it).</p>"
                  + table_html(result.stress))
    if len(result.l1):
        l1 = l1_summary(result.l1)
        extra += ("<h3>L1 profile distance (Appendix J)</h3><p class='note'>Σ_c |CAP_c(j1) − CAP_c(j2)| in "
                  "points over the conditions of each set's main table (C8 included where reported), as Table 17. "
                  "Within-family: two different models of one vendor family; the same model under two prompt "
                  "modes, judges of unknown or overlapping family and reference instruments enter neither "
                  "average (every pair with its relation is in result.json).</p>"
                  + table_html(l1.assign(l1=(100 * l1["l1"]).round(1))))
    if extra:
        sections.append(Section("CAP cross-benchmark tables", extra))
    ex = result.exclusions
    if len(ex):
        sections.append(Section("CAP exclusions", "<p class='note'>Per judge and condition: items in scope, items "
                                "with a parse failure, with an API failure, and items used (Appendix L).</p>"
                                + table_html(ex)))
    if result.evaluator:
        sections.append(Section("CAP rationale evaluator", "<pre>" + esc(result.evaluator) + "</pre>"))
    units = cap_units_section(result, verdicts)
    if units is not None:
        sections.append(units)
    return of_analysis(sections, "conditional accuracy profile (CAP) · " + ", ".join(sets))

"""The world runs: (items × arms × votes) through each judge and the call store, pooled and scored.

``analyse`` is the pure part (items + verdict table -> result dict); ``run_world`` and
``run_factorial`` build the requests, run the judges (``runtime.executor.judge_all``: store,
progress, failures as verdict rows) and analyse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import pandas as pd

from judgeaudit.analyses.world.correlate import DEFAULT_COVARIATES, correlations, covariate_table
from judgeaudit.analyses.world.pooling import TIE_RULE, pool_votes
from judgeaudit.analyses.world.scoring import (
    SCORE_CLEAN,
    STRICT_THRESHOLD,
    Matcher,
    agreement,
    audit_pairs,
    char_overlap,
    char_specificity,
    decisions,
    decisions_frame,
    disagreement,
    matcher_audit,
    span_scores,
    strict_matcher,
)
from judgeaudit.analyses.world.segments import segment_rows, sentence_rows, sentence_units
from judgeaudit.errors import InputError
from judgeaudit.records import WorldItem
from judgeaudit.records import kind_ids as kinds
from judgeaudit.stats.paired import METRICS, boot_metric, cluster_counts, mcnemar_paired, metric, paired_gain
from judgeaudit.stats.shapley import cells as factorial_cells
from judgeaudit.stats.shapley import shapley
from judgeaudit.stats.tests import wilson_interval
from judgeaudit.world.arms import ArmContext, cell_name
from judgeaudit.world.requests import SEP, build_requests, taxonomy_of

FACTORS = ("question", "source", "typed", "instrument")

SCORED_HOW = {
    "label": "per-answer labels compared directly with the gold label (no matcher)",
    "sentences": "per-unit labels compared directly with the gold unit labels (no matcher); bootstrap over answers",
    "typed": "typed ids compared directly with the violated requirement types, one unit per (answer, type id) "
             "(no matcher); bootstrap over answers",
    "score": f"1-5 score, median of votes; flagged when below {SCORE_CLEAN:g} (no matcher)",
    "defects": "answer-level: an answer is flagged when the union of its votes' defects is non-empty (no "
               "matcher); the per-segment and per-sentence scores depend on the matcher",
}


@dataclass(frozen=True)
class Analysis:
    decisions: pd.DataFrame
    result: dict = field(default_factory=dict)


def _pool_all(items: list[WorldItem], verdicts: pd.DataFrame, form: str, tie: str):
    """(decision rows, complaints by (judge, arm, item))."""
    by_id = {it.item_id: it for it in items}
    rows, complaints = [], {}
    for (judge, rid), grp in verdicts.groupby(["judge_id", "request_id"], sort=False):
        item_id, _, arm = rid.rpartition(SEP)
        it = by_id[item_id]
        p = pool_votes(grp, form=form, tie=tie)
        complaints[(judge, arm, item_id)] = p.defects or []
        for d in decisions(it, p, form):
            rows.append({"judge": judge, "arm": arm, "item_id": item_id, "group": it.group or it.item_id, **d,
                         "parsed_votes": p.parsed_votes, "votes": p.votes, "ties": p.ties})
    return decisions_frame(rows), complaints


def matcher_queries(items: list[WorldItem], verdicts: pd.DataFrame, *, seed: int = 0,
                    tie: str = TIE_RULE) -> list[tuple[str, dict]]:
    """(item id, complaint) pairs a matcher will be asked about by ``analyse``: every pooled complaint on
    an item with marked segments or labelled sentences, and the permuted control's complaints against
    another item."""
    spanned = [it for it in items if it.spans or sentence_units(it)]
    _, comp = _pool_all(items, verdicts, "defects", tie)
    out = []
    for judge, arm in dict.fromkeys((j, a) for j, a, _ in comp):
        c = {it.item_id: comp.get((judge, arm, it.item_id), []) for it in spanned}
        out += [(i, x) for i, cs in c.items() for x in cs]
        out += [(other.item_id, x) for other, cs in audit_pairs(spanned, c, seed) for x in cs]
    return out


def _counts(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return cluster_counts(df["gold"].to_numpy(bool), df["flagged"].to_numpy(bool), df["group"].to_numpy(),
                          df["complaints"].to_numpy(float))


def recall_by_kind(df: pd.DataFrame, n_boot: int, seed: int) -> tuple[dict, dict]:
    """Per defect kind (FRANK error category, IFEval instruction id, ...; discovered from the scored
    defective units, sorted): ``n`` defective units of that kind, ``found`` (flagged), ``recall``, its
    bootstrap interval over answers (``ci``) and Wilson interval (``wilson``). A unit with several
    kinds counts in each. Also the defective units with no kind (``n``, ``found``): defects whose
    category the corpus does not place (e.g. a FRANK category in only some of a summary's sentences)."""
    bad = df[df["gold"].astype(bool)]
    ks = bad["kinds"].fillna("").map(kinds)
    out = {}
    for k in sorted({k for row in ks for k in row}):
        sub = bad[ks.map(lambda row, k=k: k in row)]
        _, counts = _counts(sub)
        found = int(sub["flagged"].sum())
        v, lo, hi = boot_metric(counts, "recall", n_boot=n_boot, seed=seed)
        out[k] = {"n": int(len(sub)), "found": found, "recall": v, "ci": [lo, hi],
                  "wilson": list(wilson_interval(found, int(len(sub))))}
    none = bad[ks.map(len) == 0]
    return out, {"n": int(len(none)), "found": int(none["flagged"].sum())}


BOOTSTRAP_UNIT = "group"
"""What the world's intervals resample: the source item (``WorldItem.group``) an answer belongs to."""


def resampled(counts: np.ndarray, metrics: Sequence[str]) -> dict:
    """Per metric, how many resampled clusters hold a unit of its denominator (a cluster holding none
    does not move the metric): the count the interval's width rests on (``bootstrap.n``)."""
    tp, fn, tn, fp = (counts[:, i] > 0 for i in range(4))
    holds = {"recall": tp | fn, "specificity": tn | fp, "false_alarms_per_clean": tn | fp,
             "precision": tp | fp, "balanced_accuracy": (tp | fn) & (tn | fp)}
    return {"unit": BOOTSTRAP_UNIT, "n": {m: int(holds[m].sum()) for m in metrics if m in holds}}


def rates(df: pd.DataFrame, n_boot: int, seed: int, metrics: Sequence[str] = METRICS) -> dict:
    """``metrics`` over the decided rows of ``df`` (``flagged`` not None) with bootstrap intervals over
    source items (``ci``; ``bootstrap``: the unit resampled and, per metric, how many of them hold a
    unit of its denominator) and Wilson intervals for recall and specificity; ``undecided`` rows are
    counted."""
    scored = df[df["flagged"].notna()]
    out = {"n": int(len(scored)), "n_defective": int(scored["gold"].sum()),
           "n_clean": int((~scored["gold"].astype(bool)).sum()), "undecided": int(df["flagged"].isna().sum())}
    if scored.empty:
        return {**out, **{m: None for m in metrics}, "ci": {}}
    scored = scored.assign(flagged=scored["flagged"].astype(bool), gold=scored["gold"].astype(bool))
    _, counts = _counts(scored)
    out["bootstrap"] = resampled(counts, metrics)
    ci = {}
    for m in metrics:
        v, lo, hi = boot_metric(counts, m, n_boot=n_boot, seed=seed)
        out[m] = None if np.isnan(v) else v
        ci[m] = [lo, hi]
    tot = counts.sum(axis=0)
    ci["recall_wilson"] = list(wilson_interval(int(tot[0]), int(tot[0] + tot[1])))
    if "specificity" in metrics:
        ci["specificity_wilson"] = list(wilson_interval(int(tot[2]), int(tot[2] + tot[3])))
    out["ci"] = ci
    return out


def _arm_summary(df: pd.DataFrame, n_boot: int, seed: int) -> dict:
    first = df.drop_duplicates("item_id")
    r = rates(df, n_boot, seed)
    out = {**{k: r.pop(k) for k in ("n", "n_defective", "n_clean")}, "no_verdict": r.pop("undecided"),
           "answers": int(df["item_id"].nunique()), "ties": int(first["ties"].sum()),
           "parse_failures": int((first["votes"] - first["parsed_votes"]).sum()), **r}
    if not out["n"]:
        return out
    scored = df[df["flagged"].notna()]
    scored = scored.assign(flagged=scored["flagged"].astype(bool), gold=scored["gold"].astype(bool))
    by_kind, unplaced = recall_by_kind(scored, n_boot, seed)
    if by_kind:
        out["recall_by_kind"], out["kind_unplaced"] = by_kind, unplaced
    return out


STRATUM = {"recall": "defective", "specificity": "clean", "false_alarms_per_clean": "clean",
           "balanced_accuracy": "all"}
"""The units whose paired 2×2 table tests each metric (blind-spot §4: recall on the defective units, §5:
false alarms on the error-free units); balanced accuracy, an average of the two, is tested on
correctness over all units (judgeaudit's own choice); precision, whose units (the flagged ones) differ
between the arms, has no paired table."""


def stratum_mcnemar(gold: np.ndarray, fa: np.ndarray, fb: np.ndarray, stratum: str | None) -> dict | None:
    """Exact McNemar on the stratum's paired 2×2 table, ``b`` = units arm a got wrong and arm b right,
    ``c`` = the reverse, with what each means (``b_is``, ``c_is``); None without a stratum."""
    if stratum is None:
        return None
    sel = {"defective": gold, "clean": ~gold, "all": np.ones_like(gold)}[stratum]
    mc = mcnemar_paired((fa == gold)[sel], (fb == gold)[sel])
    what = {"defective": ("defective units a missed and b found", "defective units a found and b missed"),
            "clean": ("clean units a flagged and b left unflagged", "clean units a left unflagged and b flagged"),
            "all": ("units a got wrong and b right", "units a got right and b wrong")}[stratum]
    return {**mc, "stratum": stratum, "units": int(sel.sum()), "b_is": what[0], "c_is": what[1]}


def paired_rows(dec: pd.DataFrame, judge: str, a: str, b: str, n_boot: int, seed: int,
                metrics: Sequence[str] = METRICS, **tags) -> list[dict]:
    """Gains b − a on the units both arms scored, bootstrap over source items (``bootstrap``: the unit
    and how many of them hold a unit of the metric's denominator), and per metric McNemar on the
    paired 2×2 table of its own stratum (``STRATUM``); ``tags`` (e.g. ``unit``, ``matcher``) are added
    to every row."""
    da = dec[(dec["judge"] == judge) & (dec["arm"] == a) & dec["flagged"].notna()]
    db = dec[(dec["judge"] == judge) & (dec["arm"] == b) & dec["flagged"].notna()]
    m = da.merge(db, on=["item_id", "unit", "group", "gold"], suffixes=("_a", "_b"))
    if m.empty:
        return []
    gold = m["gold"].to_numpy(bool)
    fa, fb = m["flagged_a"].to_numpy(bool), m["flagged_b"].to_numpy(bool)
    _, ca = cluster_counts(gold, fa, m["group"].to_numpy(), m["complaints_a"].to_numpy(float))
    _, cb = cluster_counts(gold, fb, m["group"].to_numpy(), m["complaints_b"].to_numpy(float))
    boot = resampled(ca + cb, metrics)     # gold is shared: recall and specificity count the same clusters
    rows = []
    for name in metrics:
        g, lo, hi = paired_gain(ca, cb, name, n_boot=n_boot, seed=seed)
        rows.append({"judge": judge, "a": a, "b": b, "metric": name, **tags, "n": int(len(m)),
                     "bootstrap": {"unit": boot["unit"], "n": boot["n"].get(name)},
                     "a_value": float(metric(ca.sum(0), name)), "b_value": float(metric(cb.sum(0), name)),
                     "gain": g, "ci": [lo, hi], "mcnemar": stratum_mcnemar(gold, fa, fb, STRATUM.get(name))})
    return rows


def _matched_frame(rows: list[dict], judge: str, arm: str) -> pd.DataFrame:
    return pd.DataFrame([{"judge": judge, "arm": arm, **r} for r in rows],
                        columns=["judge", "arm", "item_id", "group", "unit", "gold", "flagged", "complaints",
                                 "kinds"])


def matched_levels(items: list[WorldItem], complaints: dict, judge: str, arms: Sequence[str],
                   matchers: dict[str, Matcher]) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (unit, matcher), the decision rows of every arm of ``judge``: ``segment`` (marked segments
    found) and ``sentence`` (labelled sentences flagged through the matcher)."""
    out = {}
    for unit, build in (("segment", segment_rows), ("sentence", sentence_rows)):
        for mname, mt in matchers.items():
            df = pd.concat([_matched_frame(build(items, {i: complaints.get((judge, arm, i), []) for i in
                                                         (it.item_id for it in items)}, mt), judge, arm)
                            for arm in arms], ignore_index=True)
            if not df.empty:
                out[(unit, mname)] = df
    return out


LEVEL_METRICS = {"segment": ("recall",), "sentence": METRICS}


UNIT_OF_FORM = {"label": "answer", "score": "answer", "defects": "answer", "sentences": "sentence",
                "typed": "type id"}


def _level_summary(df: pd.DataFrame, unit: str, n_boot: int, seed: int) -> dict:
    out = rates(df, n_boot, seed, LEVEL_METRICS[unit])
    if out["undecided"] and not out["n"]:
        out["undefined"] = f"the matcher decided none of the {out['undecided']} {unit}s"
    return out


def _span_block(items: list[WorldItem], comp: dict, strict: Matcher, generous: Matcher | None,
                second: Matcher | None, strict_threshold: float, n_boot: int, seed: int) -> dict:
    """Span scores over every answer (error-free ones included, as RAGTruth scores them)."""
    spans = {"strict": span_scores(items, comp, strict).to_dict(), "strict_threshold": strict_threshold,
             "permuted_audit_strict": matcher_audit(items, comp, strict, seed),
             "char_overlap": char_overlap(items, comp),
             "char_specificity": char_specificity(items, comp, n_boot=n_boot, seed=seed),
             "scored": "depends on the matcher (character overlap and specificity: on the quotes as located)"}
    if generous is not None:
        spans["generous"] = span_scores(items, comp, generous).to_dict()
        spans["disagreement"] = disagreement(items, comp, strict, generous)
        spans["permuted_audit_generous"] = matcher_audit(items, comp, generous, seed)
        spans["agreement_strict_generous"] = agreement(items, comp, generous, strict)
    if generous is not None and second is not None:
        spans["second"] = span_scores(items, comp, second).to_dict()
        spans["second_matcher_agreement"] = agreement(items, comp, generous, second)
    return spans


def analyse(items: list[WorldItem], verdicts: pd.DataFrame, *, form: str, arms: Sequence[str],
            n_boot: int = 2000, seed: int = 0, tie: str = TIE_RULE, generous: Matcher | None = None,
            second: Matcher | None = None, strict_threshold: float = STRICT_THRESHOLD,
            covariates: Sequence[str] = DEFAULT_COVARIATES,
            n_perm: int = 9999, alternative: str = "greater") -> Analysis:
    """Per judge and arm: the detection rates with intervals; paired gains of every arm against the
    first; for the defects form the span scores under each matcher over every answer, their
    disagreement and audit, character specificity on the error-free answers, and per matcher the
    segment-level recall and the sentence-level rates with their paired gains (``second``: a second
    matcher re-matching the generous matcher's pairs, agreement and κ); Spearman ρ
    (permutation p, one-sided in the predicted direction by default) of per-answer gains and false
    alarms with each covariate."""
    cov = covariate_table(items, covariates)
    dec, complaints = _pool_all(items, verdicts, form, tie)
    judges: dict[str, dict] = {}
    paired: list[dict] = []
    by_id = {it.item_id: it for it in items}
    matched = form == "defects" and any(it.spans or sentence_units(it) for it in items)
    strict = strict_matcher(strict_threshold)
    matchers = {"strict": strict, **({"generous": generous} if generous is not None else {})}
    for judge in dict.fromkeys(verdicts["judge_id"]):
        levels = matched_levels(items, complaints, judge, arms, matchers) if matched else {}
        arms_out = {}
        for arm in arms:
            sub = dec[(dec["judge"] == judge) & (dec["arm"] == arm)]
            summary = _arm_summary(sub, n_boot, seed)
            summary["scored"] = SCORED_HOW[form]
            summary["unit"] = UNIT_OF_FORM[form]
            if matched:
                comp = {i: complaints.get((judge, arm, i), []) for i in by_id}
                if any(it.spans for it in items):
                    summary["spans"] = _span_block(items, comp, strict, generous, second, strict_threshold,
                                                     n_boot, seed)
                summary["matched"] = {f"{unit}:{mname}": _level_summary(df[df["arm"] == arm], unit, n_boot, seed)
                                      for (unit, mname), df in levels.items()}
            arms_out[arm] = summary
        judges[judge] = {"arms": arms_out}
        for b in arms[1:]:
            paired += paired_rows(dec, judge, arms[0], b, n_boot, seed, unit=UNIT_OF_FORM[form], matcher=None)
            for (unit, mname), df in levels.items():
                paired += paired_rows(df, judge, arms[0], b, n_boot, seed, LEVEL_METRICS[unit], unit=unit,
                                      matcher=mname)
    spearman = correlations(dec, cov, list(judges), list(arms), n_perm=n_perm, seed=seed, alternative=alternative)
    result = {"form": form, "arms": list(arms), "tie_rule": tie, "n_boot": n_boot, "seed": seed,
              "judges": judges, "paired": paired, "spearman": spearman}
    return Analysis(dec, jsonable(result))


def jsonable(obj):
    """``obj`` with every NaN float replaced by None (result.json is strict JSON)."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return None if np.isnan(obj) else float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def provenance(items: list[WorldItem], set_spec: str | None) -> dict:
    sets = sorted({it.source_set for it in items if it.source_set})
    return {"set": set_spec, "source_sets": sets, "items": len(items),
            "answers_defective": sum(1 for it in items if it.defective),
            "item_meta_keys": sorted({k for it in items for k in it.meta})}


def context_for(items: list[WorldItem], seed: int, encoder=None, top_k: int = 5) -> ArmContext:
    return ArmContext(pool=tuple(items), seed=seed, encoder=encoder, top_k=top_k, taxonomy=taxonomy_of(items))


def judge_world(items: list[WorldItem], judges: list, arms: Sequence[str], *, form: str, votes: int,
                store_path, seed: int = 0, encoder=None, top_k: int = 5, concurrency: int | None = None,
                progress: bool = True) -> pd.DataFrame:
    """The verdict table of every judge on every (item, arm, vote)."""
    from judgeaudit.runtime.executor import judge_all

    requests = build_requests(items, list(arms), context_for(items, seed, encoder, top_k), form=form, votes=votes)
    return judge_all(judges, requests, store_path=store_path, concurrency=concurrency, progress=progress)


# --- factorial ------------------------------------------------------------------------------------------


def parse_factors(text: str) -> list[str]:
    fs = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fs if f not in FACTORS]
    if bad or not fs or len(set(fs)) != len(fs):
        raise InputError(f"factors must be distinct names from {', '.join(FACTORS)}; got {text!r}",
                         field="--factors")
    return fs


def factorial_arms(factors: Sequence[str]) -> dict[frozenset[str], str]:
    """The arm of each cell (factors outside the design stay off; the instrument picks the judge)."""
    qst = [f for f in factors if f != "instrument"]
    out = {}
    for on in product((False, True), repeat=len(qst)):
        s = {f for f, o in zip(qst, on, strict=True) if o}
        out[frozenset(s)] = cell_name("question" in s, "source" in s, "typed" in s)
    return out


def factorial_table(analysis: Analysis, factors: Sequence[str], judges: Sequence[str]) -> dict:
    """The 2^k cell table and the exact Shapley value of each factor, per metric."""
    if "instrument" in factors and len(judges) != 2:
        raise InputError("the instrument factor needs exactly two judges (off = first, on = second)",
                         field="--judge")
    arms = factorial_arms(factors)
    rows = []
    values: dict[str, dict[frozenset[str], float]] = {m: {} for m in METRICS}
    for cell in factorial_cells(list(factors)):
        judge = judges[1] if "instrument" in cell else judges[0]
        arm = arms[frozenset(cell - {"instrument"})]
        s = analysis.result["judges"][judge]["arms"][arm]
        row = {"cell": "".join(f[0].upper() + str(int(f in cell)) for f in factors), "judge": judge, "arm": arm,
               **{f: int(f in cell) for f in factors}, "n": s["n"]}
        for m in METRICS:
            v = s.get(m)
            row[m] = v
            values[m][cell] = float("nan") if v is None else float(v)
        rows.append(row)
    sh = {m: shapley(values[m], list(factors)) for m in METRICS}
    return jsonable({"factors": list(factors), "cells": rows, "shapley": sh})


def factorial_judge_ids(judges: list) -> list[str]:
    return [j.id for j in judges]

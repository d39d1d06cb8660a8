"""The world analysis (blind-spot §3–7): a verdict table of (judge, arm, item, vote) pooled and scored against
the items' gold, per judge and arm the rates with their intervals (``rates``), the paired gains of every arm
over the first (``paired``), for free-text defects the span scores under each matcher, and the Spearman
correlations of per-answer gains and false alarms with covariates (``correlate``). Pure: items and tables in,
a result dict out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgeaudit.analyses.world.correlate import DEFAULT_COVARIATES, correlations, covariate_table
from judgeaudit.analyses.world.paired import paired_rows
from judgeaudit.analyses.world.pooling import TIE_RULE, pooled_groups
from judgeaudit.analyses.world.rates import rates, recall_by_kind
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
from judgeaudit.records import WorldItem
from judgeaudit.stats.paired import METRICS

SEP = "::"
"""Between the item id and the arm of a world request id (``ITEM::ARM``)."""

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
    for (judge, rid), p in pooled_groups(verdicts, form=form, tie=tie):
        item_id, _, arm = rid.rpartition(SEP)
        it = by_id[item_id]
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



"""Scoring pooled world reports against the gold (blind-spot §3.6).

* **Labels** (item, unit, typed id) are compared directly: each judged unit (for typed ids: each
  type id an answer's labelled units name, defective when one of them is) becomes a row with
  ``gold`` and ``flagged`` (``decisions``), from which ``stats.paired`` computes recall,
  specificity, balanced accuracy and false alarms per error-free answer.
* **Spans** (free-text complaints vs marked segments) need a matcher:
  - ``strict_match``: after normalisation (``pooling.norm``: lower case, collapsed white space, end
    punctuation stripped) the complaint's quote and the marked segment share tokens; the overlap
    coefficient |Q ∩ G| / min(|Q|, |G|) (token multisets) must reach ``threshold``
    (``STRICT_THRESHOLD`` = 0.5 by default; the paper gives none);
  - a generous matcher: any callable ``(complaint, segment, item) -> bool`` (e.g. a judge asked
    whether the complaint identifies the segment);
  - ``span_scores`` gives recall (marked segments found) and precision (complaints pointing at a
    marked segment) for one matcher; ``matcher_audit`` pairs each item's complaints with another
    item's marked segments (a seeded derangement) and reports the false-match rate.
* **RAGTruth character overlap** (``char_overlap``): precision, recall and F1 over characters of
  the output, predicted = union of located complaint quotes, gold = union of marked spans. The
  released RAGTruth code (ParticleMedia/RAGTruth ``baseline/predict_and_evaluate.py``) scores
  only response-level detection with sklearn; its paper defines span-level scores as character
  overlap. Here counts are pooled over all responses (micro, the default) and the per-response
  mean (macro, over responses with a denominator) is reported beside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgeaudit.world.items import WorldItem
from judgeaudit.world.pooling import norm
from judgeaudit.world.requests import kinds

STRICT_THRESHOLD = 0.5
Matcher = Callable[[dict, str, WorldItem], bool]


def strict_match(quote: str, segment: str, threshold: float = STRICT_THRESHOLD) -> bool:
    """Whether ``quote`` overlaps ``segment`` by at least ``threshold`` (overlap coefficient on
    normalised token multisets)."""
    q, g = Counter(norm(quote).split()), Counter(norm(segment).split())
    if not q or not g:
        return False
    inter = sum((q & g).values())
    return inter / min(sum(q.values()), sum(g.values())) >= threshold


def strict_matcher(threshold: float = STRICT_THRESHOLD) -> Matcher:
    def m(complaint: dict, segment: str, item: WorldItem) -> bool:
        return strict_match(complaint.get("span") or "", segment, threshold)

    return m


def segments(item: WorldItem) -> list[str]:
    return [item.output[s.start:s.end] for s in item.spans]


@dataclass(frozen=True)
class SpanScores:
    segments: int
    found: int
    complaints: int
    on_target: int

    @property
    def recall(self) -> float:
        return self.found / self.segments if self.segments else float("nan")

    @property
    def precision(self) -> float:
        return self.on_target / self.complaints if self.complaints else float("nan")

    def to_dict(self) -> dict:
        return {"segments": self.segments, "found": self.found, "complaints": self.complaints,
                "on_target": self.on_target, "recall": self.recall, "precision": self.precision}


def match_matrix(complaints: list[dict], segs: list[str], item: WorldItem, matcher: Matcher) -> np.ndarray:
    """``(n_complaints, n_segments)`` booleans: complaint i points at segment j."""
    return np.array([[bool(matcher(c, s, item)) for s in segs] for c in complaints], dtype=bool).reshape(
        len(complaints), len(segs))


def span_scores(items: list[WorldItem], complaints: dict[str, list[dict]], matcher: Matcher) -> SpanScores:
    """Recall of marked segments and precision of complaints over ``items`` (complaints by item id;
    complaints on items with no marked segment count against precision)."""
    seg_n = found = comp_n = on = 0
    for it in items:
        segs, cs = segments(it), complaints.get(it.item_id) or []
        m = match_matrix(cs, segs, it, matcher)
        seg_n += len(segs)
        comp_n += len(cs)
        found += int(m.any(axis=0).sum()) if cs else 0
        on += int(m.any(axis=1).sum()) if segs else 0
    return SpanScores(seg_n, found, comp_n, on)


def disagreement(items: list[WorldItem], complaints: dict[str, list[dict]], a: Matcher, b: Matcher) -> dict:
    """Complaint–segment pairs the two matchers decide differently, and how many pairs were judged."""
    pairs = differ = 0
    a_only = b_only = 0
    for it in items:
        segs, cs = segments(it), complaints.get(it.item_id) or []
        ma, mb = match_matrix(cs, segs, it, a), match_matrix(cs, segs, it, b)
        pairs += ma.size
        a_only += int((ma & ~mb).sum())
        b_only += int((mb & ~ma).sum())
    differ = a_only + b_only
    return {"pairs": pairs, "differ": differ, "first_only": a_only, "second_only": b_only,
            "rate": differ / pairs if pairs else float("nan")}


def audit_pairs(items: list[WorldItem], complaints: dict[str, list[dict]],
                seed: int = 0) -> list[tuple[WorldItem, list[dict]]]:
    """The permuted control's pairing: (another item, this item's complaints) for every item with
    marked segments and complaints, along a seeded shuffled cycle (no item keeps its own segments)."""
    marked = [it for it in items if it.spans and complaints.get(it.item_id)]
    if len(marked) < 2:
        return []
    order = np.random.default_rng(seed).permutation(len(marked))
    return [(marked[order[(pos + 1) % len(order)]], complaints[marked[i].item_id]) for pos, i in enumerate(order)]


def matcher_audit(items: list[WorldItem], complaints: dict[str, list[dict]], matcher: Matcher,
                  seed: int = 0) -> dict:
    """Permuted control: each item's complaints matched against another item's marked segments
    (``audit_pairs``); the share of those complaints the matcher still credits is its false-match
    rate."""
    pairs = audit_pairs(items, complaints, seed)
    if not pairs:
        return {"complaints": 0, "false_matches": 0, "false_match_rate": float("nan")}
    n = fm = 0
    for other, cs in pairs:
        m = match_matrix(cs, segments(other), other, matcher)
        n += len(cs)
        fm += int(m.any(axis=1).sum())
    return {"complaints": n, "false_matches": fm, "false_match_rate": fm / n}


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """Character offsets of ``quote`` in ``text``: the first exact occurrence, else the first
    case-insensitive one; None when it does not occur (a quote that is not verbatim)."""
    if not quote:
        return None
    i = text.find(quote)
    if i < 0:
        i = text.lower().find(quote.lower())
    return (i, i + len(quote)) if i >= 0 else None


def _mask(n: int, spans: list[tuple[int, int]]) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    for s, e in spans:
        m[s:e] = True
    return m


def char_overlap(items: list[WorldItem], complaints: dict[str, list[dict]]) -> dict:
    """RAGTruth-style character-level precision, recall and F1 (micro over all characters, and
    macro over responses), plus the number of complaint quotes not found verbatim."""
    tp = pred = gold = 0
    unlocated = 0
    per_p, per_r = [], []
    for it in items:
        spans = []
        for c in complaints.get(it.item_id) or []:
            loc = locate(c.get("span") or "", it.output)
            if loc is None:
                unlocated += 1
            else:
                spans.append(loc)
        pm = _mask(len(it.output), spans)
        gm = _mask(len(it.output), [(s.start, s.end) for s in it.spans])
        t = int((pm & gm).sum())
        tp, pred, gold = tp + t, pred + int(pm.sum()), gold + int(gm.sum())
        if pm.sum():
            per_p.append(t / pm.sum())
        if gm.sum():
            per_r.append(t / gm.sum())
    p = tp / pred if pred else float("nan")
    r = tp / gold if gold else float("nan")
    f1 = 2 * p * r / (p + r) if pred and gold and (p + r) > 0 else (0.0 if pred and gold else float("nan"))
    mp = float(np.mean(per_p)) if per_p else float("nan")
    mr = float(np.mean(per_r)) if per_r else float("nan")
    mf = 2 * mp * mr / (mp + mr) if per_p and per_r and (mp + mr) > 0 else float("nan")
    return {"precision": p, "recall": r, "f1": f1, "macro_precision": mp, "macro_recall": mr, "macro_f1": mf,
            "overlap_chars": tp, "predicted_chars": pred, "gold_chars": gold, "unlocated_quotes": unlocated}


# --- label decisions ------------------------------------------------------------------------------------


def item_kinds(item: WorldItem) -> str:
    """The defect kinds of a whole item (comma-separated, sorted): those of its defective units and
    the labels of its gold spans."""
    found = {k for u in item.units if u.defective for k in kinds(u.kind)} | {s.label for s in item.spans if s.label}
    return ",".join(sorted(found))


def decisions(item: WorldItem, pooled, form: str) -> list[dict]:
    """The judged units of one item under one pooled report: ``unit``, ``gold``, ``flagged`` (None when
    no vote parsed or the gold is unknown is skipped by the caller), ``complaints`` and ``kinds`` (the
    unit's defect kinds, e.g. FRANK error categories; for item forms :func:`item_kinds`)."""
    rows = []
    if form == "sentences":
        for j, u in enumerate(item.units):
            if u.defective is None:
                continue
            fl = None if pooled.unit_labels is None else bool(pooled.unit_labels[j])
            rows.append({"unit": u.unit_id, "gold": bool(u.defective), "flagged": fl, "complaints": int(bool(fl)),
                         "kinds": u.kind or ""})
        return rows
    if form == "typed":
        # a typed report names types, not constraints: one unit per (answer, type id), defective when any
        # labelled unit of that type is (two constraints of one type, one kept, are one unit)
        gold_by_type: dict[str, bool] = {}
        for u in [u for u in item.units if u.kind and u.defective is not None]:
            for k in kinds(u.kind):
                gold_by_type[k] = gold_by_type.get(k, False) or bool(u.defective)
        reported = set(pooled.defect_ids or [])
        for k, gold in gold_by_type.items():
            fl = None if pooled.defect_ids is None and pooled.parsed_votes == 0 else k in reported
            rows.append({"unit": f"{item.item_id}#{k}", "gold": gold, "flagged": fl, "complaints": int(bool(fl)),
                         "kinds": k})
        return rows
    gold = item.defective
    if gold is None and item.units and all(u.defective is not None for u in item.units):
        gold = any(u.defective for u in item.units)
    if gold is None:
        return []
    if form == "score":
        fl = None if pooled.score is None else pooled.score < SCORE_CLEAN
    else:
        fl = pooled.label
    n = len(pooled.defects or []) if form == "defects" else int(bool(fl))
    return [{"unit": item.item_id, "gold": bool(gold), "flagged": fl, "complaints": n, "kinds": item_kinds(item)}]


SCORE_CLEAN = 5.0
"""On the 1–5 channel an output counts as flagged when its pooled (median) score is below 5."""


def decisions_frame(rows: list[dict]) -> pd.DataFrame:
    cols = ["judge", "arm", "item_id", "group", "unit", "gold", "flagged", "complaints", "parsed_votes",
            "votes", "ties", "kinds"]
    return pd.DataFrame(rows, columns=cols)

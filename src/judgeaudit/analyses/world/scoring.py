"""Scoring pooled world reports against the gold (blind-spot §3.6).

* **Labels** (item, unit, typed id) are compared directly: each judged unit (for typed ids: each
  labelled unit, flagged when the report names one of its type ids) becomes a row with
  ``gold`` and ``flagged`` (``decisions``), from which ``stats.paired`` computes recall,
  specificity, balanced accuracy and false alarms per error-free answer.
* **Spans** (free-text complaints vs marked segments) need a matcher:
  - ``strict_match``: the complaint's quote and the marked segment share content tokens (``content_tokens``:
    lower-cased word tokens with punctuation and English stop words dropped — scikit-learn's list, keeping
    the negations, which carry FRANK's negation errors; judgeaudit's own choice, the paper gives no
    tokenisation); the overlap coefficient |Q ∩ G| / min(|Q|, |G|) (token multisets) must reach
    ``threshold`` (``STRICT_THRESHOLD`` = 0.5 by default; the paper gives none). A segment made of
    stop words only ("Co", "in the") is compared on every word token;
  - a generous matcher: any callable ``(complaint, segment, item) -> bool`` (e.g. a judge asked
    whether the complaint identifies the segment);
  - ``span_scores`` gives recall (marked segments found) and precision (complaints pointing at a
    marked segment) for one matcher; ``matcher_audit`` pairs each item's complaints with another
    item's marked segments (a seeded derangement) and reports the false-match rate, overall and per
    (complaint, segment) pair by the segment's length in content tokens; ``agreement`` compares two
    matchers on the same real pairs (agreement, Cohen's κ, the share each credits; §3.6).
* **RAGTruth character overlap** (``char_overlap``): precision, recall and F1 over characters of
  the output, predicted = union of located complaint quotes, gold = union of marked spans. The
  released RAGTruth code (ParticleMedia/RAGTruth ``baseline/predict_and_evaluate.py``) scores
  only response-level detection with sklearn; its paper defines span-level scores as character
  overlap. Both score every response, error-free ones included (text flagged there counts against
  precision). Here counts are pooled over all responses (micro, the default) and the per-response
  mean (macro, over responses with a denominator) is reported beside it; ``char_specificity`` gives
  the share of the error-free responses' text left unflagged (§4, Fig. 4b).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from judgeaudit.analyses.world.pooling import norm
from judgeaudit.records import WorldItem, kind_ids
from judgeaudit.stats.resample import bootstrap_counts, percentile_interval

STRICT_THRESHOLD = 0.5
Matcher = Callable[[dict, str, WorldItem], bool]


NEGATIONS = frozenset({"no", "not", "nor", "never", "none", "nothing", "neither", "nobody", "nowhere", "cannot"})
_TOKEN_RE = re.compile(r"[^\W_]+")


def content_tokens(text: str) -> list[str]:
    """The word tokens of ``text`` (lower case, punctuation dropped) that are not stop words."""
    stop = stop_words()
    return [t for t in _TOKEN_RE.findall(norm(text)) if t not in stop]


@cache
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words without ``NEGATIONS`` (imported on first use)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS - NEGATIONS)


def strict_match(quote: str, segment: str, threshold: float = STRICT_THRESHOLD) -> bool:
    """Whether ``quote`` overlaps ``segment`` by at least ``threshold`` (overlap coefficient on
    content-token multisets)."""
    g = Counter(content_tokens(segment))
    q = Counter(content_tokens(quote))
    if not g:   # a segment of stop words only ("Co", "in the"): compare every word token
        q, g = Counter(_TOKEN_RE.findall(norm(quote))), Counter(_TOKEN_RE.findall(norm(segment)))
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
    """Segment recall and complaint precision under one matcher. A matcher may leave a pair undecided
    (returns None, e.g. a judge whose reply was neither yes nor no): a segment no complaint was credited
    against and at least one pair left undecided is *undecided*, never "not found", and is left out of
    the recall's denominator (likewise complaints for precision); a rate whose every unit is undecided
    is NaN with ``reason``."""

    segments: int
    found: int
    complaints: int
    on_target: int
    undecided_segments: int = 0
    undecided_complaints: int = 0

    @property
    def recall(self) -> float:
        n = self.segments - self.undecided_segments
        return self.found / n if n else float("nan")

    @property
    def precision(self) -> float:
        n = self.complaints - self.undecided_complaints
        return self.on_target / n if n else float("nan")

    def to_dict(self) -> dict:
        out = {"segments": self.segments, "found": self.found, "complaints": self.complaints,
               "on_target": self.on_target, "undecided_segments": self.undecided_segments,
               "undecided_complaints": self.undecided_complaints, "recall": self.recall,
               "precision": self.precision}
        reasons = {}
        for name, n, und in (("recall", self.segments, self.undecided_segments),
                             ("precision", self.complaints, self.undecided_complaints)):
            if n and und == n:
                what = "segments" if name == "recall" else "complaints"
                reasons[name] = f"the matcher decided none of the {n} {what}"
        if reasons:
            out["undefined"] = reasons
        return out


def match_matrix(complaints: list[dict], segs: list[str], item: WorldItem, matcher: Matcher) -> np.ndarray:
    """``(n_complaints, n_segments)`` floats: 1 when complaint i points at segment j, 0 when not, NaN when
    the matcher left the pair undecided (returned None)."""
    vals = [[matcher(c, s, item) for s in segs] for c in complaints]
    return np.array([[np.nan if v is None else float(bool(v)) for v in row] for row in vals],
                    dtype=float).reshape(len(complaints), len(segs))


def credited(m: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(credited, undecided) along ``axis`` of a match matrix: credited when some pair matched, undecided
    when none matched and some pair was left undecided (axis 0: per segment; axis 1: per complaint)."""
    yes = (m == 1).any(axis=axis)
    return yes, ~yes & np.isnan(m).any(axis=axis)


def span_scores(items: list[WorldItem], complaints: dict[str, list[dict]], matcher: Matcher) -> SpanScores:
    """Recall of marked segments and precision of complaints over ``items`` (complaints by item id;
    complaints on items with no marked segment count against precision)."""
    seg_n = found = comp_n = on = und_s = und_c = 0
    for it in items:
        segs, cs = segments(it), complaints.get(it.item_id) or []
        m = match_matrix(cs, segs, it, matcher)
        seg_n += len(segs)
        comp_n += len(cs)
        f, u = credited(m, 0)
        o, uc = credited(m, 1)
        found, und_s = found + int(f.sum()), und_s + int(u.sum())
        on, und_c = on + int(o.sum()), und_c + int(uc.sum())
    return SpanScores(seg_n, found, comp_n, on, und_s, und_c)


def disagreement(items: list[WorldItem], complaints: dict[str, list[dict]], a: Matcher, b: Matcher) -> dict:
    """Complaint–segment pairs the two matchers decide differently (among the pairs both decided), how
    many pairs were judged and how many either left undecided."""
    pairs = undecided = a_only = b_only = 0
    for it in items:
        segs, cs = segments(it), complaints.get(it.item_id) or []
        ma, mb = match_matrix(cs, segs, it, a), match_matrix(cs, segs, it, b)
        pairs += ma.size
        both = ~np.isnan(ma) & ~np.isnan(mb)
        undecided += int((~both).sum())
        a_only += int((both & (ma == 1) & (mb == 0)).sum())
        b_only += int((both & (mb == 1) & (ma == 0)).sum())
    differ = a_only + b_only
    decided = pairs - undecided
    return {"pairs": pairs, "differ": differ, "first_only": a_only, "second_only": b_only, "undecided": undecided,
            "rate": differ / decided if decided else float("nan")}


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
    rate (complaints it left undecided are counted apart)."""
    pairs = audit_pairs(items, complaints, seed)
    if not pairs:
        return {"complaints": 0, "false_matches": 0, "undecided": 0, "false_match_rate": float("nan"),
                "by_segment_length": {}}
    n = fm = und = 0
    by_len: dict[str, list[int]] = {}
    for other, cs in pairs:
        segs = segments(other)
        m = match_matrix(cs, segs, other, matcher)
        yes, u = credited(m, 1)
        n += len(cs)
        fm += int(yes.sum())
        und += int(u.sum())
        for j, seg in enumerate(segs):
            col = m[:, j]
            cell = by_len.setdefault(length_bin(len(content_tokens(seg))), [0, 0])
            cell[0] += int((~np.isnan(col)).sum())
            cell[1] += int((col == 1).sum())
    return {"complaints": n, "false_matches": fm, "undecided": und,
            "false_match_rate": fm / (n - und) if n > und else float("nan"),
            "by_segment_length": {k: {"pairs": p, "false_matches": f, "rate": f / p if p else float("nan")}
                                  for k, (p, f) in sorted(by_len.items(), key=lambda kv: LENGTH_BINS.index(kv[0]))}}


LENGTH_BINS = ("0", "1", "2", "3-5", "6-10", ">10")


def length_bin(n: int) -> str:
    """The segment-length bin of ``n`` content tokens (``LENGTH_BINS``)."""
    return "0" if n == 0 else "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 else "6-10" if n <= 10 else ">10"


def agreement(items: list[WorldItem], complaints: dict[str, list[dict]], first: Matcher, second: Matcher) -> dict:
    """Two matchers on the same real (complaint, marked segment) pairs (the §3.6 re-match): the share
    of the pairs both decided on which they agree, Cohen's κ, and the share each credits."""
    from judgeaudit.stats.agreement import cohen_kappa

    a, b = [], []
    pairs = 0
    for it in items:
        segs, cs = segments(it), complaints.get(it.item_id) or []
        ma, mb = match_matrix(cs, segs, it, first), match_matrix(cs, segs, it, second)
        pairs += ma.size
        both = ~np.isnan(ma) & ~np.isnan(mb)
        a += list(ma[both] == 1)
        b += list(mb[both] == 1)
    x, y = np.array(a, dtype=bool), np.array(b, dtype=bool)
    if not len(x):
        return {"pairs": pairs, "decided": 0, "agreement": float("nan"), "kappa": float("nan"),
                "first_credits": float("nan"), "second_credits": float("nan")}
    return {"pairs": pairs, "decided": int(len(x)), "agreement": float((x == y).mean()),
            "kappa": cohen_kappa(x.astype(int), y.astype(int)), "first_credits": float(x.mean()),
            "second_credits": float(y.mean())}


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


def error_free(item: WorldItem) -> bool:
    """An answer with no marked segment and no gold defect (RAGTruth's responses with empty labels)."""
    return not item.spans and not item.defective


def char_specificity(items: list[WorldItem], complaints: dict[str, list[dict]], *, n_boot: int = 2000,
                     seed: int = 0) -> dict:
    """Character-level specificity on the error-free answers (blind-spot §4, Fig. 4b): the share of their
    characters no located complaint quote covers. ``specificity`` pools characters over the error-free
    answers (1 − flagged characters / characters) with a percentile bootstrap over answers;
    ``mean_flagged_share`` is the mean over answers of the share of each answer's text flagged
    (judgeaudit's own companion figure; the paper quotes "73–80% of the text of an error-free answer"
    without saying which)."""
    clean = [it for it in items if error_free(it) and it.output]
    if not clean:
        return {"answers": 0, "chars": 0, "flagged_chars": 0, "specificity": float("nan"),
                "ci": [float("nan"), float("nan")], "mean_flagged_share": float("nan")}
    flagged = np.array([_mask(len(it.output), [loc for c in complaints.get(it.item_id) or []
                                               if (loc := locate(c.get("span") or "", it.output))]).sum()
                        for it in clean], dtype=float)
    chars = np.array([len(it.output) for it in clean], dtype=float)
    spec = 1.0 - flagged.sum() / chars.sum()
    lo = hi = float("nan")
    if n_boot > 0:
        w = bootstrap_counts(len(clean), n_boot, seed)
        lo, hi = percentile_interval(1.0 - (w @ flagged) / (w @ chars))
    return {"answers": len(clean), "chars": int(chars.sum()), "flagged_chars": int(flagged.sum()),
            "specificity": float(spec), "ci": [lo, hi], "mean_flagged_share": float(np.mean(flagged / chars))}


def char_overlap(items: list[WorldItem], complaints: dict[str, list[dict]]) -> dict:
    """RAGTruth-style character-level precision, recall and F1 (micro over all characters, and
    macro over responses), plus the number of complaint quotes not found verbatim. ``items`` are all
    the scored responses, error-free ones included (RAGTruth's released evaluation scores every
    response): text flagged on an error-free response counts against precision."""
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
    found = {k for u in item.units if u.defective for k in kind_ids(u.kind)} | {s.label for s in item.spans if s.label}
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
        # one unit per labelled constraint (IFEval's 834, as the other forms count them), flagged when the report
        # names one of its type ids: a typed report names types, not constraints, so of two constraints of one
        # type, one kept, both are flagged when the type is named (the form's resolution; never merged away)
        reported = set(pooled.defect_ids or [])
        for u in item.units:
            if u.defective is None or not kind_ids(u.kind):
                continue
            fl = None if pooled.defect_ids is None and pooled.parsed_votes == 0 else bool(reported & set(kind_ids(u.kind)))
            rows.append({"unit": u.unit_id, "gold": bool(u.defective), "flagged": fl, "complaints": int(bool(fl)),
                         "kinds": u.kind or ""})
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

"""Free-text reports scored per marked segment and per sentence, through a matcher (blind-spot §3.6).

A ``defects`` report is a list of complaints. The paper's unit is the marked segment ("It is the
unit of the paired tests"): a segment is *found* when a matcher credits one of the answer's pooled
complaints against it. On corpora whose gold is per sentence (FRANK, §3.6, Table 7) the complaints
are mapped to sentences by the same matcher: a sentence is *flagged* when a complaint is credited
against its text, and scored against the sentence's gold label (recall, specificity, balanced
accuracy, false positives per error-free sentence).

Both give decision rows in the shape of ``scoring.decisions_frame`` (``gold``, ``flagged``,
``complaints``; ``flagged`` is None when the matcher left every pair of that unit undecided and
credited none), so the rates, bootstraps over answers and paired tests of ``world.run`` apply as
they do to labels.
"""

from __future__ import annotations

from judgeaudit.analyses.world.scoring import Matcher, credited, item_kinds, match_matrix, segments
from judgeaudit.records import WorldItem


def sentence_units(item: WorldItem) -> list:
    """The units located in the output (sentences or claims with offsets) that carry a gold label."""
    return [u for u in item.units if u.start is not None and u.defective is not None]


def segment_rows(items: list[WorldItem], complaints: dict[str, list[dict]], matcher: Matcher) -> list[dict]:
    """One row per marked segment: ``flagged`` = some complaint on its answer credited against it."""
    rows = []
    for it in items:
        segs = segments(it)
        if not segs:
            continue
        cs = complaints.get(it.item_id) or []
        found, und = credited(match_matrix(cs, segs, it, matcher), 0)
        for s, f, u in zip(it.spans, found, und, strict=True):
            rows.append({"item_id": it.item_id, "group": it.group or it.item_id, "unit": f"{it.item_id}@{s.start}",
                         "gold": True, "flagged": None if u else bool(f), "complaints": int(bool(f)),
                         "kinds": s.label or item_kinds(it)})
    return rows


def sentence_rows(items: list[WorldItem], complaints: dict[str, list[dict]], matcher: Matcher) -> list[dict]:
    """One row per labelled sentence: ``flagged`` = some complaint credited against its text;
    ``complaints`` = how many were."""
    rows = []
    for it in items:
        units = sentence_units(it)
        if not units:
            continue
        cs = complaints.get(it.item_id) or []
        m = match_matrix(cs, [u.text for u in units], it, matcher)
        found, und = credited(m, 0)
        for j, u in enumerate(units):
            rows.append({"item_id": it.item_id, "group": it.group or it.item_id, "unit": u.unit_id,
                         "gold": bool(u.defective), "flagged": None if und[j] else bool(found[j]),
                         "complaints": int((m[:, j] == 1).sum()), "kinds": u.kind or ""})
    return rows

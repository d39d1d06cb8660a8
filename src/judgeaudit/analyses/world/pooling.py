"""Pooling the K votes of one (judge, arm, item) into one report (blind-spot §3.4).

* free-text defects: the **union** (a defect raised in any vote counts), deduplicated by
  (normalised quote, normalised reason): two complaints about one quote for different reasons stay
  two complaints, and complaints with an empty quote are never merged with each other;
* labels (item label, each unit label, each typed id): the **majority of the votes that parsed**;
  a tie (equal numbers of true and false among the parsed votes) is reported (``ties``) and
  resolved by ``TIE_RULE``: a tie counts as *defective* (the judge raised the defect in half of its
  parsed votes; the conservative reading for an auditor, documented as a parameter);
* the 1–5 score: the median of the parsed votes.
A (judge, arm, item) with no parsed vote has no pooled report (``parsed_votes = 0``; its fields are
None) and is counted, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

TIE_RULE = "defective"


def norm(text: str) -> str:
    """Lower-case, collapse white space, strip punctuation at the ends (the matchers' normaliser)."""
    return re.sub(r"\s+", " ", text.lower()).strip(" \t\n.,;:!?\"'`()[]")


def majority(values: list[bool], tie: str = TIE_RULE) -> tuple[bool | None, bool]:
    """(majority of ``values``, whether it was a tie); (None, False) when empty."""
    if not values:
        return None, False
    t = sum(values)
    f = len(values) - t
    if t == f:
        return tie == "defective", True
    return t > f, False


@dataclass(frozen=True)
class Pooled:
    parsed_votes: int
    votes: int
    label: bool | None
    unit_labels: list[bool] | None
    defect_ids: list[str] | None
    score: float | None
    defects: list[dict] | None
    ties: int


def pool_votes(rows: pd.DataFrame, *, form: str = "label", tie: str = TIE_RULE) -> Pooled:
    """Pool the verdict rows of one (judge, arm, item); a ``defects`` report is flagged when the
    union of its votes' defects is non-empty."""
    return pool_records(rows.to_dict("records"), form=form, tie=tie)


def _missing(x: object) -> bool:
    """None or a missing scalar (NaN, NaT, pd.NA), as ``pd.isna`` reads a table's cell."""
    return x is None or (np.isscalar(x) and bool(pd.isna(x)))


def pool_records(rows: Sequence[Mapping[str, Any]], *, form: str = "label", tie: str = TIE_RULE) -> Pooled:
    """``pool_votes`` of the verdict rows as records (column → value): a vote is usable when its ``parse_ok``
    is true and its ``error`` missing. The records of a whole verdict table are made once
    (``DataFrame.to_dict``), so pooling every (judge, arm, item) costs time linear in the table."""
    ok = [r for r in rows if bool(r["parse_ok"]) and _missing(r["error"])]
    col = {c: [r[c] for r in ok] for c in ("label", "unit_labels", "defect_ids", "score", "defects")}
    n = len(ok)
    ties = 0
    label, t = (None, False) if form == "defects" else majority(
        [bool(x) for x in col["label"] if x is not None and not pd.isna(x)], tie)
    ties += t
    unit_labels = None
    ul = [list(x) for x in col["unit_labels"] if x is not None and not (np.isscalar(x) and pd.isna(x))]
    if ul:
        unit_labels = []
        for j in range(len(ul[0])):
            v, t = majority([bool(u[j]) for u in ul], tie)
            unit_labels.append(bool(v))
            ties += t
    defect_ids = None
    ids = [list(x) for x in col["defect_ids"] if x is not None and not (np.isscalar(x) and pd.isna(x))]
    if ids:
        defect_ids = []
        for i in sorted({i for x in ids for i in x}):
            v, t = majority([i in x for x in ids], tie)
            ties += t
            if v:
                defect_ids.append(i)
    scores = [float(s) for s in col["score"] if s is not None and not pd.isna(s)]
    score = float(np.median(scores)) if scores else None
    defects = None
    ds = [list(x) for x in col["defects"] if x is not None and not (np.isscalar(x) and pd.isna(x))]
    if form == "defects" and n:
        seen: dict[tuple[str, str], dict] = {}
        unquoted: list[dict] = []
        for vote in ds:
            for d in vote:
                d = dict(d)
                quote = norm(d.get("span") or "")
                if quote:
                    seen.setdefault((quote, norm(d.get("reason") or "")), d)
                else:
                    unquoted.append(d)
        defects = list(seen.values()) + unquoted
        label = bool(defects)
    return Pooled(parsed_votes=n, votes=len(rows), label=label, unit_labels=unit_labels, defect_ids=defect_ids,
                  score=score, defects=defects, ties=ties)


def pooled_groups(verdicts: pd.DataFrame, *, form: str = "label",
                  tie: str = TIE_RULE) -> Iterator[tuple[tuple[str, str], Pooled]]:
    """((judge id, request id), pooled report) of every (judge, request) of a verdict table, in the order the
    pairs first appear (as ``DataFrame.groupby(sort=False)``), read in one pass over its rows."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in verdicts.to_dict("records"):
        groups.setdefault((r["judge_id"], r["request_id"]), []).append(r)
    for key, rows in groups.items():
        yield key, pool_records(rows, form=form, tie=tie)

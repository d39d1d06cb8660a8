"""Anchor tables from verdicts the judges already gave (``migration.migrate``'s input).

``two_order_anchors``: two pairwise judges' two-order tables (``pair_id``, ``choice_ab``, ``choice_ba`` in the
original frame, as the JudgeBench and LLMBar adapters give them): one anchor per (pair, order), the pair its
cluster; the old judge's verdict on the other order of the same pair is its re-grade, so the ceiling is the old
judge's agreement with itself across the two presentation orders."""

from __future__ import annotations

import pandas as pd

CHOICE = {"A": 1.0, "tie": 0.5, "B": 0.0}


def two_order_anchors(old: pd.DataFrame, new: pd.DataFrame, labels: pd.Series | None = None) -> pd.DataFrame:
    """The anchor table of two judges' two-order tables on the pairs both hold (``labels``: by pair id, A/B)."""
    o = old.set_index("pair_id")
    n = new.set_index("pair_id")
    pairs = [p for p in o.index if p in n.index]
    rows = []
    for order, other in (("ab", "ba"), ("ba", "ab")):
        for p in pairs:
            rows.append({"anchor_id": f"{p}#{order}", "cluster": str(p),
                         "old": CHOICE.get(o.at[p, f"choice_{order}"]),
                         "new": CHOICE.get(n.at[p, f"choice_{order}"]),
                         "old_regrade": CHOICE.get(o.at[p, f"choice_{other}"]),
                         "label": CHOICE.get(labels.get(p)) if labels is not None else None})
    t = pd.DataFrame(rows)
    for c in ("old", "new", "old_regrade", "label"):
        t[c] = pd.to_numeric(t[c], errors="coerce")
    return t if labels is not None else t.drop(columns="label")

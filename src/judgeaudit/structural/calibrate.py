"""Choosing the graph's thresholds on a recorded development split, and their sensitivity.

* :func:`dev_split` — a seeded share of the *groups* (e.g. HaluEval questions: a question's right and
  hallucinated answers stay together), taken from the sorted group ids with ``numpy``'s
  ``default_rng(seed).permutation``; the rest is the report set. Defaults are chosen on the
  development groups only (``graph.DEV_SPLIT`` records corpus, share, seed and backend).
* :func:`halueval_qa_items` — HaluEval QA as (group, output, world, defective) rows: each question's
  right answer (clean) and its hallucinated answer (defective), the knowledge as the world.
* :func:`sensitivity` — the item-level metric over a grid of ``tau_s`` × ``tau_c``, from graphs built
  once (edges re-derived from stored probabilities: no new NLI calls).
* :func:`balanced_accuracy` — ½(share of defective items flagged + share of clean items not flagged).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.structural.certificates import defects
from judgeaudit.structural.graph import DEV_SPLIT, Graph, GraphParams, build_graph
from judgeaudit.structural.nli import NLIBackend

GRID = tuple(round(x, 2) for x in np.arange(0.1, 0.91, 0.1))


def dev_split(groups: Iterable[str], share: float = DEV_SPLIT["share"], seed: int = DEV_SPLIT["seed"]) -> set[str]:
    """The development groups: ``round(share · n)`` of the sorted unique groups, seeded."""
    uniq = sorted(set(groups))
    k = int(round(share * len(uniq)))
    order = np.random.default_rng(seed).permutation(len(uniq))[:k]
    return {uniq[i] for i in order}


def halueval_qa_items(root: str | Path, strategy: str = "one-turn") -> pd.DataFrame:
    """Columns ``group, output, world, defective``: two rows per HaluEval QA question."""
    from judgeaudit.datasets.halueval import load_pairs

    pairs = load_pairs(root, strategy=strategy, part="qa")
    rows = []
    for r in pairs.to_dict("records"):
        gold, fake = (r["response_a"], r["response_b"]) if r["label"] == "A" else (r["response_b"], r["response_a"])
        world = (r["meta"] or {}).get("knowledge")
        rows.append({"group": r["group"], "output": gold, "world": world, "defective": False})
        rows.append({"group": r["group"], "output": fake, "world": world, "defective": True})
    return pd.DataFrame(rows, columns=["group", "output", "world", "defective"])


def balanced_accuracy(flagged: Sequence[bool], defective: Sequence[bool]) -> float:
    f, d = np.asarray(flagged, bool), np.asarray(defective, bool)
    if d.all() or not d.any():
        raise ValueError("balanced accuracy needs both defective and clean items")
    return 0.5 * (f[d].mean() + (~f[~d]).mean())


def build_graphs(items: pd.DataFrame, backend: NLIBackend, params: GraphParams | None = None) -> list[Graph]:
    return [build_graph(w, o, backend, params) for w, o in zip(items["world"], items["output"], strict=True)]


def sensitivity(graphs: Sequence[Graph], defective: Sequence[bool], tau_s: Sequence[float] = GRID,
                tau_c: Sequence[float] = GRID) -> pd.DataFrame:
    """``tau_s, tau_c, balanced_accuracy, flag_rate`` for every grid point (item flagged = any defect)."""
    rows = []
    for ts in tau_s:
        for tc in tau_c:
            flagged = [bool(defects(g.with_params(tau_s=float(ts), tau_c=float(tc)))) for g in graphs]
            rows.append({"tau_s": float(ts), "tau_c": float(tc),
                         "balanced_accuracy": balanced_accuracy(flagged, defective),
                         "flag_rate": float(np.mean(flagged))})
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame) -> tuple[float, float]:
    """The grid point with the highest balanced accuracy (ties: nearest to (0.5, 0.5), then smallest)."""
    t = table.assign(dist=(table["tau_s"] - 0.5).abs() + (table["tau_c"] - 0.5).abs())
    best = t.sort_values(["balanced_accuracy", "dist", "tau_s", "tau_c"], ascending=[False, True, True, True]).iloc[0]
    return float(best["tau_s"]), float(best["tau_c"])

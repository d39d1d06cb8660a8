"""Choosing the graph's thresholds on a recorded development split, and their sensitivity.

* :func:`in_dev` / :func:`dev_split` — a group (e.g. a HaluEval question, ``halueval/qa/<line>``: a
  question's right and hallucinated answers stay together) is in the development split when
  ``sha256("<seed>:<group>")`` read as a fraction of 2^64 (first 16 hex digits) is below ``share``:
  decided per group, so a world run over any slice knows which of its items were development items.
  The rest is the report set. Defaults are chosen on the development groups only (``graph.DEV_SPLIT``
  records corpus, share, seed, rule and backend); :func:`is_dev_item` marks a world item of that split.
* :func:`halueval_qa_items` — HaluEval QA as (group, output, world, defective) rows from the world
  adapter (:func:`~judgeaudit.datasets.world_corpora.load_halueval`): each question's right answer
  (clean) and its hallucinated answer (defective), the knowledge as the world.
* :func:`calibration_record` — what a run records about a structural judge's thresholds: the values
  used, the defaults, the development split and the defaults' sensitivity there (``graph.DEV_RESULT``).
* :func:`sensitivity` — the item-level metric over a grid of ``tau_s`` × ``tau_c``, from graphs built
  once (edges re-derived from stored probabilities: no new NLI calls).
* :func:`balanced_accuracy` — ½(share of defective items flagged + share of clean items not flagged).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.structural.certificates import defects
from judgeaudit.structural.graph import DEV_RESULT, DEV_SPLIT, Graph, GraphParams, build_graph
from judgeaudit.structural.nli import NLIBackend

GRID = tuple(round(x, 2) for x in np.arange(0.1, 0.91, 0.1))
TAU_S_GRID = tuple(round(x, 2) for x in np.arange(0.05, 1.001, 0.05))
TAU_C_GRID = tuple(round(x, 2) for x in np.arange(0.1, 1.001, 0.1))
"""The grid the recorded defaults were chosen on (``benchmarks/structural_calibrate.py``)."""


def in_dev(group: str, share: float = DEV_SPLIT["share"], seed: int = DEV_SPLIT["seed"]) -> bool:
    """Whether ``group`` is a development group (the hash rule of the module docstring)."""
    h = int(hashlib.sha256(f"{seed}:{group}".encode()).hexdigest()[:16], 16)
    return h / 16**16 < share


def dev_split(groups: Iterable[str], share: float = DEV_SPLIT["share"], seed: int = DEV_SPLIT["seed"]) -> set[str]:
    """The development groups among ``groups``."""
    return {g for g in set(groups) if in_dev(g, share, seed)}


def is_dev_item(item: Any) -> bool:
    """Whether a world item was development data for the recorded defaults (its corpus is the split's
    and its group is a development group)."""
    return item.source_set == DEV_SPLIT["source_set"] and in_dev(item.group or item.item_id)


def halueval_qa_items(root: str | Path, strategy: str = "one-turn") -> pd.DataFrame:
    """Columns ``group, output, world, defective``: two rows per HaluEval QA question (world items'
    group keys, ``halueval/qa/<line>``)."""
    from judgeaudit.datasets.world_corpora import load_halueval

    items, _ = load_halueval(root, part="qa", strategy=strategy)
    return pd.DataFrame([{"group": it.group, "output": it.output, "world": it.world, "defective": bool(it.defective)}
                         for it in items], columns=["group", "output", "world", "defective"])


def calibration_record(params: GraphParams, weak_backend: bool) -> dict[str, Any]:
    """The thresholds a structural judge ran with, whether its backend is weak, the documented
    defaults, whether they are the defaults, the development split they were chosen on (with its
    backend's weakness) and their sensitivity there."""
    d = GraphParams()
    used = {"tau_s": params.tau_s, "tau_c": params.tau_c, "top_k": params.top_k, "specificity": params.specificity}
    return {"parameters": used, "weak_backend": weak_backend, "defaults": {"tau_s": d.tau_s, "tau_c": d.tau_c},
            "at_defaults": (params.tau_s, params.tau_c) == (d.tau_s, d.tau_c),
            "dev_split": dict(DEV_SPLIT), "dev_result": DEV_RESULT}


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


def dev_result(table: pd.DataFrame, n_groups: int, n_answers: int) -> dict[str, Any]:
    """The record of a calibration (the form of ``graph.DEV_RESULT``): the chosen point, its balanced
    accuracy and flag rate, the grid's range, and the sensitivity lines through the chosen point
    (balanced accuracy along ``tau_s`` at the chosen ``tau_c`` and along ``tau_c`` at the chosen ``tau_s``)."""
    ts, tc = choose(table)
    at = table[(table.tau_s == ts) & (table.tau_c == tc)].iloc[0]
    r3 = lambda x: round(float(x), 3)  # noqa: E731
    return {"n_groups": n_groups, "n_answers": n_answers, "metric": "balanced_accuracy (item flagged = any defect)",
            "grid": {"tau_s": [min(table.tau_s), max(table.tau_s), len(set(table.tau_s))],
                     "tau_c": [min(table.tau_c), max(table.tau_c), len(set(table.tau_c))]},
            "chosen": {"tau_s": ts, "tau_c": tc}, "balanced_accuracy": r3(at.balanced_accuracy),
            "flag_rate": r3(at.flag_rate),
            "grid_range": [r3(table.balanced_accuracy.min()), r3(table.balanced_accuracy.max())],
            "along_tau_s": {str(r.tau_s): r3(r.balanced_accuracy) for r in table[table.tau_c == tc].itertuples()},
            "along_tau_c": {str(r.tau_c): r3(r.balanced_accuracy) for r in table[table.tau_s == ts].itertuples()}}

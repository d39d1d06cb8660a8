"""Paired gains of one arm over another on the units both scored (blind-spot §4–5): the gain with a bootstrap
interval over source items, and per metric the exact McNemar test on the paired 2×2 table of its stratum."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgeaudit.analyses.world.rates import resampled
from judgeaudit.stats.paired import METRICS, cluster_counts, mcnemar_paired, metric, paired_gains


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
    for name, (g, lo, hi) in paired_gains(ca, cb, metrics, n_boot=n_boot, seed=seed).items():   # one resample
        rows.append({"judge": judge, "a": a, "b": b, "metric": name, **tags, "n": int(len(m)),
                     "bootstrap": {"unit": boot["unit"], "n": boot["n"].get(name)},
                     "a_value": float(metric(ca.sum(0), name)), "b_value": float(metric(cb.sum(0), name)),
                     "gain": g, "ci": [lo, hi], "mcnemar": stratum_mcnemar(gold, fa, fb, STRATUM.get(name))})
    return rows



"""Detection rates of one (judge, arm) over its scored units, with their intervals (blind-spot §3.5–3.6):
recall, specificity, false alarms per clean unit, precision and balanced accuracy, each with a bootstrap
interval over source items (``BOOTSTRAP_UNIT``) and Wilson intervals for the two proportions; recall by
defect kind."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgeaudit.records import kind_ids as kinds
from judgeaudit.stats.paired import METRICS, boot_metric, boot_metrics, cluster_counts
from judgeaudit.stats.tests import wilson_interval


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
    for m, (v, lo, hi) in boot_metrics(counts, metrics, n_boot=n_boot, seed=seed).items():   # one resample
        out[m] = None if np.isnan(v) else v
        ci[m] = [lo, hi]
    tot = counts.sum(axis=0)
    ci["recall_wilson"] = list(wilson_interval(int(tot[0]), int(tot[0] + tot[1])))
    if "specificity" in metrics:
        ci["specificity_wilson"] = list(wilson_interval(int(tot[2]), int(tot[2] + tot[3])))
    out["ci"] = ci
    return out



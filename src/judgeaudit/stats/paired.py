"""Detection rates and paired gains from per-cluster confusion counts, with cluster bootstraps.

A judged unit (an answer, a sentence, a constraint) is gold-defective or not and flagged or not.
Its cluster is the answer or source item it belongs to: the bootstrap resamples clusters, never
units (blind-spot §3.7: "bootstrap over answers, not segments"), so the sentences of one summary
or the constraints of one response stay together. Every metric is a ratio of summed counts:

* recall = TP / (TP + FN); specificity = TN / (TN + FP);
* balanced accuracy = ½ (recall + specificity); precision = TP / (TP + FP) (flagged units that are
  defective);
* false alarms per error-free answer = complaints on error-free units / error-free units (a label
  judge raises one complaint per flagged unit; a free-text judge may raise several).

A difference between two arms (B − A: two judges, two runs) is read on one design (``differences``):
**paired** when the arms' rows are the same units (rows aligned), one resample of units for both arms,
so between-unit variance (easy vs hard items) cancels; **unpaired** when they share none, each arm
resampled on its own. Its interval is the percentile interval of the resampled differences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

import numpy as np

from judgeaudit.stats.resample import bootstrap_counts, percentile_interval
from judgeaudit.stats.tests import mcnemar_exact

#: A quantity of summed per-unit counts (last axis), vectorised over any leading (resample) axes.
Stat = Callable[[np.ndarray], np.ndarray]

FIELDS = ("tp", "fn", "tn", "fp", "fa")
METRICS = ("recall", "specificity", "balanced_accuracy", "false_alarms_per_clean", "precision")


def cluster_counts(gold: np.ndarray, flagged: np.ndarray, clusters: np.ndarray,
                   complaints: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(cluster labels, ``(n_clusters, 5)`` counts of tp, fn, tn, fp and complaints on clean units)."""
    gold = np.asarray(gold, dtype=bool)
    flagged = np.asarray(flagged, dtype=bool)
    complaints = flagged.astype(float) if complaints is None else np.asarray(complaints, dtype=float)
    labels, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    cols = np.stack([gold & flagged, gold & ~flagged, ~gold & ~flagged, ~gold & flagged,
                     np.where(gold, 0.0, complaints)], axis=1).astype(float)
    out = np.zeros((len(labels), len(FIELDS)))
    np.add.at(out, codes, cols)
    return labels, out


def metric(counts: np.ndarray, name: str) -> np.ndarray:
    """``name`` from summed counts (last axis = ``FIELDS``); NaN where its denominator is 0."""
    tp, fn, tn, fp, fa = np.moveaxis(np.asarray(counts, dtype=float), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rec = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        spec = np.where(tn + fp > 0, tn / (tn + fp), np.nan)
        if name == "recall":
            return rec
        if name == "specificity":
            return spec
        if name == "balanced_accuracy":
            return (rec + spec) / 2
        if name == "false_alarms_per_clean":
            return np.where(tn + fp > 0, fa / (tn + fp), np.nan)
        if name == "precision":
            return np.where(tp + fp > 0, tp / (tp + fp), np.nan)
    raise ValueError(f"unknown metric {name!r}; one of {', '.join(METRICS)}")


def boot_metric(counts: np.ndarray, name: str, *, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> tuple[float, float, float]:
    """(value, lo, hi): the metric on all clusters and its percentile cluster-bootstrap interval."""
    value = float(metric(counts.sum(axis=0), name))
    if n_boot <= 0 or len(counts) == 0:
        return value, float("nan"), float("nan")
    w = bootstrap_counts(len(counts), n_boot, seed)
    lo, hi = percentile_interval(metric(w @ counts, name), level)
    return value, lo, hi


def arm_resamples(n_a: int, n_b: int, *, paired: bool, n_boot: int = 2000,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``(n_boot, n)`` unit multiplicities of arms A and B: paired (the same ``n`` units, rows aligned),
    one matrix for both; unpaired, each arm its own (seeds ``seed`` and ``seed + 1``)."""
    if paired:
        if n_a != n_b:
            raise ValueError(f"paired arms need the same units, got {n_a} and {n_b}")
        w = bootstrap_counts(n_a, n_boot, seed)
        return w, w
    return bootstrap_counts(n_a, n_boot, seed), bootstrap_counts(n_b, n_boot, seed + 1)


def differences(stats: Mapping[str, tuple[Stat, Stat]], counts_a: np.ndarray, counts_b: np.ndarray, *,
                paired: bool = True, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> dict[str, tuple[float, float, tuple[float, float]]]:
    """For every quantity ``q`` with its statistics ``(f_a, f_b)`` of summed counts: ``(A, B, (lo, hi))``,
    A = f_a(Σ counts_a), B = f_b(Σ counts_b) and the percentile interval of B − A over resamples of the
    units (``arm_resamples``: paired, rows aligned, one resample for both arms; unpaired, independent).
    NaN bounds without resamples (``n_boot`` ≤ 0) or units."""
    counts_a, counts_b = np.asarray(counts_a, dtype=float), np.asarray(counts_b, dtype=float)
    empty = n_boot <= 0 or not len(counts_a) or not len(counts_b)
    wa, wb = (None, None) if empty else arm_resamples(len(counts_a), len(counts_b), paired=paired,
                                                      n_boot=n_boot, seed=seed)
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for q, (fa, fb) in stats.items():
            va, vb = float(fa(counts_a.sum(axis=0))), float(fb(counts_b.sum(axis=0)))
            ci = (float("nan"), float("nan")) if empty else percentile_interval(fb(wb @ counts_b) - fa(wa @ counts_a),
                                                                                 level)
            out[q] = (va, vb, ci)
    return out


def paired_gain(counts_a: np.ndarray, counts_b: np.ndarray, name: str, *, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> tuple[float, float, float]:
    """(gain b − a, lo, hi) of metric ``name`` over the same clusters (rows aligned), one resample for both
    arms (``differences``, paired)."""
    f = partial(metric, name=name)
    a, b, (lo, hi) = differences({name: (f, f)}, counts_a, counts_b, n_boot=n_boot, seed=seed, level=level)[name]
    return b - a, lo, hi


def boot_metrics(counts: np.ndarray, names: Sequence[str], *, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """``boot_metric`` of every metric in ``names`` on one resample of the clusters: the same numbers, with the
    ``(n_boot, clusters)`` multiplicities drawn and multiplied once for all of them."""
    totals = counts.sum(axis=0)
    if n_boot <= 0 or len(counts) == 0:
        return {m: (float(metric(totals, m)), float("nan"), float("nan")) for m in names}
    resampled = bootstrap_counts(len(counts), n_boot, seed) @ counts
    return {m: (float(metric(totals, m)), *percentile_interval(metric(resampled, m), level)) for m in names}


def paired_gains(counts_a: np.ndarray, counts_b: np.ndarray, names: Sequence[str], *, n_boot: int = 2000,
                 seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """``paired_gain`` of every metric in ``names``: the same numbers, one resample drawn once for all."""
    stats = {m: (partial(metric, name=m),) * 2 for m in names}
    got = differences(stats, counts_a, counts_b, n_boot=n_boot, seed=seed, level=level)
    return {m: (b - a, lo, hi) for m, (a, b, (lo, hi)) in got.items()}


def mcnemar_paired(correct_a: np.ndarray, correct_b: np.ndarray) -> dict:
    """The paired 2×2 table's discordant cells and the exact McNemar p: ``b`` = units a got wrong and
    b got right, ``c`` = units a got right and b got wrong."""
    a = np.asarray(correct_a, dtype=bool)
    bb = np.asarray(correct_b, dtype=bool)
    b = int(np.sum(~a & bb))
    c = int(np.sum(a & ~bb))
    return {"b": b, "c": c, "p": mcnemar_exact(b, c), "log10_p": log10_mcnemar(b, c)}


def log10_mcnemar(b: int, c: int) -> float:
    """log10 of the exact McNemar p, finite where p itself underflows (b + c in the thousands)."""
    from scipy.special import logsumexp
    from scipy.stats import binom

    n = b + c
    if n == 0:
        return 0.0
    log_tail = logsumexp(binom.logpmf(np.arange(min(b, c) + 1), n, 0.5))   # log P(X ≤ min(b, c)), in log space
    return float(min(0.0, (np.log(2) + log_tail) / np.log(10)))

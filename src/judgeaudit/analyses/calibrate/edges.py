"""Intervals that keep their coverage where the normal approximation fails: few labels, a rare class,
labels at a scale's end.

PPI++'s and the human-only normal intervals estimate the spread of the labels from the labels. When
the labels sit at (or near) one end of their scale — 10 labels of a 3% class are all 0; 10 grades of a
1–5 scale are all 5 — that spread is estimated as (nearly) zero and the interval collapses onto the
point estimate, covering the truth far less often than its level says.

**Support.** On a scale [a, b] with label mean ȳ, the support of n labels is

    s = n · min(ȳ − a, b − ȳ) / (b − a),

for 0/1 labels exactly the count of the rarer class. The normal intervals are used as they are when
s ≥ ``MIN_SUPPORT`` (10: at least 10 labels of each class); below it every interval printed is the
hull of the normal interval and an interval that holds for any distribution of the labels:

* 0/1 labels of a binary target: the exact Clopper–Pearson interval for the share of 1s
  (``statsmodels.stats.proportion.proportion_confint``, ``method="beta"``), coverage ≥ the level for
  every prevalence and n;
* any other labels on [a, b] (grades, averaged epochs, ties): Hoeffding's interval
  ȳ ± (b − a)·√(ln(2/α)/(2n)) intersected with [a, b], valid for every distribution on [a, b].

The threshold 10 is chosen by simulation (``benchmarks/calibrate.py``: a binary judge with TPR 0.85,
TNR 0.75 at prevalence 0.01–0.3 with 10–200 labels, and a graded judge on a 1–5 scale whose labels
crowd its top): with it every printed interval covers at ≥ 0.93; with 5 the normal PPI++ interval at
prevalence 0.3 and 40 labels covers 0.92.
"""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.proportion import proportion_confint

MIN_SUPPORT = 10


def support(y, lo: float, hi: float) -> float:  # noqa: ANN001
    """``n·min(ȳ − a, b − ȳ)/(b − a)``: the count of the rarer class for 0/1 labels."""
    y = np.asarray(y, dtype=float).ravel()
    if hi <= lo:
        return 0.0
    m = float(y.mean())
    return float(len(y) * max(min(m - lo, hi - m), 0.0) / (hi - lo))


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval for a binomial proportion ``k/n``."""
    lo, hi = proportion_confint(int(k), int(n), alpha=1.0 - level, method="beta")
    return float(np.nan_to_num(lo, nan=0.0)), float(np.nan_to_num(hi, nan=1.0))


def hoeffding(y, lo: float, hi: float, level: float = 0.95) -> tuple[float, float]:  # noqa: ANN001
    """Hoeffding's interval for the mean of values on [lo, hi], intersected with [lo, hi]."""
    y = np.asarray(y, dtype=float).ravel()
    half = (hi - lo) * math.sqrt(math.log(2.0 / (1.0 - level)) / (2.0 * len(y)))
    m = float(y.mean())
    return max(lo, m - half), min(hi, m + half)


def is_binary(y) -> bool:  # noqa: ANN001
    return bool(np.isin(np.asarray(y, dtype=float), (0.0, 1.0)).all())


def distribution_free(y, lo: float, hi: float, binary: bool, level: float = 0.95) -> tuple[tuple[float, float], str]:  # noqa: ANN001
    """``(interval, its name)``: Clopper–Pearson for 0/1 labels of a binary target, else Hoeffding on
    [lo, hi]."""
    y = np.asarray(y, dtype=float).ravel()
    if binary and is_binary(y):
        return clopper_pearson(int(y.sum()), len(y), level), "Clopper–Pearson (exact)"
    return hoeffding(y, lo, hi, level), f"Hoeffding on the scale [{lo:g}, {hi:g}]"


def guard(ci: tuple[float, float], y, lo: float, hi: float, binary: bool,  # noqa: ANN001
          level: float = 0.95) -> tuple[tuple[float, float], str | None]:
    """``(interval, None)`` when the labels support the normal interval ``ci``; else ``(hull of ci and
    the distribution-free interval, the latter's name)``."""
    if support(y, lo, hi) >= MIN_SUPPORT:
        return (float(ci[0]), float(ci[1])), None
    (flo, fhi), name = distribution_free(y, lo, hi, binary, level)
    return (min(float(ci[0]), flo), max(float(ci[1]), fhi)), name


def labels_needed(y, lo: float, hi: float, binary: bool) -> str:  # noqa: ANN001
    """One sentence: why the labels do not support a normal interval and about how many would."""
    y = np.asarray(y, dtype=float).ravel()
    n = len(y)
    s = support(y, lo, hi)
    if binary and is_binary(y):
        k = int(min(y.sum(), n - y.sum()))
        rare = "positive" if y.sum() <= n - y.sum() else "negative"
        share = (k + 0.5) / (n + 1.0)
        return (f"only {k} of {n} labels are {rare}: a normal interval needs at least {MIN_SUPPORT} labels of each "
                f"class, about {math.ceil(MIN_SUPPORT / share)} labels at the labelled share's estimate {share:.3f} "
                "((k + ½)/(n + 1)), more if the class is rarer")
    dist = max(s / n, 0.5 / (n + 1.0))
    return (f"the {n} labels sit near an end of the scale [{lo:g}, {hi:g}] (support n·distance/range = {s:.1f} < "
            f"{MIN_SUPPORT}): about {math.ceil(MIN_SUPPORT / dist)} labels would support a normal interval at this "
            "mean, more if it lies nearer the end")

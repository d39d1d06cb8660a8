"""The Rogan–Gladen correction of a binary judge's positive rate (Rogan and Gladen, 1978).

With q the judge's positive rate on the unlabelled items and the judge's true-positive and
true-negative rates TPR = P(Ŷ=1 | Y=1), TNR = P(Ŷ=0 | Y=0) estimated on the labelled items, the
prevalence is

    p = (q + TNR − 1) / (TPR + TNR − 1),

truncated to [0, 1]. It is undefined when TPR + TNR ≤ 1 (a judge no better than chance, or one
whose labelled subset holds no positive or no negative item). It has no interval when a cell of the
labelled 2×2 table is empty: with no false negative (or no false positive) among the labels every
resample has TPR = 1 (TNR = 1), the correction's uncertainty about that rate is invisible to the
bootstrap, and the "corrected" interval is the raw rate's (10 labels at prevalence 0.3: such
intervals covered 0 of 29). TPR and TNR are reported each with its exact (Clopper–Pearson) interval
over the labelled positives and negatives. The interval is the percentile
bootstrap, resampling the labelled and the unlabelled items independently; the statistic depends on
the data only through the four labelled (Y, Ŷ) counts and the unlabelled positive count, so a
resample is drawn as those counts (multinomial and binomial: exactly the distribution of the counts
of a row resample), vectorised over resamples.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from judgeaudit.analyses.calibrate.edges import clopper_pearson
from judgeaudit.stats.resample import percentile_ci, rng_for

_CELLS = ("true positive", "false negative", "true negative", "false positive")


def _rg(q: np.ndarray, tpr: np.ndarray, tnr: np.ndarray) -> np.ndarray:
    den = tpr + tnr - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (q + tnr - 1.0) / den
    return np.where(den > 0, np.clip(p, 0.0, 1.0), np.nan)


def _rates(tp, fn, tn, fp) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    pos, neg = tp + fn, tn + fp
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pos > 0, tp / pos, np.nan), np.where(neg > 0, tn / neg, np.nan)


@dataclass(frozen=True)
class RoganGladen:
    estimate: float | None
    ci: tuple[float, float] | None
    q: float
    tpr: float | None
    tnr: float | None
    n_labelled: int
    n_unlabelled: int
    n_boot: int
    undefined_resamples: int
    note: str | None = None
    tpr_ci: tuple[float, float] | None = None
    tnr_ci: tuple[float, float] | None = None
    cells: tuple[int, int, int, int] = (0, 0, 0, 0)

    def to_dict(self) -> dict:
        return {"method": "Rogan–Gladen (TPR/TNR from the labelled items), percentile bootstrap",
                "estimate": self.estimate, "ci": list(self.ci) if self.ci else None,
                "width": (self.ci[1] - self.ci[0]) if self.ci else None, "q": self.q, "tpr": self.tpr,
                "tnr": self.tnr, "tpr_ci": list(self.tpr_ci) if self.tpr_ci else None,
                "tnr_ci": list(self.tnr_ci) if self.tnr_ci else None,
                "rates_interval": "Clopper–Pearson (exact) over the labelled positives (TPR) and negatives (TNR)",
                "table": dict(zip(("tp", "fn", "tn", "fp"), self.cells, strict=True)), "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled,
                "n_boot": self.n_boot, "undefined_resamples": self.undefined_resamples, "note": self.note}


def counts(y, yhat) -> tuple[int, int, int, int]:  # noqa: ANN001
    """(tp, fn, tn, fp) of binary verdicts ``yhat`` against labels ``y``."""
    y, yhat = np.asarray(y, dtype=bool), np.asarray(yhat, dtype=bool)
    return (int(np.sum(y & yhat)), int(np.sum(y & ~yhat)), int(np.sum(~y & ~yhat)), int(np.sum(~y & yhat)))


def allowed_undefined(level: float, n_boot: int) -> int:
    """The most resamples that may lack an estimate for an interval to be reported: (1 − level)/2 of
    ``n_boot``, rounded down, with the floating-point error of the product forgiven ((1 − 0.9)/2 · 400 is
    19.999999999999996, and 20 undefined resamples are exactly 5%)."""
    return math.floor((1.0 - level) / 2.0 * n_boot + 1e-9)


def rogan_gladen(y, yhat, yhat_unlabelled, *, level: float = 0.95, n_boot: int = 2000,  # noqa: ANN001
                 seed: int | np.random.Generator | None = 0) -> RoganGladen:
    """The corrected prevalence with its percentile-bootstrap interval.

    A resample where TPR + TNR ≤ 1 (or a class is absent) has no estimate; the interval is read from
    the others, and is reported only when at most (1 − level)/2 of the resamples are undefined (else
    the undefined share alone could move an end of the interval)."""
    tp, fn, tn, fp = counts(y, yhat)
    yu = np.asarray(yhat_unlabelled, dtype=bool)
    n, big_n = tp + fn + tn + fp, len(yu)
    k = int(yu.sum())
    q = k / big_n
    tpr, tnr = _rates(np.float64(tp), np.float64(fn), np.float64(tn), np.float64(fp))
    est = float(_rg(np.float64(q), tpr, tnr))
    rng = rng_for(seed)
    cells = rng.multinomial(n, np.array([tp, fn, tn, fp], dtype=float) / n, size=n_boot)
    kb = rng.binomial(big_n, q, size=n_boot)
    btpr, btnr = _rates(*(cells[:, i].astype(float) for i in range(4)))
    boot = _rg(kb / big_n, btpr, btnr)
    undefined = int(np.isnan(boot).sum())
    note = None
    ci: tuple[float, float] | None = None
    if np.isnan(est):
        note = ("undefined: TPR + TNR ≤ 1 on the labelled items (the judge separates the classes no better than "
                "chance, or a class is absent from the labels)")
        est_out = None
    else:
        est_out = est
        empty = [name for name, c in zip(_CELLS, (tp, fn, tn, fp), strict=True) if c == 0]
        if empty:
            note = (f"no interval: the labelled 2×2 table has no {' and no '.join(empty)} among {n} labels, so "
                    "every resample shows that rate as perfect and the interval would be the judge's raw rate's; "
                    "label more items")
        elif undefined <= allowed_undefined(level, n_boot):
            lo, hi = percentile_ci(boot, level)
            ci = (float(lo), float(hi))
        else:
            note = (f"no interval: {undefined} of {n_boot} resamples have TPR + TNR ≤ 1 (more than "
                    f"{(1 - level) / 2:.1%}); label more items of the rarer class")
    return RoganGladen(est_out, ci, float(q), None if np.isnan(tpr) else float(tpr),
                       None if np.isnan(tnr) else float(tnr), n, big_n, n_boot, undefined, note,
                       clopper_pearson(tp, tp + fn, level) if tp + fn else None,
                       clopper_pearson(tn, tn + fp, level) if tn + fp else None, (tp, fn, tn, fp))


def rogan_gladen_batch(tp, fn, tn, fp, k, big_n: int, *, level: float = 0.95, n_boot: int = 1000,  # noqa: ANN001
                       seed: int | np.random.Generator | None = 0,
                       refuse: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, lo, hi) for many data sets at once, given as count arrays (the same estimator and
    bootstrap as ``rogan_gladen``; for simulations and benchmarks). NaN ends where ``rogan_gladen``
    gives no interval; ``refuse=False`` keeps every percentile interval (the estimator's old behaviour,
    for the benchmark's before/after table)."""
    tp, fn, tn, fp, k = (np.asarray(a, dtype=np.int64) for a in (tp, fn, tn, fp, k))
    n = tp + fn + tn + fp
    rng = rng_for(seed)
    est = _rg(k / big_n, *_rates(tp.astype(float), fn.astype(float), tn.astype(float), fp.astype(float)))
    probs = np.stack([tp, fn, tn, fp], axis=1) / n[:, None]
    cells = np.stack([rng.multinomial(n[i], probs[i], size=n_boot) for i in range(len(n))])   # (sets, boot, 4)
    kb = rng.binomial(big_n, (k / big_n)[:, None], size=(len(n), n_boot))
    boot = _rg(kb / big_n, *_rates(*(cells[..., i].astype(float) for i in range(4))))
    lo, hi = percentile_ci(boot, level, axis=1)
    empty = (np.stack([tp, fn, tn, fp], axis=1) == 0).any(axis=1)   # no interval: see ``rogan_gladen``
    undefined = np.isnan(boot).sum(axis=1) > allowed_undefined(level, n_boot)
    bad = (empty | undefined if refuse else np.zeros_like(empty)) | np.isnan(est)
    return est, np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)

"""``calibrate``: the number a user may report about a judged set, from a judge's verdicts on every
item and human labels on some of them.

Input is a table with one row per item: ``id``, ``yhat`` (the judge's verdict as a number) and
``y`` (the human label as a number; NaN where the item is unlabelled). Targets (``TARGETS``) are
means of a per-item value:

* ``mean`` — the mean score (verdicts and labels on one numeric scale);
* ``pass_rate`` — the share of items that pass (1 = pass, 0 = fail);
* ``accuracy`` — the share of items whose output is correct (1 = correct, 0 = incorrect);
* ``win_rate`` — the rate at which A beats B (A = 1, B = 0, tie = ½).

Reported: the PPI++ estimate and interval (``ppi``; plain PPI with λ = 1 beside it), the human-only
interval on the labelled items, the naive judge-only interval over every judged item, for a binary
target the Rogan–Gladen correction, the judge's agreement with the humans against a constant
predictor, and ``n_eff`` (judgeaudit's own: see ``ppi.n_effective``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.calibrate.agreement import Agreement, agreement
from judgeaudit.analyses.calibrate.edges import (MIN_SUPPORT, clopper_pearson, guard, is_binary, labels_needed,
                                                 support)
from judgeaudit.analyses.calibrate.ppi import (classical_mean_ci, n_effective, naive_mean_ci, ppi_lambda,
                                               ppi_mean_ci, ppi_mean_pointestimate, width_bound)
from judgeaudit.analyses.calibrate.randomness import random_subset_check
from judgeaudit.analyses.calibrate.randomness import warning as subset_warning
from judgeaudit.analyses.calibrate.rogan_gladen import RoganGladen, rogan_gladen

TARGETS = {
    "mean": "the mean score over the judged items (judge scores and human labels on one scale)",
    "pass_rate": "the share of judged items that pass (1 = pass, 0 = fail)",
    "accuracy": "the share of judged items whose output is correct (1 = correct, 0 = incorrect)",
    "win_rate": "the rate at which A beats B over the judged pairs (A = 1, B = 0, tie = ½)",
}
BINARY = ("pass_rate", "accuracy")
DEFINITIONS = {
    "ppi": "PPI++ (Angelopoulos, Duchi & Zrnic 2023): λ·mean(Ŷ unlabelled) + mean(Y − λŶ labelled), normal "
           "interval, power-tuning λ estimated and clipped to [0, 1] (ppi_py.ppi_mean_ci semantics)",
    "ppi_plain": "PPI (Angelopoulos et al. 2023) with λ = 1: mean(Ŷ unlabelled) + mean(Y − Ŷ labelled)",
    "human": "human labels only: for 0/1 labels of a binary target the exact Clopper–Pearson interval; otherwise "
             "mean(Y) ± z·sd(Y)/√n (ppi_py.classical_mean_ci)",
    "support": f"the labels' support n·min(ȳ − a, b − ȳ)/(b − a) on the scale [a, b] (for 0/1 labels the count of "
               f"the rarer class); below {MIN_SUPPORT} the normal intervals (PPI++, PPI, human-only) are widened to "
               "their hull with an interval valid for any distribution of the labels — Clopper–Pearson for 0/1 "
               "labels of a binary target, Hoeffding on [a, b] otherwise — because the labels' own spread "
               "understates the rectifier's variance (judgeaudit.analyses.calibrate.edges)",
    "naive": "judge only: mean(Ŷ) ± z·sd(Ŷ)/√m over every judged item — carries none of the judge's errors",
    "rogan_gladen": "Rogan–Gladen: (q + TNR − 1)/(TPR + TNR − 1), q the judge's positive rate on the unlabelled "
                    "items, TPR/TNR on the labelled items; percentile bootstrap",
    "n_eff": "judgeaudit's own: the human labels a human-only interval would need to be as narrow as the PPI++ "
             "interval, var(Y)/se_PPI² (= n·(width_human/width_PPI)²); not given when the intervals were widened "
             "(the labels do not support a normal interval)",
    "random_subset": "the labels must be a uniformly random subset of the judged items; checked by comparing "
                     "the judge's verdicts on the labelled and unlabelled items (two-sided Fisher exact test for "
                     "binary verdicts, a permutation χ² test otherwise; flagged at p < 0.05)",
    "agreement": "Cohen's κ (percentile bootstrap; none when undefined or flat) and raw agreement "
                 "(Clopper–Pearson) on the labelled items; the constant "
                 "predictor always gives the humans' most common label (κ = 0)",
}


@dataclass(frozen=True)
class Estimate:
    method: str
    estimate: float
    ci: tuple[float, float]
    n: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "ci": list(self.ci), "width": self.ci[1] - self.ci[0], "n": self.n,
                **self.extra}


@dataclass(frozen=True)
class CalibrationResult:
    target: str
    level: float
    n_labelled: int
    n_unlabelled: int
    ppi: Estimate
    ppi_plain: Estimate
    human: Estimate
    naive: Estimate
    n_eff: float | None
    width_bound: float
    rogan_gladen: RoganGladen | None
    agreement: Agreement | None
    notes: tuple[str, ...] = ()
    scale: tuple[float, float] = (0.0, 1.0)
    support: float = 0.0
    widened: str | None = None
    random_subset: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "definition": TARGETS[self.target], "level": self.level,
                "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled,
                "ppi": self.ppi.to_dict(), "ppi_plain": self.ppi_plain.to_dict(), "human": self.human.to_dict(),
                "naive": self.naive.to_dict(),
                "n_eff": {"value": self.n_eff, "own": True,
                          "per_label": None if self.n_eff is None else self.n_eff / self.n_labelled},
                "scale": list(self.scale), "support": {"value": self.support, "min": MIN_SUPPORT,
                                                       "widened_to": self.widened},
                "ppi_width_bound": self.width_bound,
                "rogan_gladen": self.rogan_gladen.to_dict() if self.rogan_gladen else None,
                "agreement": self.agreement.to_dict() if self.agreement else None,
                "random_subset": self.random_subset,
                "definitions": DEFINITIONS, "notes": list(self.notes)}

    def to_frame(self) -> pd.DataFrame:
        """One row per interval, side by side."""
        rows = [("PPI++ (λ tuned)", self.ppi), ("PPI (λ = 1)", self.ppi_plain), ("human labels only", self.human),
                ("judge only (naive)", self.naive)]
        out = [{"method": name, "estimate": e.estimate, "lo": e.ci[0], "hi": e.ci[1], "width": e.ci[1] - e.ci[0],
                "n": e.n} for name, e in rows]
        rg = self.rogan_gladen
        if rg is not None and rg.estimate is not None:
            out.append({"method": "Rogan–Gladen", "estimate": rg.estimate, "lo": rg.ci[0] if rg.ci else np.nan,
                        "hi": rg.ci[1] if rg.ci else np.nan, "width": (rg.ci[1] - rg.ci[0]) if rg.ci else np.nan,
                        "n": rg.n_labelled + rg.n_unlabelled})
        return pd.DataFrame(out)


def _whole(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def _scale(target: str, yhat: np.ndarray, y_l: np.ndarray,
           scale: tuple[float, float] | None) -> tuple[float, float]:
    """The scale [a, b] of the target: [0, 1] for rates, ``scale`` when given, else the observed range of
    the verdicts and labels."""
    if target != "mean":
        return 0.0, 1.0
    if scale is not None:
        return float(scale[0]), float(scale[1])
    both = np.concatenate([yhat, y_l])
    return float(both.min()), float(both.max())


def calibrate(table: pd.DataFrame, target: str, *, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
              categories: dict[float, str] | None = None, engine: str = "builtin",
              scale: tuple[float, float] | None = None) -> CalibrationResult:
    """Every estimate of ``target`` from ``table`` (columns ``id``, ``yhat``, ``y``; see the module).

    ``categories`` names the values of a categorical target for the agreement table (e.g.
    ``{1.0: "A", 0.0: "B", 0.5: "tie"}``). ``engine`` ``ppi-python`` computes the PPI++ estimate and
    interval with ``ppi_py`` (the calibrate extra) instead of the built-in estimator. ``scale`` is the
    (low, high) of a ``mean`` target's scale (default: the observed range of verdicts and labels); the
    labels' support on it decides whether the normal intervals stand (``edges``). ``ValueError`` when
    fewer than 2 items are labelled or unlabelled."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; one of {', '.join(TARGETS)}")
    yhat = table["yhat"].to_numpy(dtype=float)
    y = table["y"].to_numpy(dtype=float)
    lab = ~np.isnan(y)
    y_l, yh_l, yh_u = y[lab], yhat[lab], yhat[~lab]
    n, big_n = len(y_l), len(yh_u)
    lam = ppi_lambda(y_l, yh_l, yh_u)
    if engine == "ppi-python":
        from judgeaudit.analyses.calibrate.ppi_python import ppi_python_mean

        est, ci = ppi_python_mean(y_l, yh_l, yh_u, level)
    elif engine == "builtin":
        est, ci = ppi_mean_pointestimate(y_l, yh_l, yh_u, lam), ppi_mean_ci(y_l, yh_l, yh_u, level, lam)
    else:
        raise ValueError(f"unknown engine {engine!r} (builtin or ppi-python)")
    lo_s, hi_s = _scale(target, yhat, y_l, scale)
    binary_target = target in BINARY
    raw = {"ppi": ci, "ppi_plain": ppi_mean_ci(y_l, yh_l, yh_u, level, 1.0),
           "human": classical_mean_ci(y_l, level)}
    cis, widened = {}, None
    for key, c in raw.items():
        cis[key], widened = guard(c, y_l, lo_s, hi_s, binary_target, level)
    how = {k: "normal" if widened is None else f"hull of the normal interval and {widened}" for k in raw}
    if binary_target and is_binary(y_l):   # 0/1 labels: the exact interval for the human-only share, always
        cis["human"], how["human"] = clopper_pearson(int(y_l.sum()), n, level), "Clopper–Pearson (exact)"
    sup = support(y_l, lo_s, hi_s)

    def _interval(key: str) -> dict[str, Any]:
        return {"interval": how[key], "normal_ci": list(raw[key])}

    ppi = Estimate(DEFINITIONS["ppi"], est, cis["ppi"], n + big_n, {"lambda": lam, "engine": engine,
                                                                    **_interval("ppi")})
    plain = Estimate(DEFINITIONS["ppi_plain"], ppi_mean_pointestimate(y_l, yh_l, yh_u, 1.0), cis["ppi_plain"],
                     n + big_n, {"lambda": 1.0, **_interval("ppi_plain")})
    human = Estimate(DEFINITIONS["human"], float(y_l.mean()), cis["human"], n, _interval("human"))
    naive = Estimate(DEFINITIONS["naive"], float(yhat.mean()), naive_mean_ci(yhat, level), n + big_n)
    notes = []
    subset = random_subset_check(yh_l, yh_u, seed=seed)
    if (w := subset_warning(subset)) is not None:
        notes.append(w)
    if widened:
        notes.append(f"intervals widened to their hull with the {widened} interval of the human labels: "
                     + labels_needed(y_l, lo_s, hi_s, binary_target) + "; n_eff not given")
    rg = None
    binary = bool(np.isin(yhat, (0.0, 1.0)).all() and np.isin(y_l, (0.0, 1.0)).all())
    if target in BINARY:
        if binary:
            rg = rogan_gladen(y_l == 1, yh_l == 1, yh_u == 1, level=level, n_boot=n_boot, seed=seed)
        else:
            notes.append("Rogan–Gladen not computed: the verdicts are not binary per item (several epochs "
                         "averaged, or a non-binary value)")
    agr = None
    if _whole(y_l) and _whole(yh_l) or target == "win_rate":
        name = (lambda v: categories.get(float(v), str(v))) if categories else (lambda v: v)
        agr = agreement([name(v) for v in y_l], [name(v) for v in yh_l], level=level, n_boot=n_boot, seed=seed)
    else:
        notes.append("agreement not computed: verdicts or labels are not whole numbers on one scale")
    n_eff = n_effective(y_l, yh_l, yh_u, lam) if widened is None else None
    if n_eff is not None and not np.isfinite(n_eff):
        n_eff = None
    return CalibrationResult(target, level, n, big_n, ppi, plain, human, naive, n_eff,
                             width_bound(y_l, yh_l, yh_u, level), rg, agr, tuple(notes), (lo_s, hi_s), sup, widened,
                             subset)

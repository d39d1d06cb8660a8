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
from judgeaudit.analyses.calibrate.ppi import (classical_mean_ci, n_effective, naive_mean_ci, ppi_lambda,
                                               ppi_mean_ci, ppi_mean_pointestimate, width_bound)
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
    "human": "human labels only: mean(Y) ± z·sd(Y)/√n (ppi_py.classical_mean_ci)",
    "naive": "judge only: mean(Ŷ) ± z·sd(Ŷ)/√m over every judged item — carries none of the judge's errors",
    "rogan_gladen": "Rogan–Gladen: (q + TNR − 1)/(TPR + TNR − 1), q the judge's positive rate on the unlabelled "
                    "items, TPR/TNR on the labelled items; percentile bootstrap",
    "n_eff": "judgeaudit's own: the human labels a human-only interval would need to be as narrow as the PPI++ "
             "interval, var(Y)/se_PPI² (= n·(width_human/width_PPI)²)",
    "agreement": "Cohen's κ and raw agreement on the labelled items (percentile bootstrap); the constant "
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
    n_eff: float
    width_bound: float
    rogan_gladen: RoganGladen | None
    agreement: Agreement | None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "definition": TARGETS[self.target], "level": self.level,
                "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled,
                "ppi": self.ppi.to_dict(), "ppi_plain": self.ppi_plain.to_dict(), "human": self.human.to_dict(),
                "naive": self.naive.to_dict(),
                "n_eff": {"value": self.n_eff, "own": True, "per_label": self.n_eff / self.n_labelled},
                "ppi_width_bound": self.width_bound,
                "rogan_gladen": self.rogan_gladen.to_dict() if self.rogan_gladen else None,
                "agreement": self.agreement.to_dict() if self.agreement else None,
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


def calibrate(table: pd.DataFrame, target: str, *, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
              categories: dict[float, str] | None = None, engine: str = "builtin") -> CalibrationResult:
    """Every estimate of ``target`` from ``table`` (columns ``id``, ``yhat``, ``y``; see the module).

    ``categories`` names the values of a categorical target for the agreement table (e.g.
    ``{1.0: "A", 0.0: "B", 0.5: "tie"}``). ``engine`` ``ppi-python`` computes the PPI++ estimate and
    interval with ``ppi_py`` (the calibrate extra) instead of the built-in estimator. ``ValueError`` when
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
    ppi = Estimate(DEFINITIONS["ppi"], est, ci, n + big_n, {"lambda": lam, "engine": engine})
    plain = Estimate(DEFINITIONS["ppi_plain"], ppi_mean_pointestimate(y_l, yh_l, yh_u, 1.0),
                     ppi_mean_ci(y_l, yh_l, yh_u, level, 1.0), n + big_n, {"lambda": 1.0})
    human = Estimate(DEFINITIONS["human"], float(y_l.mean()), classical_mean_ci(y_l, level), n)
    naive = Estimate(DEFINITIONS["naive"], float(yhat.mean()), naive_mean_ci(yhat, level), n + big_n)
    notes = []
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
    return CalibrationResult(target, level, n, big_n, ppi, plain, human, naive, n_effective(y_l, yh_l, yh_u, lam),
                             width_bound(y_l, yh_l, yh_u, level), rg, agr, tuple(notes))

"""Stratified PPI++: labels drawn uniformly at random within each stratum, at rates that may differ
between strata (e.g. more labels from a rare, hard slice).

Every judged item carries its stratum k, so the stratum weights w_k = N_k / N (the share of the judged
items in stratum k) are known exactly. Within each stratum PPI++ (``ppi``) gives θ̂_k and se_k from that
stratum's labelled and unlabelled items; the estimate is

    θ̂ = Σ_k w_k·θ̂_k,   se² = Σ_k w_k²·se_k²

(strata are independent), with the normal interval θ̂ ± z·se — the stratified PPI estimator of
Fisher et al. (2024, "Stratified Prediction-Powered Inference"), each stratum's λ tuned on its own.
When some stratum's labels do not support a normal interval (``edges``), the interval is instead
Σ_k w_k·[lo_k, hi_k] with each stratum's interval (``edges.guard``) at level 1 − α/K: by the union
bound all K cover at once with probability ≥ 1 − α, and then so does their weighted sum.

The random-subset check runs within each stratum (Bonferroni: flagged when a stratum's p < α/K).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from judgeaudit.analyses.calibrate.edges import MIN_SUPPORT, guard, support
from judgeaudit.analyses.calibrate.ppi import ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_se
from judgeaudit.analyses.calibrate.randomness import random_subset_check


def stratified(yhat, y, stratum, *, lo: float, hi: float, binary: bool, level: float = 0.95,  # noqa: ANN001
               seed: int = 0) -> dict[str, Any]:
    """The stratified PPI++ estimate and interval (``y`` NaN where unlabelled). ``ValueError`` naming
    the stratum when one has fewer than 2 labelled or 2 unlabelled items."""
    yhat, y, stratum = np.asarray(yhat, dtype=float), np.asarray(y, dtype=float), np.asarray(stratum).astype(str)
    names = sorted({str(x) for x in stratum})
    k = len(names)
    alpha = 1.0 - level
    rows, est, var, sums, widened, flags = [], 0.0, 0.0, [0.0, 0.0], False, []
    for name in names:
        m = stratum == name
        lab = m & ~np.isnan(y)
        unl = m & np.isnan(y)
        if lab.sum() < 2 or unl.sum() < 2:
            raise ValueError(f"stratum {name!r} has {int(lab.sum())} labelled and {int(unl.sum())} unlabelled items "
                             "(each stratum needs at least 2 of each)")
        yl, yhl, yhu = y[lab], yhat[lab], yhat[unl]
        w = float(m.mean())
        th, se = ppi_mean_pointestimate(yl, yhl, yhu), ppi_mean_se(yl, yhl, yhu)
        ci_k, wide = guard(ppi_mean_ci(yl, yhl, yhu, 1.0 - alpha / k), yl, lo, hi, binary, 1.0 - alpha / k)
        widened |= wide is not None
        check = random_subset_check(yhl, yhu, seed=seed, alpha=alpha / k)
        flags.append(check["flagged"])
        est += w * th
        var += w * w * se * se
        sums[0] += w * ci_k[0]
        sums[1] += w * ci_k[1]
        rows.append({"stratum": name, "weight": w, "n_labelled": int(lab.sum()), "n_unlabelled": int(unl.sum()),
                     "estimate": th, "se": se, "support": support(yl, lo, hi), "ci_bonferroni": list(ci_k),
                     "random_subset_p": check["p"]})
    z = float(norm.ppf(0.5 + level / 2.0))
    ci = (sums[0], sums[1]) if widened else (est - z * np.sqrt(var), est + z * np.sqrt(var))
    how = (f"Σ w_k·[lo_k, hi_k], each stratum's interval at level 1 − α/{k} (some stratum has fewer than "
           f"{MIN_SUPPORT} labels of a class)") if widened else "normal, se² = Σ w_k²·se_k²"
    return {"method": "stratified PPI++ (Σ_k w_k·θ̂_k, w_k the stratum's share of the judged items)",
            "estimate": float(est), "ci": [float(ci[0]), float(ci[1])], "width": float(ci[1] - ci[0]),
            "interval": how, "n": int(len(yhat)), "strata": rows, "random_subset_flagged": bool(any(flags))}

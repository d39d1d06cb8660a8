"""Are the labelled items a uniformly random subset of the judged items? Every interval of
``calibrate`` assumes they are; when the labels went to, say, the judge's most confident items, PPI++
and Rogan–Gladen lose their coverage (the judge looks better on the labelled items than it is).

The check compares the judge's verdicts on the labelled and the unlabelled items — under random
labelling they are two samples of one distribution:

* binary verdicts: a two-sided Fisher exact test of the 2×2 table (labelled/unlabelled × verdict)
  (``scipy.stats.fisher_exact``);
* any other verdicts: a two-sided permutation test (``scipy.stats.permutation_test``, labelled and
  unlabelled items exchanged) of the χ² statistic of the verdict-value × labelled table, which
  responds to any difference of the two distributions, not only of their means (verdicts with more
  than 20 distinct values are read as their deciles).

A small p says the labelled items are not a random draw (or a 1-in-20 chance at α = 0.05); a large p
does not show they are — a subset chosen on something the judge's verdict does not see passes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import fisher_exact, permutation_test

ALPHA = 0.05
MAX_VALUES = 20


def _chi2_labelled(values: np.ndarray, cats: np.ndarray, total: np.ndarray, n_all: int):  # noqa: ANN202
    def stat(x, axis=-1):  # noqa: ANN001, ANN202
        x = np.moveaxis(np.asarray(x), axis, -1)
        n = x.shape[-1]
        obs = (x[..., None] == cats).sum(axis=-2)                 # (..., categories) labelled counts
        exp_l = total * n / n_all
        exp_u = total * (n_all - n) / n_all
        return (((obs - exp_l) ** 2 / exp_l) + ((total - obs - exp_u) ** 2 / exp_u)).sum(axis=-1)
    return stat


def random_subset_check(yhat_labelled, yhat_unlabelled, *, n_perm: int = 2000, seed: int = 0,  # noqa: ANN001
                        alpha: float = ALPHA) -> dict[str, Any]:
    """``{"test", "p", "flagged", ...}`` for the verdicts of the labelled and unlabelled items."""
    a = np.asarray(yhat_labelled, dtype=float)
    b = np.asarray(yhat_unlabelled, dtype=float)
    if np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        k1, k2 = int(a.sum()), int(b.sum())
        p = float(fisher_exact([[k1, len(a) - k1], [k2, len(b) - k2]], alternative="two-sided").pvalue)
        out = {"test": "Fisher exact, two-sided (verdict = 1 on labelled vs unlabelled items)",
               "labelled_rate": k1 / len(a), "unlabelled_rate": k2 / len(b)}
    else:
        both = np.concatenate([a, b])
        if len(np.unique(both)) > MAX_VALUES:     # many distinct scores: their deciles
            edges = np.unique(np.quantile(both, np.linspace(0, 1, 11)[1:-1]))
            a, b, both = (np.searchsorted(edges, x, side="right").astype(float) for x in (a, b, both))
        cats, total = np.unique(both, return_counts=True)
        stat = _chi2_labelled(both, cats, total, len(both))
        res = permutation_test((a, b), lambda x, y, axis=-1: stat(x, axis), permutation_type="independent",
                               vectorized=True, n_resamples=n_perm, alternative="greater", random_state=seed,
                               batch=100)
        p = float(res.pvalue)
        out = {"test": f"permutation test ({n_perm} permutations) of the χ² statistic of verdict value × labelled",
               "labelled_mean": float(a.mean()), "unlabelled_mean": float(b.mean())}
    return {**out, "p": p, "alpha": alpha, "flagged": bool(p < alpha)}


def warning(check: dict[str, Any]) -> str | None:
    """The report's note when the check flags the labelled subset."""
    if not check["flagged"]:
        return None
    if "labelled_rate" in check:
        what = (f"the judge says 1 on {check['labelled_rate']:.1%} of the labelled items and "
                f"{check['unlabelled_rate']:.1%} of the unlabelled ones")
    else:
        what = (f"the judge's verdicts on the labelled items (mean {check['labelled_mean']:.3g}) differ from those "
                f"on the unlabelled ones (mean {check['unlabelled_mean']:.3g})")
    return (f"the labels may not be a uniformly random subset of the judged items: {what} ({check['test']}, "
            f"p = {check['p']:.2g}); every interval here assumes a random subset — if the labels went to chosen "
            "items (the judge's most confident, one stratum), these intervals do not hold")

"""The judge's agreement with the humans on the labelled items, read against baselines.

Cohen's κ with a percentile-bootstrap interval over the labelled items (none when κ is undefined —
the humans use one category — or every resample gives the same κ) and raw agreement (the share of
labelled items where the verdict equals the label) with its exact Clopper–Pearson interval; beside them the base rate (the share
of each label among the humans) and the constant predictor's agreement — the raw agreement of a
judge that always gives the humans' most common label, which scores κ = 0 (Cohen, 1960). A raw
agreement is informative only where it clears that constant baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgeaudit.analyses.calibrate.edges import clopper_pearson
from judgeaudit.stats.agreement import cohen_kappa
from judgeaudit.stats.resample import bootstrap_indices, percentile_ci


@dataclass(frozen=True)
class Agreement:
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    raw: float
    raw_ci: tuple[float, float]
    base_rate: dict[str, float]
    constant_label: str
    constant_agreement: float
    n: int

    def to_dict(self) -> dict:
        return {"cohen_kappa": self.kappa, "cohen_kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
                "cohen_kappa_note": None if self.kappa is not None else
                "undefined: the human labels hold one category, so chance agreement is 1 and κ is 0/0",
                "raw_agreement": self.raw,
                "raw_agreement_ci": list(self.raw_ci), "base_rate": self.base_rate,
                "constant_predictor": {"label": self.constant_label, "raw_agreement": self.constant_agreement,
                                       "cohen_kappa": 0.0},
                "beats_constant": bool(self.raw_ci[0] > self.constant_agreement), "n": self.n}


def _key(v: object) -> str:
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return str(v)


def agreement(labels, verdicts, *, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> Agreement:  # noqa: ANN001
    """Agreement of categorical ``verdicts`` with the human ``labels`` (paired, one per item)."""
    a = np.array([_key(v) for v in labels])
    b = np.array([_key(v) for v in verdicts])
    n = len(a)
    idx = bootstrap_indices(n, n_boot, seed)
    kappas = np.array([cohen_kappa(a[i], b[i]) for i in idx])
    cats, cnt = np.unique(a, return_counts=True)
    share = cnt / n
    top = int(np.argmax(share))
    klo, khi = percentile_ci(kappas, level)
    rlo, rhi = clopper_pearson(int(np.sum(a == b)), n, level)
    one = len(np.unique(a)) < 2    # κ is 0/0 when the humans use one category (its code returns 0)
    flat = not khi > klo           # every resample gives one κ: the bootstrap shows no uncertainty, so no interval
    return Agreement(None if one else cohen_kappa(a, b), None if one or flat else (float(klo), float(khi)),
                     float(np.mean(a == b)), (float(rlo), float(rhi)),
                     {str(c): float(s) for c, s in zip(cats, share, strict=True)}, str(cats[top]),
                     float(share[top]), n)

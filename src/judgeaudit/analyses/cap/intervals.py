"""Cell intervals (conditional-accuracy-profiles.txt §3.3): every cell of a set is Σ num / Σ den over
its resampling units, and its nonparametric bootstrap is one matrix product of a ``(n_boot, n_units)``
multiplicity matrix with the unit-level numerators and denominators of every cell at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judgeaudit.stats.resample import percentile_ci, percentile_interval

UNIT_COLUMNS = ("set", "unit", "judge_id", "condition", "metric", "num", "den")


@dataclass
class _Acc:
    """Collects unit-level numerators/denominators of every cell of one set."""

    n_units: int
    unit_index: np.ndarray  # row -> unit
    keys: list[tuple[str, str, str]] = field(default_factory=list)  # (judge, condition, metric)
    nums: list[np.ndarray] = field(default_factory=list)
    dens: list[np.ndarray] = field(default_factory=list)

    def add(self, key: tuple[str, str, str], num: np.ndarray, den: np.ndarray) -> None:
        self.keys.append(key)
        self.nums.append(np.bincount(self.unit_index, weights=num * den, minlength=self.n_units))
        self.dens.append(np.bincount(self.unit_index, weights=den.astype(float), minlength=self.n_units))

    def add_units(self, key: tuple[str, str, str], num_u: np.ndarray, den_u: np.ndarray) -> None:
        self.keys.append(key)
        self.nums.append(num_u * den_u)
        self.dens.append(den_u.astype(float))


def _estimate(acc: _Acc, counts: np.ndarray, level: float) -> dict[tuple[str, str, str], tuple]:
    if not acc.keys:
        return {}
    num = np.stack(acc.nums, axis=1)
    den = np.stack(acc.dens, axis=1)
    point_den = den.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = num.sum(axis=0) / point_den
        cf = counts.astype(float)
        boot = (cf @ num) / (cf @ den)
    lo, hi = percentile_ci(boot, level, axis=0)
    out = {}
    for k, key in enumerate(acc.keys):
        n = int(round(point_den[k]))
        if n == 0:
            out[key] = (np.nan, np.nan, np.nan, 0, None)
        else:
            out[key] = (point[k], lo[k], hi[k], n, boot[:, k])
    return out


def _products(est: dict[tuple[str, str, str], tuple], products: list[tuple[str, str, str, str, str]],
              level: float) -> None:
    """Adds product cells (judge, condition, metric) = factor_a * factor_b to ``est``, the point from
    the two point estimates and the interval from the product of their replicates, which share the
    resampled units (a joint bootstrap: both factors recomputed in every replicate)."""
    for jid, code, metric, fa, fb in products:
        a, b = est.get((jid, code, fa)), est.get((jid, code, fb))
        if a is None or b is None or a[4] is None or b[4] is None:
            est[(jid, code, metric)] = (np.nan, np.nan, np.nan, 0 if a is None else a[3], None)
            continue
        boot = a[4] * b[4]
        lo, hi = percentile_interval(boot, level)
        est[(jid, code, metric)] = (a[0] * b[0], lo, hi, a[3], boot)

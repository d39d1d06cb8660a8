"""Coverage of calibrate's intervals where users are: few labels, rare classes, labels at a scale's end.

    PYTHONPATH=src python benchmarks/calibrate.py [N_SETS] [BIG_N]

A binary judge with TPR 0.85 and TNR 0.75 at prevalence 0.01, 0.03, 0.05 and 0.3 with 10, 20, 40 and 200
random human labels, and a graded judge on a 1–5 scale whose human grades crowd its top (mean 4.42; the
judge grades one point high half of the time); BIG_N unlabelled items (default 2,000); N_SETS simulated
data sets per cell (default 1,000; Monte Carlo s.e. ≈ 0.7 pp at 0.95). Nominal level 0.95.

Columns: the normal PPI++ interval alone (``ppi_py``'s; what calibrate printed before), the interval
calibrate prints now (``edges.guard``: the hull with Clopper–Pearson / Hoeffding below 10 labels of a
class) with the share of sets where it was widened, the human-only Wald and the printed human-only
interval (Clopper–Pearson for 0/1 labels), and Rogan–Gladen's percentile bootstrap before (every set) and
now (no interval when a cell of the labelled 2×2 table is empty or too many resamples are undefined:
coverage over the printed intervals, and the share refused). Then the check that the labels are a random
subset: how often it flags labels drawn from the judge's most confident half, and a random subset.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from judgeaudit.analyses.calibrate.randomness import random_subset_check
from judgeaudit.analyses.calibrate.rogan_gladen import rogan_gladen_batch
from judgeaudit.analyses.calibrate.simulate import (END_TRUTH, binary_sets, confident_subset, graded_end_sets,
                                                    guarded_batch, ppi_batch)

Z = 1.959963984540054


def _cover(lo, hi, truth) -> float:  # noqa: ANN001
    ok = ~np.isnan(lo)
    return float(np.mean((lo[ok] <= truth) & (truth <= hi[ok]))) if ok.any() else float("nan")


def _binary_row(p: float, n: int, sets: int, big_n: int) -> list[str]:
    y, yh, yu = binary_sets(sets, n, big_n, p=p, seed=int(1000 * p) * 1000 + n)
    est, se, _ = ppi_batch(y, yh, yu)
    _, lo, hi, widened = guarded_batch(y, yh, yu, 0.0, 1.0, binary=True)
    hse = y.std(1) / np.sqrt(n)
    clo, chi = proportion_confint(y.sum(1).astype(int), n, alpha=0.05, method="beta")
    yb, yhb = y.astype(bool), yh.astype(bool)
    cells = [(yb & yhb).sum(1), (yb & ~yhb).sum(1), (~yb & ~yhb).sum(1), (~yb & yhb).sum(1)]
    _, rlo0, rhi0 = rogan_gladen_batch(*cells, yu.sum(1), big_n, n_boot=500, seed=n, refuse=False)
    _, rlo, rhi = rogan_gladen_batch(*cells, yu.sum(1), big_n, n_boot=500, seed=n)
    return [f"binary p={p:g}", str(n), f"{np.mean(np.abs(est - p) <= Z * se):.3f} ({np.mean(se == 0):.2f})",
            f"{_cover(lo, hi, p):.3f}", f"{widened.mean():.2f}", f"{np.mean(hi - lo):.3f}",
            f"{np.mean(np.abs(y.mean(1) - p) <= Z * hse):.3f}",
            f"{np.mean((np.nan_to_num(clo) <= p) & (p <= np.nan_to_num(chi, nan=1.0))):.3f}",
            f"{_cover(rlo0, rhi0, p):.3f}", f"{_cover(rlo, rhi, p):.3f} ({np.mean(np.isnan(rlo)):.2f})"]


def _graded_row(n: int, sets: int, big_n: int) -> list[str]:
    y, yh, yu = graded_end_sets(sets, n, big_n, seed=7000 + n)
    est, se, _ = ppi_batch(y, yh, yu)
    _, lo, hi, widened = guarded_batch(y, yh, yu, 1.0, 5.0, binary=False)
    t = END_TRUTH
    hse = y.std(1) / np.sqrt(n)
    m = y.mean(1)
    half = 4.0 * np.sqrt(np.log(40.0) / (2.0 * n))          # Hoeffding on [1, 5], hulled where widened
    hlo = np.where(widened, np.minimum(m - Z * hse, np.maximum(1.0, m - half)), m - Z * hse)
    hhi = np.where(widened, np.maximum(m + Z * hse, np.minimum(5.0, m + half)), m + Z * hse)
    return ["graded 1–5, top", str(n), f"{np.mean(np.abs(est - t) <= Z * se):.3f} ({np.mean(se == 0):.2f})",
            f"{_cover(lo, hi, t):.3f}", f"{widened.mean():.2f}", f"{np.mean(hi - lo):.3f}",
            f"{np.mean(np.abs(m - t) <= Z * hse):.3f}", f"{_cover(hlo, hhi, t):.3f}", "—", "—"]


def _table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main() -> None:
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    big_n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    t0 = time.perf_counter()
    rows = [["design", "labels", "PPI++ normal (zero-width)", "PPI++ printed", "widened", "printed width",
             "human Wald", "human printed", "RG before", "RG printed (refused)"]]
    for p in (0.01, 0.03, 0.05, 0.3):
        for n in (10, 20, 40, 200):
            rows.append(_binary_row(p, n, sets, big_n))
    for n in (10, 20, 40, 200):
        rows.append(_graded_row(n, sets, big_n))
    _table(rows)
    reps = max(sets // 5, 50)
    rows = [["labels", "confident half flagged", "random subset flagged"]]
    for n in (20, 40, 200):
        rates = []
        for random in (False, True):
            _, yh, lab = confident_subset(reps, n, big_n, random=random, seed=n + random)
            rates.append(np.mean([random_subset_check(yh[i][lab[i]], yh[i][~lab[i]])["flagged"] for i in range(reps)]))
        rows.append([str(n), f"{rates[0]:.2f}", f"{rates[1]:.2f}"])
    print(f"\nrandom-subset check (two-sided Fisher exact, α = 0.05), {reps} sets per row:")
    _table(rows)
    print(f"\n{sets} data sets per cell, {big_n} unlabelled items; nominal coverage 0.95; "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()

"""PPI++ vs the naive judge-only and the human-only intervals: width and coverage side by side.

    PYTHONPATH=src python benchmarks/calibrate.py [N_SETS]

A binary judge with TPR 0.85 and TNR 0.75 on items of prevalence 0.3 (its raw pass rate is 0.43),
and a graded judge that scores 0.8 points high with noise; 10,000 unlabelled items; 50, 200 and 1,000
human labels; N_SETS simulated data sets (default 2,000) per row. Rogan–Gladen (percentile bootstrap,
1,000 resamples) beside them for the binary judge. Coverage is of the nominal 95% interval.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from judgeaudit.analyses.calibrate.rogan_gladen import rogan_gladen_batch
from judgeaudit.analyses.calibrate.simulate import binary_sets, graded_sets, ppi_batch

Z = 1.959963984540054
BIG_N = 10_000


def _row(name: str, n: int, y, yh, yu, truth: float, rg: bool) -> list[str]:  # noqa: ANN001
    est, se, lam = ppi_batch(y, yh, yu)
    allh = np.concatenate([yh, yu], axis=1)
    nse = allh.std(1) / np.sqrt(allh.shape[1])
    hse = y.std(1) / np.sqrt(n)
    cells = [f"{np.mean(np.abs(est - truth) <= Z * se):.3f} / {np.mean(2 * Z * se):.4f}",
             f"{np.mean(np.abs(allh.mean(1) - truth) <= Z * nse):.3f} / {np.mean(2 * Z * nse):.4f}",
             f"{np.mean(np.abs(y.mean(1) - truth) <= Z * hse):.3f} / {np.mean(2 * Z * hse):.4f}"]
    if rg:
        yb, yhb = y.astype(bool), yh.astype(bool)
        _, lo, hi = rogan_gladen_batch((yb & yhb).sum(1), (yb & ~yhb).sum(1), (~yb & ~yhb).sum(1),
                                       (~yb & yhb).sum(1), yu.sum(1), yu.shape[1], n_boot=1000, seed=n)
        cells.append(f"{np.nanmean((lo <= truth) & (truth <= hi)):.3f} / {np.nanmean(hi - lo):.4f}")
    else:
        cells.append("—")
    return [name, str(n), *cells, f"{np.mean(lam):.2f}", f"{np.mean((hse / se) ** 2) * n:.0f}"]


def main() -> None:
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    t0 = time.perf_counter()
    head = ["judge", "labels", "PPI++ cover / width", "naive cover / width", "human cover / width",
            "Rogan–Gladen cover / width", "mean λ̂", "mean n_eff"]
    rows = [head]
    for n in (50, 200, 1000):
        rows.append(_row("binary", n, *binary_sets(sets, n, BIG_N, seed=n), 0.3, rg=True))
    for n in (50, 200, 1000):
        rows.append(_row("graded", n, *graded_sets(sets, n, BIG_N, seed=10 + n), 5.0, rg=False))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(f"\n{sets} data sets per row, {BIG_N} unlabelled items; nominal coverage 0.95; "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()

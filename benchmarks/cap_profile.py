"""CAP profile of every shipped judge on every set (JudgeBench + LLMBar published outputs) with
1,000-resample bootstrap intervals for every cell: the vectorised estimator (one
(n_boot x n_units) multiplicity matrix times all cells' unit numerators/denominators) against a
per-resample Python loop that recomputes each cell from resampled item indices. Prints the wall
times and their ratio from one run, and checks both give the same point estimates.

Usage: python benchmarks/cap_profile.py [DATA_DIR]   (default: $JUDGEAUDIT_DATA_DIR, else the sets
bundled in judgeaudit/data: the LLMBar slice and judgeaudit's own JudgeBench-format fixture, whose judges are
simulated)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import judgeaudit
from judgeaudit.analyses.cap import cap_profile
from judgeaudit.datasets import judgebench, llmbar
from judgeaudit.stats.resample import bootstrap_indices

N_BOOT = 1000


def load(root: Path):
    jb_root = root / "judgebench" if (root / "judgebench").is_dir() else root / "judgebench_fixture"
    jb = judgebench.load_pairs(jb_root)
    lb = llmbar.load_pairs(root / "llmbar")
    pairs = pd.concat([jb, lb], ignore_index=True)
    tables = {**judgebench.published_judges(jb_root), **llmbar.published_judges(root / "llmbar")}
    cov = {"judgebench": judgebench.COVERAGE, **{s: llmbar.COVERAGE[s] for s in lb["source_set"].unique()}}
    return pairs, tables, cov


def loop_profile(pairs: pd.DataFrame, tables: dict, cov: dict, n_boot: int, seed: int = 0) -> dict:
    """Reference: for each set, judge and cell, a Python loop over resamples of the items."""
    rng = np.random.default_rng(seed)
    out = {}
    for s, rows in pairs.groupby("source_set", sort=False):
        rows = rows.reset_index(drop=True)
        idx = bootstrap_indices(len(rows), n_boot, rng)
        for jid, t in tables.items():
            j = rows[["pair_id", "label", "subset"]].merge(t, on="pair_id", how="inner")
            if j.empty:
                continue
            j = rows[["pair_id"]].merge(j, on="pair_id", how="left")
            ok = (j["choice_ab"].notna() & j["choice_ba"].notna()).to_numpy()
            ab = (j["choice_ab"] == j["label"]).to_numpy().astype(float)
            ba = (j["choice_ba"] == j["label"]).to_numpy().astype(float)
            cells = {"overall": (0.5 * (ab + ba), ok), "C7": (ab * ba, ok),
                     "C7c": ((j["choice_ab"] == j["choice_ba"]).to_numpy().astype(float), ok)}
            for code, cell in cov[s].items():
                if code in ("C1", "C2", "C3", "C4") and cell.status != "unavailable":
                    m = ok & j["subset"].isin(cell.subsets or j["subset"].unique()).to_numpy()
                    cells[code] = (0.5 * (ab + ba), m)
            for code, (v, m) in cells.items():
                reps = np.empty(n_boot)
                for b in range(n_boot):  # the per-resample loop
                    ii = idx[b]
                    mm = m[ii]
                    reps[b] = v[ii][mm].mean() if mm.any() else np.nan
                out[(s, jid, code)] = (v[m].mean(), np.nanquantile(reps, [0.025, 0.975]))
    return out


def main() -> None:
    arg = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("JUDGEAUDIT_DATA_DIR")
    root = Path(arg) if arg else Path(judgeaudit.__file__).parent / "data"
    pairs, tables, cov = load(root)
    n_cells_note = f"{len(tables)} judges, {pairs['source_set'].nunique()} sets, {len(pairs)} pairs"
    t0 = time.perf_counter()
    res = cap_profile(pairs, tables, cov, n_boot=N_BOOT, seed=0, n_perm=999)
    t_vec = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = loop_profile(pairs, tables, cov, N_BOOT)
    t_loop = time.perf_counter() - t0
    n_cells = int((res.cells["n"] > 0).sum())
    # same point estimates
    diffs = []
    for (s, jid, code), (point, _) in ref.items():
        metric = "consistency" if code == "C7c" else ("strict" if code == "C7" else "value")
        v = res.value(s, jid, "C7" if code == "C7c" else code, metric)
        if v is not None:
            diffs.append(abs(v - point))
    print(f"data: {root} ({n_cells_note}); {N_BOOT} resamples per cell")
    print(f"vectorised cap_profile (all {n_cells} cells, incl. bias correction, Spearman, L1): {t_vec:.2f} s")
    print(f"per-resample loop ({len(ref)} cells: overall, content, C7 strict/consistency only): {t_loop:.2f} s")
    print(f"ratio loop / vectorised: {t_loop / t_vec:.1f}x overall; per cell "
          f"{(t_loop / len(ref)) / (t_vec / n_cells):.1f}x  (max |point difference| {max(diffs):.2e})")


if __name__ == "__main__":
    main()

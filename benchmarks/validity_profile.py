"""Benchmark: the (S, R) profile for 7 judges × 600 probes × 2,000 bootstrap resamples.

The vectorised implementation (``judgeaudit.analyses.validity.validity_profile``: one base-item
counts matrix times a matrix of per-base statistics) against a plain per-resample Python loop
(written here only), both on the same resamples, measured side by side in one run, and checked
to give the same intervals. Run: ``python benchmarks/validity_profile.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analyses"))
from simulate_validity import make_probes, planted, simulate_grades  # noqa: E402

from judgeaudit.analyses.validity import SLOT_ORDER, validity_profile  # noqa: E402
from judgeaudit.probes.taxonomy import axis_of  # noqa: E402
from judgeaudit.stats.resample import bootstrap_indices, percentile_ci  # noqa: E402

N_BASE, N_JUDGES, N_BOOT, LEVEL, SEED = 50, 7, 2000, 0.95, 0


def loop_bootstrap(probes: pd.DataFrame, verdicts: pd.DataFrame, judge_id: str, tau: float) -> dict[str, list]:
    """Percentile intervals of S, R, R_scope, R_strength, the gap and every slot's flip rate at τ,
    one resample at a time: for each resample, walk its drawn base items and average Eq. (6)."""
    v = verdicts[(verdicts["judge_id"] == judge_id) & (verdicts["epoch"] == 0)]
    grade = dict(zip(v["request_id"], v["score"], strict=True))
    bases = sorted(pd.unique(probes["base_id"]))
    subsets = ["control", "construct", "scope", "strength"] + [f"slot:{s}" for s in SLOT_ORDER]
    per_base: dict[str, dict[str, float]] = {b: {} for b in bases}
    for b, grp in probes.groupby("base_id"):
        members: dict[str, list[float]] = {k: [] for k in subsets}
        for pid, slot in zip(grp["probe_id"], grp["slot"], strict=True):
            flip = float((grade[b] >= tau) != (grade[pid] >= tau))
            ax = axis_of(slot)
            members["control" if ax == "control" else "construct"].append(flip)
            if ax != "control":
                members[ax].append(flip)
            members[f"slot:{slot}"].append(flip)
        per_base[b] = {k: sum(x) / len(x) for k, x in members.items() if x}
    idx = bootstrap_indices(len(bases), N_BOOT, SEED)
    draws: dict[str, list[float]] = {k: [] for k in subsets + ["gap"]}
    for row in idx:
        est = {}
        for k in subsets:
            vals = [per_base[bases[i]][k] for i in row if k in per_base[bases[i]]]
            est[k] = sum(vals) / len(vals) if vals else float("nan")
            draws[k].append(est[k])
        draws["gap"].append(est["scope"] - est["strength"])
    out = {}
    for k, x in draws.items():
        lo, hi = percentile_ci(np.array(x), LEVEL)
        out[k] = [float(lo), float(hi)]
    out["S"] = [1 - out["control"][1], 1 - out["control"][0]]
    return out


def main() -> None:
    probes = make_probes(N_BASE, seed=1)
    judges = []
    for j in range(N_JUDGES):
        fp = planted(0.04 + 0.01 * j, 0.25 + 0.05 * j, 0.15 + 0.04 * j)
        judges.append(simulate_grades(probes, fp, seed=100 + j, judge_id=f"judge{j}"))
    verdicts = pd.concat(judges, ignore_index=True)
    print(f"{N_JUDGES} judges × {len(probes)} probes ({N_BASE} base items) × {N_BOOT} bootstrap resamples")

    validity_profile(probes, verdicts, n_boot=10, n_perm=10)  # warm-up: imports, first-call costs
    t0 = time.perf_counter()
    rest = validity_profile(probes, verdicts, n_boot=0, n_perm=0, level=LEVEL, seed=SEED)
    t_rest = time.perf_counter() - t0

    t0 = time.perf_counter()
    res = validity_profile(probes, verdicts, n_boot=N_BOOT, n_perm=0, level=LEVEL, seed=SEED)
    t_vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    loops = {j.judge_id: loop_bootstrap(probes, verdicts, j.judge_id, j["tau"]) for j in rest.judges}
    t_loop = time.perf_counter() - t0 + t_rest

    t0 = time.perf_counter()
    validity_profile(probes, verdicts, n_boot=N_BOOT, n_perm=2000, level=LEVEL, seed=SEED)
    t_full = time.perf_counter() - t0

    worst = 0.0
    for j in res.judges:
        lp = loops[j.judge_id]
        pairs = [(j["S_ci"], lp["S"]), (j["R_ci"], lp["construct"]), (j["R_scope_ci"], lp["scope"]),
                 (j["R_strength_ci"], lp["strength"]), (j["gap_ci"], lp["gap"])]
        pairs += [(j["per_slot"][s]["flip_rate_ci"], lp[f"slot:{s}"]) for s in SLOT_ORDER]
        for a, b in pairs:
            worst = max(worst, float(np.max(np.abs(np.array(a) - np.array(b)))))
    same = worst < 1e-9
    print(f"vectorised profile (counts matrix @ per-base stats): {t_vec:8.3f} s")
    print(f"per-resample Python loop profile:                    {t_loop:8.3f} s")
    print(f"ratio loop / vectorised:                             {t_loop / t_vec:8.1f} x")
    boot_vec, boot_loop = max(t_vec - t_rest, 1e-9), t_loop - t_rest
    print(f"bootstrap part only: loop {boot_loop:.3f} s / vectorised {boot_vec:.3f} s = {boot_loop / boot_vec:.0f} x")
    print(f"same intervals: {same} (largest difference {worst:.2e})")
    print(f"full profile incl. 2,000-permutation gap nulls (vectorised): {t_full:.3f} s")
    if not same:
        raise SystemExit("vectorised and loop intervals differ")


if __name__ == "__main__":
    main()

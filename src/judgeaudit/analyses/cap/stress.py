"""Stress degradation (conditional-accuracy-profiles.txt App. M, Eq. 3, Table 6): a judge's CAP on a
base set minus its CAP on a stress set, per condition measured the same way on both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITION_CODES, MAIN_STATUSES
from judgeaudit.errors import InputError
from judgeaudit.stats.resample import percentile_interval


def _values(cells: pd.DataFrame, set_name: str, code: str) -> pd.DataFrame:
    return cells[(cells["set"] == set_name) & (cells["condition"] == code) & (cells["metric"] == "value")
                 & cells["value"].notna()]


def _stress_table(cells: pd.DataFrame, boots: dict, pairs: list[tuple[str, str]],
                  level: float) -> pd.DataFrame:
    """Eq. 3 / Table 6: δ_c(j) = CAP_c(j; base) − CAP_c(j; stress) for every judge and condition
    measured the same way on both sets (a main-table cell, direct or approximate, with one status
    on both: augmented cells and a direct cell against an approximate one are left out), and per
    judge the mean over its C1–C7 rows (Table 6's "Mean"; C8 is reported but omitted from the mean,
    as there). Intervals are percentile intervals of the difference (or of the mean difference) of
    the two sets' independent bootstrap replicates."""
    rows = []
    known = set(cells["set"])
    for base, stress in pairs:
        for s in (base, stress):
            if s not in known:
                raise InputError(f"stress pair names unknown set {s!r}; sets: {', '.join(sorted(known))}",
                                 field="stress")
        per_judge: dict[str, list[tuple[float, np.ndarray | None]]] = {}
        for code in CONDITION_CODES:
            vb, vs = _values(cells, base, code), _values(cells, stress, code)
            vb = vb[vb["coverage"].isin(MAIN_STATUSES)].set_index("judge_id")
            vs = vs[vs["coverage"].isin(MAIN_STATUSES)].set_index("judge_id")
            for jid in sorted(set(vb.index) & set(vs.index)):
                if vb.loc[jid, "coverage"] != vs.loc[jid, "coverage"]:
                    continue
                bb, bs = boots.get((base, jid, code, "value")), boots.get((stress, jid, code, "value"))
                diff = bb - bs if bb is not None and bs is not None and len(bb) == len(bs) else None
                delta = float(vb.loc[jid, "value"]) - float(vs.loc[jid, "value"])
                in_mean = code != "C8"
                if in_mean:
                    per_judge.setdefault(jid, []).append((delta, diff))
                rows.append(_stress_row(base, stress, jid, code, delta, diff, level, vb.loc[jid, "coverage"],
                                        vs.loc[jid, "coverage"], in_mean))
        for jid, ds in per_judge.items():
            diffs = [d for _, d in ds]
            diff = None if any(d is None for d in diffs) else np.mean(diffs, axis=0)
            rows.append(_stress_row(base, stress, jid, "mean", float(np.mean([d for d, _ in ds])), diff, level,
                                    None, None, False))
    return pd.DataFrame(rows, columns=["base", "stress", "judge_id", "condition", "delta", "ci_lo", "ci_hi",
                                       "coverage_base", "coverage_stress", "in_mean"])


def _stress_row(base: str, stress: str, jid: str, code: str, delta: float, diff: np.ndarray | None,
                level: float, cov_base: str | None, cov_stress: str | None, in_mean: bool) -> dict[str, Any]:
    lo, hi = (np.nan, np.nan) if diff is None else percentile_interval(diff, level)
    return {"base": base, "stress": stress, "judge_id": jid, "condition": code, "delta": delta,
            "ci_lo": float(lo), "ci_hi": float(hi), "coverage_base": cov_base, "coverage_stress": cov_stress,
            "in_mean": in_mean}

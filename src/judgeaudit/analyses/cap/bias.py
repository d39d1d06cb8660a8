"""The Appendix K position-bias correction (conditional-accuracy-profiles.txt App. K) with its joint
bootstrap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgeaudit.analyses.cap.conditions import CONTENT
from judgeaudit.stats.resample import percentile_ci


def bias_correct(raw: float, q0: float, q1: float) -> float:
    """Appendix K plug-in correction: (CAP_raw + q0 − 1) / (q0 + q1 − 1).

    q1 is the judge's accuracy when the better response is shown first and q0 when it is shown
    second (position-conditional accuracies on the same set). Values above 1 are *saturated*:
    the correction over-compensates (the paper reports them flagged, not clipped). A
    denominator q0 + q1 − 1 ≤ 0 (a judge no better than chance across positions) leaves the
    correction undefined: NaN, never a number."""
    den = q0 + q1 - 1
    if not den > 0:
        return float("nan")
    return float((raw + q0 - 1) / den)


def _bias_rows(set_name: str, judges: list[str], est: dict[tuple[str, str, str], tuple],
               level: float) -> list[dict[str, Any]]:
    """Appendix K table rows of one set: the plug-in correction of overall and C1–C4 with a joint
    bootstrap in which the raw cell, q0 and q1 are all recomputed from the same resampled base
    items (their standard errors are the bootstrap standard deviations, so clustering of rows
    within a base item and the correlation of raw with q are carried). A point or replicate with
    q0 + q1 − 1 ≤ 0 is undefined: the row is flagged ``undefined`` with no value, and replicates
    with a non-positive denominator are left out of the interval and counted (``boot_undefined``)."""
    out = []
    for jid in judges:
        q0, q1 = est.get((jid, "overall", "q0")), est.get((jid, "overall", "q1"))
        if q0 is None or q1 is None or q0[4] is None or q1[4] is None:
            continue
        den_b = q0[4] + q1[4] - 1
        den = q0[0] + q1[0] - 1
        for code in ("overall",) + CONTENT:
            raw = est.get((jid, code, "value"))
            if raw is None or raw[3] == 0 or raw[4] is None:
                continue
            undefined = not den > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                cb = np.where(den_b > 0, (raw[4] + q0[4] - 1) / den_b, np.nan)
                lo, hi = (np.nan, np.nan) if undefined else percentile_ci(cb, level)
            corrected = bias_correct(raw[0], q0[0], q1[0])
            out.append({"set": set_name, "judge_id": jid, "condition": code, "raw": raw[0], "q0": q0[0],
                        "q1": q1[0], "se_q0": float(np.nanstd(q0[4], ddof=1)),
                        "se_q1": float(np.nanstd(q1[4], ddof=1)), "denominator": float(den),
                        "corrected": corrected, "ci_lo": float(lo), "ci_hi": float(hi),
                        "saturated": bool(not undefined and corrected > 1.0),
                        "ci_above_1": bool(not undefined and lo > 1.0), "undefined": undefined,
                        "boot_undefined": float(np.mean(~(den_b > 0)))})
    return out

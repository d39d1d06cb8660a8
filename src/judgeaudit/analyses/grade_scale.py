"""The scale a judge grades on, as the validity analysis reads it (construct-validity.txt Remark 1).

The validity profile flags ``score ≥ τ`` and reads a higher grade as more of the defect (judgeaudit's
1–9 overreach scale). A judge whose scale runs the other way (the MT-Bench 1–10 quality rating, a
Prometheus 1–5 rubric, pass = 1 / fail = 0) is read on its reflected grade ``min + max − score``, so
that flagging and the labelled direction (R⁺) mean the same thing for every judge; every threshold
the judge's own scale attains is still a point of its frontier, and a two-point scale (pass/fail, or
any binary grade) has exactly one threshold that is not a constant corner: the judge is one
operating point, not a curve (Remark 1; the two corners are Proposition 2's degenerate judges).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgeaudit.judges.scale import OVERREACH_SCALE, Scale


def orient(verdicts: pd.DataFrame, scales: Mapping[str, Scale]) -> pd.DataFrame:
    """The verdict table with each judge's grades on a "higher is more defect" reading: the grade of a
    judge whose scale's ``higher`` is ``"better"`` becomes ``min + max − score``; other rows unchanged."""
    out = verdicts.copy()
    if not len(out) or "score" not in out:
        return out
    score = pd.to_numeric(out["score"], errors="coerce")
    for judge_id, scale in scales.items():
        if scale.higher == "better":
            rows = out["judge_id"] == judge_id
            score = score.where(~rows, scale.min + scale.max - score)
    out["score"] = score
    return out


def scale_record(scale: Scale | None, profile: Mapping[str, Any]) -> dict[str, Any]:
    """What a validity result records of a judge's scale: the scale, how its grades were read, and —
    for a two-point scale — that the frontier is one operating point. ``profile`` is the judge's
    entry in the result (``frontier``, ``tau``)."""
    scale = scale or OVERREACH_SCALE
    rec: dict[str, Any] = {**scale.to_dict(), "reflected": scale.higher == "better"}
    if scale.higher == "better":
        rec["reading"] = (f"grades reflected ({scale.min} + {scale.max} - grade) so that a higher grade is more of "
                          "the defect; tau and the frontier's thresholds are on the reflected grade")
    else:
        rec["reading"] = "a higher grade is more of the defect; tau is on the judge's own grade"
    frontier = profile.get("frontier") or []
    inner = max(len(frontier) - 2, 0)   # every attained threshold but the two constant corners
    rec["thresholds"] = len(frontier)
    rec["operating_points"] = inner
    if scale.binary:
        rec["binary"] = True
        rec["note"] = ("a two-point scale: at most one threshold is not a constant corner, so the judge is at most a "
                       "single operating point, not a frontier (construct-validity Remark 1, Prop. 2)")
    return rec

"""Reading a judge's own scale in the validity analysis: reflection of a higher-is-better scale, and a
two-point scale reported as one operating point (construct-validity Remark 1, Prop. 2)."""

from __future__ import annotations

import pandas as pd

from judgeaudit.analyses.grade_scale import orient, scale_record
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale


def test_orient_reflects_only_the_judges_whose_higher_grade_is_better():
    v = pd.DataFrame({"judge_id": ["mt", "mt", "ours", "pf"], "score": [7.0, 10.0, 7.0, 1.0]})
    got = orient(v, {"mt": Scale(min=1, max=10, higher="better"), "ours": OVERREACH_SCALE, "pf": Scale.passfail()})
    assert got["score"].tolist() == [4.0, 1.0, 7.0, 0.0]
    assert v["score"].tolist() == [7.0, 10.0, 7.0, 1.0]   # the input table is left as it was


def test_a_two_point_scale_is_one_operating_point():
    rec = scale_record(Scale.passfail(), {"frontier": [[0.2, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 2.0]]})
    assert rec["binary"] and rec["operating_points"] == 1 and rec["label"] == "pass/fail" and rec["reflected"]
    rec = scale_record(None, {"frontier": [[0.0, 1.0, 1.0], [0.5, 0.8, 4.0], [0.9, 0.5, 6.0], [1.0, 0.0, 10.0]]})
    assert rec["label"] == "1-9" and rec["operating_points"] == 2 and "binary" not in rec and not rec["reflected"]

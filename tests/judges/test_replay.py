from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from judgeaudit.commands.common import build_judges
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict, verdicts_frame


def _table():
    vs = [Verdict(call_key=f"k{i}", request_id=f"r{i}", judge_id=j, score=float(i % 9 + 1), parse_ok=True)
          for j in ("alpha", "beta") for i in range(5)]
    return verdicts_frame(vs)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_round_trip(tmp_path, suffix):
    df = _table()
    path = tmp_path / f"v{suffix}"
    if suffix == ".parquet":
        df[["request_id", "judge_id", "score"]].to_parquet(path)
    elif suffix == ".csv":
        df[["request_id", "judge_id", "score"]].to_csv(path, index=False)
    else:
        df[["request_id", "judge_id", "score"]].to_json(path, orient="records", lines=True)
    judges = build_judges([f"replay:{path}"])
    assert [j.id for j in judges] == ["alpha", "beta"]
    reqs = [JudgeRequest(request_id=f"r{i}", text="t") for i in range(6)]
    out = asyncio.run(judges[1].judge(reqs))
    assert [v.score for v in out[:5]] == df[df.judge_id == "beta"]["score"].tolist()
    assert out[5].error == "not in replay file" and not out[5].parse_ok


def test_column_mapping_and_errors(tmp_path):
    p = tmp_path / "mine.csv"
    pd.DataFrame({"id": ["a", "b"], "verdict": ["A", "tie"]}).to_csv(p, index=False)
    j = make_judge(f"replay:{p}?request_id=id&choice=verdict")
    out = asyncio.run(j.judge([JudgeRequest(request_id="b", form="pairwise", prompt="q", response_a="x",
                                            response_b="y")]))
    assert out[0].choice == "tie" and out[0].parse_ok
    pd.DataFrame({"id": ["a"], "verdict": ["C"]}).to_csv(p, index=False)
    with pytest.raises(InputError, match=r"mine.csv:2: field 'choice'"):
        make_judge(f"replay:{p}?request_id=id&choice=verdict")
    with pytest.raises(InputError, match="request_id"):
        make_judge(f"replay:{p}")
    both = tmp_path / "both.parquet"
    _table().drop(columns=["defects", "score_dist", "meta"]).to_parquet(both)
    with pytest.raises(InputError, match="pick one with"):
        make_judge(f"replay:{both}")
    with pytest.raises(InputError, match="file not found"):
        make_judge(f"replay:{tmp_path}/missing.jsonl")


def test_error_column_is_a_failed_call(tmp_path):
    p = tmp_path / "v.jsonl"
    pd.DataFrame({"request_id": ["a", "b"], "score": [3, None], "error": [None, "timed out"]}).to_json(
        p, orient="records", lines=True)
    out = asyncio.run(make_judge(f"replay:{p}").judge([JudgeRequest(request_id=r, text="t") for r in "ab"]))
    assert [(v.score, v.error, v.parse_ok) for v in out] == [(3.0, None, True), (None, "timed out", False)]

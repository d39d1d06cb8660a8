from judgeaudit.records import Verdict
from judgeaudit.runtime.store import CallStore


def _v(key, score=3.0, error=None, judge="j"):
    return Verdict(call_key=key, request_id=key, judge_id=judge, score=score, parse_ok=error is None,
                   error=error, cost_usd=0.01 if error is None else None)


def test_completed_call_is_never_overwritten_and_failed_call_is_retried(tmp_path):
    with CallStore(tmp_path / "s.sqlite") as s:
        s.put(_v("a", error="HTTP 500"))
        assert s.completed(["a"]) == {}
        s.put(_v("a", score=4.0))                     # the retry succeeds
        s.put(_v("a", error="late failure"))          # must not replace the success
        got = s.get_many(["a"])["a"]
        assert got[0] == "ok" and got[1].score == 4.0 and got[2] == 2
    with CallStore(tmp_path / "s.sqlite") as s:       # persisted across reopen
        assert s.completed(["a", "b"])["a"].score == 4.0
        assert len(s) == 1


def test_stats_and_export_round_trip(tmp_path):
    import pandas as pd

    with CallStore(tmp_path / "s.sqlite") as s:
        s.put(_v("a", judge="x"))
        s.put(_v("b", judge="x", error="boom"))
        s.put(Verdict(call_key="c", request_id="c", judge_id="y", parse_ok=False))
        st = s.stats().set_index("judge_id")
        assert st.loc["x", "ok"] == 1 and st.loc["x", "errors"] == 1
        assert st.loc["y", "parse_failures"] == 1
        assert abs(st.loc["x", "cost_usd"] - 0.01) < 1e-12
        s.export(tmp_path / "e.parquet")
        s.export(tmp_path / "e.jsonl")
    df = pd.read_parquet(tmp_path / "e.parquet")
    assert sorted(df["call_key"]) == ["a", "b", "c"]
    assert len(pd.read_json(tmp_path / "e.jsonl", lines=True)) == 3

"""The per-judge summary of failed calls and parse failures (counts and first distinct reasons)."""

from __future__ import annotations

from judgeaudit.records import Verdict
from judgeaudit.runtime.failures import MAX_REASONS, recording, record, summarise


def _v(judge: str, i: int, *, error: str | None = None, parse_ok: bool = True, meta: dict | None = None,
       raw: str | None = None) -> Verdict:
    return Verdict(call_key=f"{judge}{i}", request_id=f"r{i}", judge_id=judge, error=error,
                   parse_ok=parse_ok and error is None, meta=meta or {}, raw=raw)


def test_counts_and_first_distinct_reasons_per_judge():
    rows = [_v("a", 0), _v("a", 1, error="x"), _v("a", 2, error="x"), _v("a", 3, error="y"),
            _v("a", 4, parse_ok=False, meta={"parse_error": "no score"}), _v("a", 5),
            _v("a", 6, error="z"), _v("a", 7, error="w"),
            _v("b", 0), _v("b", 1),
            _v("c", 0, error="cannot load"), _v("c", 1, parse_ok=False, raw="I would rather not say.")]
    s = summarise(rows)
    a, b, c = s.judges
    assert (a.judge_id, a.calls, a.failed_calls, a.parse_failures, a.usable) == ("a", 8, 5, 1, 2)
    assert a.reasons == ("x", "y", "unparseable: no score") and MAX_REASONS == 3
    assert (b.calls, b.failed_calls, b.parse_failures, b.usable, b.reasons) == (2, 0, 0, 2, ())
    assert (c.calls, c.failed_calls, c.parse_failures, c.usable) == (2, 1, 1, 0)
    assert c.reasons == ("cannot load", "unparseable: answer 'I would rather not say.'")
    assert [j.judge_id for j in s.unusable()] == ["c"]
    assert s.failure_line() == ("judge 'c' produced no usable verdict: 1 of 2 calls failed, 1 unparseable; "
                                "first error: cannot load")
    assert s.to_dict()["a"] == {"calls": 8, "failed_calls": 5, "parse_failures": 1, "usable": 2,
                                "reasons": ["x", "y", "unparseable: no score"]}
    assert summarise(rows[:8]).failure_line() is None


def test_recording_collects_nested_runs():
    with recording() as outer:
        record([_v("a", 0)])
        with recording() as inner:
            record([_v("b", 0, error="e")])
        assert [v.judge_id for v in inner.verdicts] == ["b"]
    record([_v("z", 0)])                        # outside any recording: dropped
    assert [v.judge_id for v in outer.verdicts] == ["a", "b"]
    assert outer.summary().to_dict()["b"]["failed_calls"] == 1

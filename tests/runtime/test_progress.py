"""Signs of life for long runs: a cost/time estimate before the first call, and progress lines on stderr
when it is not a terminal."""

from __future__ import annotations

import math
import re

import pytest

from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime.estimate import MEASURED_MIN, estimate
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

LINE = re.compile(r"^fake: (\d+)/(\d+) calls \(\d+%\), [\d.]+ calls/s, ETA [^,]+, (\d+) failed, (\d+) in flight, "
                  r"(\d+) retries$")


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text=f"claim {i}", evidence="e") for i in range(n)]


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path, fake_server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: "Score: 4", latency=0.01)
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
    policy = RetryPolicy(max_retries=0)
    with CallStore(tmp_path / "calls.sqlite") as store:
        run(judge, _requests(4), store=store, policy=policy, progress=False)
        srv.fault("400", times=2, message="context length exceeded")
        verdicts = run(judge, _requests(10), store=store, concurrency=1, policy=policy, progress_every=0)
    err = capsys.readouterr().err.splitlines()
    assert MEASURED_MIN > 4                     # four stored calls do not yet measure a rate
    assert err[0] == "fake: 10 requests, 4 in the store, 6 to call; estimate: time graded: unknown until calls " \
                     "are measured, cost unknown (model not in the LiteLLM cost map)"
    progress = [LINE.match(line) for line in err if LINE.match(line)]
    # one line per completed call (interval 0), in order: done/total and the failures so far
    assert [(int(m[1]), int(m[2]), int(m[3])) for m in progress] == \
        [(1, 6, 1), (2, 6, 2), (3, 6, 2), (4, 6, 2), (5, 6, 2), (6, 6, 2)]
    assert err[-1].startswith("fake: 10 requests, 4 from the store, 6 called in ") and ", 2 failed," in err[-1]
    assert sum(v.error is not None for v in verdicts) == 2


def test_no_progress_lines_with_a_long_interval(tmp_path, fake_server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: "Score: 4")
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
    run(judge, _requests(5), concurrency=1, progress_every=3600)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and not any(LINE.match(line) for line in err)   # the estimate and the closing line


def test_local_estimate_from_its_plan_and_from_measured_calls():
    local = make_judge("local")
    reqs = _requests(7)
    # no stored calls: the local judge's own plan (the tokens each call evaluates, timed by a warm-up here)
    e = estimate(local, reqs, cached={})
    assert (e.calls, e.cached) == (7, 0) and e.cost_usd == 0.0
    planned = local.planned_seconds(reqs)
    assert planned["graded"][0] == 7 and e.seconds == pytest.approx(planned["graded"][1])
    assert "planned from a timed warm-up" in e.describe()
    # vote:3 asks each request three times in a row: the plan of those calls, the repeats from the prompt cache
    voted = estimate(make_judge("vote:3:local"), reqs, cached={})
    thrice = local.planned_seconds([r for r in reqs for _ in range(3)])
    assert voted.seconds == pytest.approx(sum(sec for _, sec in thrice.values()))
    # the judge's own stored calls measure its rate: mean latency 2.0 s over MEASURED_MIN calls
    lat = [1.0, 2.0, 3.0] + [2.0] * (MEASURED_MIN - 3)
    cached = {f"k{i}": Verdict(call_key=f"k{i}", request_id=f"c{i}", judge_id="local", latency_s=x, parse_ok=True)
              for i, x in enumerate(lat)}
    e = estimate(local, reqs, cached=cached)
    assert (e.calls, e.cached) == (7, MEASURED_MIN) and e.seconds == pytest.approx(7 * 2.0)
    assert "measured" in e.describe()


def test_api_estimate_from_the_litellm_cost_map():
    import litellm

    judge = make_judge("api:openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    reqs = _requests(5)
    info = litellm.model_cost["gpt-4o-mini"]
    tokens_in = sum(math.ceil(len(judge.render(r)) / 4) for r in reqs)
    expected = tokens_in * info["input_cost_per_token"] + 5 * 16 * info["output_cost_per_token"]
    e = estimate(judge, reqs, cached={})
    assert e.cost_usd == pytest.approx(expected) and e.seconds is None
    assert "LiteLLM cost map" in e.describe()


def test_progress_lines_report_calls_in_flight_and_retries_before_any_completes(fake_server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: "Score: 4", latency=1.5)
    srv.fault("500", times=1)
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
    policy = RetryPolicy(max_retries=2, base_delay=0.0)
    run(judge, _requests(2), concurrency=2, policy=policy, progress_every=0.4)
    lines = [LINE.match(line) for line in capsys.readouterr().err.splitlines()]
    seen = [(int(m[1]), int(m[4]), int(m[5])) for m in lines if m]
    # (done, in flight, retries): lines while nothing has completed yet, then the retried call in flight
    assert (0, 2, 0) in seen and (1, 1, 1) in seen, seen

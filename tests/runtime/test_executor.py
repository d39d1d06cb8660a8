"""The api backend through LiteLLM against the local server: faults, retries, resumption."""

from __future__ import annotations

import dataclasses
import time

import pytest

from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

FAST = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05, timeout=2.0)
# the slow fault answers after 3 s: a 1 s timeout gives it up as surely as 2 s do, in half the wait
FAST_TIMEOUT = dataclasses.replace(FAST, timeout=1.0)


def _requests(n):
    return [JudgeRequest(request_id=f"r{i}", text=f"claim number {i}", evidence="evidence") for i in range(n)]


def _judge(srv, **kw):
    return make_judge("api:openai/fake-judge", api_base=srv.base_url, **kw)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


@pytest.mark.parametrize("fault", ["429", "500", "malformed", "truncated", "slow"])
def test_each_transient_fault_ends_in_one_successful_retry(fake_server, tmp_path, fault):
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault(fault, times=2, retry_after=0.3, delay=3.0)
    store = CallStore(tmp_path / "s.sqlite")
    started = time.perf_counter()
    [v] = run(_judge(srv), _requests(1), store=store, policy=FAST_TIMEOUT if fault == "slow" else FAST,
              progress=False)
    elapsed = time.perf_counter() - started
    assert v.error is None and v.parse_ok and v.score == 7.0 and v.score_source == "parsed"
    assert len(srv.requests) == 3                      # two faults, one success
    assert sum(srv.answered.values()) == 1             # one answer bought, stored once
    assert len(store) == 1 and store.completed([v.call_key])[v.call_key].score == 7.0
    if fault == "429":
        assert elapsed >= 0.6                          # Retry-After (0.3 s) honoured twice


def test_unparseable_verdict_is_a_recorded_parse_failure_not_a_retry(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "Score: 2")
    srv.fault("garbage")
    store = CallStore(tmp_path / "s.sqlite")
    [v] = run(_judge(srv), _requests(1), store=store, policy=FAST, progress=False)
    assert v.error is None and not v.parse_ok and v.score is None
    assert v.raw == "I would rather not say." and "parse_error" in v.meta
    assert len(srv.requests) == 1
    run(_judge(srv), _requests(1), store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 1                      # a completed call, never re-bought


def test_exhausted_retries_are_recorded_then_retried_on_the_next_run(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "Score: 4")
    srv.fault("500", times=FAST.max_retries + 1)
    store = CallStore(tmp_path / "s.sqlite")
    [v] = run(_judge(srv), _requests(1), store=store, policy=FAST, progress=False)
    assert v.error and "gave up after 5 attempts" in v.error
    assert store.completed([v.call_key]) == {}
    assert store.frame()["status"].tolist() == ["error"]
    [v2] = run(_judge(srv), _requests(1), store=store, policy=FAST, progress=False)
    assert v2.error is None and v2.score == 4.0
    assert store.frame()["status"].tolist() == ["ok"] and store.frame()["attempts"].tolist() == [2]


def test_rerun_calls_only_what_is_missing(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "Score: 5")
    store = CallStore(tmp_path / "s.sqlite")
    run(_judge(srv), _requests(10)[:6], store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 6
    out = run(_judge(srv), _requests(10), store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 10 and [v.request_id for v in out] == [f"r{i}" for i in range(10)]
    # a different sampling parameter or epoch is a different call
    run(_judge(srv, temperature=0.5), _requests(1), store=store, policy=FAST, progress=False)
    run(_judge(srv), [_requests(1)[0].model_copy(update={"epoch": 1})], store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 12


def test_logprobs_give_a_distribution_when_the_provider_returns_them(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "3", logprobs=True)
    [v] = run(_judge(srv), _requests(1), store=None, policy=FAST, progress=False)
    assert v.score_source == "logprobs" and len(v.score_dist) == 9
    assert abs(sum(v.score_dist) - 1) < 1e-9 and abs(v.score_dist[2] - 0.7) < 1e-6
    assert abs(v.score - sum(p * s for p, s in zip(v.score_dist, range(1, 10)))) < 1e-9
    assert srv.requests[0]["logprobs"] is True


def test_rate_limit_spaces_calls(fake_server):
    srv = fake_server(responder=lambda p: "Score: 5")
    started = time.perf_counter()
    run(_judge(srv), _requests(4), rpm=600, policy=FAST, progress=False)   # one call per 0.1 s
    assert time.perf_counter() - started >= 0.3


def test_concurrency_is_bounded(fake_server):
    import threading

    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def responder(prompt):
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        time.sleep(0.05)
        with lock:
            active["now"] -= 1
        return "Score: 1"

    srv = fake_server(responder=responder)
    run(_judge(srv), _requests(24), concurrency=4, policy=FAST, progress=False)
    assert active["max"] == 4


def test_requests_that_render_identically_share_one_call_but_keep_their_ids(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "Score: 3")
    same = [JudgeRequest(request_id=i, text="the same claim", evidence="e") for i in ("a", "b")]
    out = run(_judge(srv, id="first"), same, store=CallStore(tmp_path / "s.sqlite"), policy=FAST, progress=False)
    assert len(srv.requests) == 1 and [v.request_id for v in out] == ["a", "b"]
    assert out[0].call_key == out[1].call_key and out[1].score == 3.0
    again = run(_judge(srv, id="second"), same, store=CallStore(tmp_path / "s.sqlite"), policy=FAST, progress=False)
    assert len(srv.requests) == 1 and {v.judge_id for v in again} == {"second"}

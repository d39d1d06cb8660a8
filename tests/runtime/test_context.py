"""A run's configuration travels in one immutable ``RunContext``, given to the executor explicitly: its call
options apply where the run gives none of its own, its batch sink takes the calls, and two runs with two
contexts at once keep each their own."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.batch import Deferred
from judgeaudit.runtime.context import DEFAULT, CallDefaults, RunContext
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

FAST = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05, timeout=2.0)


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text=f"claim number {i}", evidence="evidence") for i in range(n)]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


def test_a_context_is_immutable_and_its_defaults_are_the_executors():
    ctx = RunContext.of(timeout=3.0, retries=1, rpm=60.0, api_base="http://127.0.0.1:9/v1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.api_base = "http://elsewhere"   # type: ignore[misc]
    assert ctx.calls == CallDefaults(timeout=3.0, retries=1, rpm=60.0)
    assert ctx.calls.policy() == RetryPolicy(max_retries=1, timeout=3.0)
    assert DEFAULT.calls.policy() == RetryPolicy() and DEFAULT.sink is None and DEFAULT.api_base is None
    assert DEFAULT.backend.name == "asyncio" and RunContext.of(backend="asyncio").backend.name == "asyncio"
    with pytest.raises(InputError, match="unknown backend 'dask'"):
        RunContext.of(backend="dask")
    with pytest.raises(InputError, match="--ray-address needs --backend"):
        RunContext.of(address="127.0.0.1:6379")


def test_the_contexts_retries_apply_where_the_run_gives_no_policy(fake_server):
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault("500", times=10)
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    [v] = run(judge, _requests(1), progress=False, context=RunContext.of(retries=1, timeout=2.0))
    assert v.error is not None and v.error.startswith("gave up after 2 attempts")   # the one retry it allows
    [w] = run(judge, _requests(2)[1:], progress=False, context=RunContext.of(retries=0, timeout=2.0))
    assert w.error is not None and w.error.startswith("gave up after 1 attempts")


def test_a_runs_own_policy_beats_the_contexts(fake_server):
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault("500", times=2)
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    [v] = run(judge, _requests(1), progress=False, policy=FAST, context=RunContext.of(retries=0))
    assert v.error is None and v.score == 7.0          # two faults, then an answer: FAST's retries, not the context's 0


class _Sink:
    def __init__(self):
        self.taken: dict[str, dict] = {}

    def takes(self, judge) -> bool:   # noqa: ANN001
        return True

    def defer(self, judge, calls, store) -> None:   # noqa: ANN001
        self.taken[judge.id] = dict(calls)


def test_the_contexts_sink_takes_the_missing_calls_and_no_call_is_made(fake_server, tmp_path):
    srv = fake_server(responder=lambda p: "Score: 7")
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    sink = _Sink()
    with CallStore(tmp_path / "calls.sqlite") as store:
        with pytest.raises(Deferred, match="3 calls of api:openai/fake-judge deferred"):
            run(judge, _requests(3), store=store, progress=False, context=RunContext(sink=sink))
        assert srv.requests == []
        assert sorted(r.request_id for r in sink.taken[judge.id].values()) == ["r0", "r1", "r2"]
        verdicts = run(judge, _requests(3), store=store, progress=False, policy=FAST)   # no sink: calls made
    assert [v.score for v in verdicts] == [7.0, 7.0, 7.0] and len(srv.requests) == 3


def test_two_runs_at_once_each_keep_their_own_context(fake_server):
    """What a dynamic scope could leak between threads: one run's retries are not the other's."""
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault("500", times=100)
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)

    def one(retries: int) -> str:
        [v] = run(judge, [JudgeRequest(request_id=f"t{retries}", text=f"claim {retries}", evidence="e")],
                  progress=False, context=RunContext.of(retries=retries, timeout=2.0))
        return v.error or ""

    with ThreadPoolExecutor(2) as pool:
        errors = list(pool.map(one, [0, 2]))
    assert errors[0].startswith("gave up after 1 attempts") and errors[1].startswith("gave up after 3 attempts")

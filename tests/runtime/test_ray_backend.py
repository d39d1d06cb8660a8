"""The Ray executor backend on a local Ray instance (2 CPUs, no dashboard) against the local test server:
the same verdict rows as the asyncio backend, workers that rebuild each judge (an API judge, a ``python:``
callable) from its spec, one writer (the driver) that resumes after being killed, and one-line errors when
Ray is missing or the cluster does not answer. One instance serves the module: starting one costs seconds."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyjudge_callables as cb
import pytest
from fakeserver import FakeServer
from testkit import require_ray

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, verdicts_frame
from judgeaudit.runtime import backends
from judgeaudit.runtime.context import RunContext
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05, timeout=10.0)
KEY = "sk-test-not-a-secret"
TESTS, SRC = Path(__file__).parents[1], Path(__file__).parents[2] / "src"
RUN_DEPENDENT = ["latency_s", "timestamp"]   # how long a call took and when: the only columns that may differ


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray instance for the module; its workers get the test key and this tree's ``judgeaudit`` and
    ``pyjudge_callables`` (tests/ on their PYTHONPATH) from this process's environment."""
    require_ray()
    import ray

    env = {"OPENAI_API_KEY": KEY,
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(SRC), os.environ.get("PYTHONPATH", "")])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _digit(prompt: str) -> int:
    return int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 9 + 1


def _responder(prompt: str) -> str:
    """A score set by the prompt; claims ending in 7 get an answer that is not a verdict."""
    claim = prompt.rsplit("Claim: claim ", 1)[-1].split("\n")[0]
    return "I would rather not say." if claim.endswith("7") else f"Score: {_digit(prompt)}"


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text=f"claim {i}", evidence="evidence") for i in range(n)]


def test_ray_gives_the_asyncio_backends_verdict_rows(ray_cluster, fake_server, tmp_path):
    srv = fake_server(responder=_responder, latency=0.01)
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    reqs = _requests(30)
    with CallStore(tmp_path / "asyncio.sqlite") as a, CallStore(tmp_path / "ray.sqlite") as r:
        by_asyncio = run(judge, reqs, store=a, concurrency=4, policy=FAST, progress=False)
        on_ray = RunContext.of(backend="ray")
        by_ray = run(judge, reqs, store=r, concurrency=4, policy=FAST, progress=False, context=on_ray)
        assert sum(srv.answered.values()) == 60              # each backend bought every call once
        again = run(judge, reqs, store=r, concurrency=4, policy=FAST, progress=False, context=on_ray)
        assert sum(srv.answered.values()) == 60              # a stored call is never bought again
        stored_a, stored_r = (s.frame().drop(columns=RUN_DEPENDENT) for s in (a, r))
    rows_a, rows_r = (verdicts_frame(v).drop(columns=RUN_DEPENDENT) for v in (by_asyncio, by_ray))
    assert rows_r.equals(rows_a)
    assert verdicts_frame(again).drop(columns=RUN_DEPENDENT).equals(rows_a)
    assert stored_r.sort_values("call_key", ignore_index=True).equals(
        stored_a.sort_values("call_key", ignore_index=True))
    # the values themselves: the server's score for each prompt, and 3 parse failures (claims 7, 17, 27)
    assert [v.request_id for v in by_ray] == [q.request_id for q in reqs]
    assert [v.request_id for v in by_ray if not v.parse_ok] == ["r7", "r17", "r27"]
    scores = {v.request_id: v.score for v in by_ray if v.parse_ok}
    expected = {FakeServer.prompt_hash(judge.render(q)): q.request_id for q in reqs}
    assert len(scores) == 27 and all(v.error is None for v in by_ray)
    assert all(h in expected for h in srv.answered)
    assert {rid: scores[rid] for rid in scores} == {
        rid: float(_digit(p)) for rid, p in ((q.request_id, judge.render(q)) for q in reqs) if rid in scores}


def test_workers_rebuild_each_judge_from_its_spec(ray_cluster, fake_server, tmp_path):
    """What travels is the spec: a judge holding something unpicklable still runs; one built without a
    spec must pickle; a spec that rebuilds into another instrument is refused."""
    srv = fake_server(responder=lambda p: f"Score: {_digit(p)}")
    judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    judge.lock = threading.Lock()                        # like a socket or a loaded model: does not pickle
    reqs = _requests(4)
    on_ray = RunContext.of(backend="ray")
    verdicts = run(judge, reqs, policy=FAST, progress=False, context=on_ray)
    assert [v.score for v in verdicts] == [float(_digit(judge.render(q))) for q in reqs]
    judge.recipe = None                                  # built otherwise: sent as it is, and it does not pickle
    with pytest.raises(InputError, match="cannot be sent to Ray workers"):
        run(judge, _requests(1), policy=FAST, progress=False, context=on_ray)
    other = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    other.recipe = ("api:openai/another-model", {"api_base": srv.base_url, "id": "api:openai/fake-judge"})
    with pytest.raises(InputError, match="rebuilt on a Ray worker is another instrument"):
        run(other, _requests(1), policy=FAST, progress=False, context=on_ray)
    assert sum(srv.answered.values()) == 4


@pytest.mark.parametrize("fn", ["grade", "agrade"])
def test_ray_workers_rebuild_the_callable_from_its_spec(ray_cluster, fn, tmp_path):
    """A ``python:package.module:function`` judge: the workers import the callable its spec names and give
    the asyncio backend's verdicts, and a rerun on the same store the same grades."""
    policy = RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05, timeout=120.0)
    reqs = cb.graded_requests(8)
    judge = make_judge(f"python:pyjudge_callables:{fn}?version=3")
    by_asyncio = run(judge, reqs, progress=False, policy=policy)
    cb.CALLS.clear()
    on_ray = RunContext.of(backend="ray")
    with CallStore(tmp_path / "ray.sqlite") as store:
        by_ray = run(judge, reqs, store=store, progress=False, policy=policy, context=on_ray)
        assert cb.CALLS == []                                     # the calls ran in the workers, not here
        again = run(judge, reqs, store=store, progress=False, policy=policy, context=on_ray)
    assert verdicts_frame(by_ray).drop(columns=RUN_DEPENDENT).equals(
        verdicts_frame(by_asyncio).drop(columns=RUN_DEPENDENT))
    assert [v.score for v in again] == [float(cb.expected_grade(t)) for t in cb.TEXTS]


@pytest.mark.parametrize("other", ["asyncio", "ray"])
def test_a_ray_run_and_another_run_sharing_a_store_buy_each_call_once(ray_cluster, fake_server, tmp_path, other):
    """The driver of a Ray run leases each call in the store before sending it, as the asyncio executor does:
    two runs started together on one store (one of them, or both, on Ray) buy every call once between them.
    Without the Ray backend's leases its run buys all n calls whatever the other run holds (2n at most)."""
    srv = fake_server(responder=lambda p: f"Score: {_digit(p)}", latency=0.2)
    db = tmp_path / "calls.sqlite"
    CallStore(db).close()
    n, reqs = 24, _requests(24)
    together = threading.Barrier(2)

    def one_run(backend: str):
        judge = make_judge("api:openai/fake-judge", api_base=srv.base_url)
        context = RunContext.of(backend=backend)
        with CallStore(db) as cs:
            together.wait(timeout=60)
            return run(judge, reqs, store=cs, concurrency=4, policy=FAST, progress=False, context=context)

    with ThreadPoolExecutor(2) as pool:
        by_ray, by_other = pool.map(one_run, ["ray", other])
    assert len(srv.requests) == n                          # each call bought once between the two runs
    expected = [float(_digit(judge_prompt)) for judge_prompt in
                (make_judge("api:openai/fake-judge", api_base=srv.base_url).render(q) for q in reqs)]
    assert [v.score for v in by_ray] == [v.score for v in by_other] == expected
    with CallStore(db) as cs:
        assert len(cs.completed([v.call_key for v in by_ray])) == n
        assert cs._conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0   # every lease released


def _ok_verdicts(db: Path) -> list[dict]:
    if not db.exists():
        return []
    con = sqlite3.connect(db, timeout=30)
    try:
        return [json.loads(r[0]) for r in con.execute("SELECT verdict FROM calls WHERE status='ok'")]
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def test_ray_run_resumes_after_the_driver_is_killed(ray_cluster, tmp_path, cli_main):
    """The killed driver is a real ``judgeaudit`` process (the program's entry point); the rerun is the same
    command line run in this process, a driver on the same cluster."""
    n, concurrency = 80, 4
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                             for i in range(n)))
    db, out = tmp_path / "calls.sqlite", tmp_path / "out"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    with FakeServer(responder=lambda p: f"Score: {_digit(p)}", latency=0.1) as srv:
        args = [sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/fake-judge",
                "--api-base", srv.base_url, "--input", str(items), "--out", str(out), "--store", str(db),
                "--concurrency", str(concurrency), "--backend", "ray", "--ray-address", ray_cluster]
        with (tmp_path / "run1.log").open("w") as log1:
            proc = subprocess.Popen(args, env=env, stdout=log1, stderr=subprocess.STDOUT)
            deadline = time.time() + 300  # Ray workers start slowly on a loaded machine; the loop ends at 20 stored
            while len(_ok_verdicts(db)) < 20 and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        before = {v["call_key"]: v for v in _ok_verdicts(db)}
        assert 20 <= len(before) < n, (tmp_path / "run1.log").read_text()
        answered_before = {FakeServer.prompt_hash(p) for p in _prompts(srv, {v["request_id"] for v in before.values()})}
        assert len(answered_before) == len(before)

        srv.latency = 0   # the latency kept the kill mid-run; nothing kills the rerun
        again = cli_main(*args[3:])
        assert again.returncode == 0, again.stderr
        final = _ok_verdicts(db)
        assert len(final) == n and len({v["request_id"] for v in final}) == n
        assert all(srv.answered[h] == 1 for h in answered_before)       # nothing stored was bought again
        assert min(srv.answered.values()) == 1 and len(srv.answered) == n
        assert sum(srv.answered.values()) - n <= concurrency             # only calls in flight at the kill
    stored = {v["request_id"]: v["score"] for v in final}
    assert stored == {f"i{i}": float(_digit(p)) for i, p in _prompt_by_item(srv).items()}
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == n


def _prompt_of(body: dict) -> str:
    return "\n".join(m.get("content", "") for m in body["messages"])


def _prompt_by_item(srv: FakeServer) -> dict[int, str]:
    return {int(_prompt_of(b).rsplit("Claim: claim ", 1)[-1].split("\n")[0]): _prompt_of(b) for b in srv.requests}


def _prompts(srv: FakeServer, request_ids: set[str]) -> list[str]:
    return [p for i, p in _prompt_by_item(srv).items() if f"i{i}" in request_ids]


def test_missing_ray_is_an_input_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)      # import ray fails as when it is not installed
    with pytest.raises(InputError, match=r"needs Ray, which is not installed.*judgeaudit\[ray\]"):
        backends.make("ray")
    assert RunContext.of(backend="asyncio").backend.name == "asyncio"   # the default backend does not need it
    assert RunContext().backend.name == "asyncio"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(60)   # at once, not after Ray's minutes of retrying
def test_unreachable_cluster_is_an_input_error_at_once():
    require_ray()
    address = f"127.0.0.1:{_closed_port()}"
    with pytest.raises(InputError, match=rf"Ray cluster at {address} is unreachable") as e:
        backends.make("ray", address)
    assert e.value.field == "ray-address"
    with pytest.raises(InputError, match="--ray-address needs --backend ray"):
        backends.make("asyncio", address)
    with pytest.raises(InputError, match="unknown backend 'dask'; choose asyncio, ray"):
        backends.make("dask")


def test_cli_reports_an_unreachable_cluster_in_one_line(tmp_path, cli_main):
    require_ray()
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "a", "text": "claim"}) + "\n")
    address = f"127.0.0.1:{_closed_port()}"
    r = cli_main("judge", "--judge", "reference:constant", "--input", items, "--out", tmp_path / "out",
                 "--backend", "ray", "--ray-address", address)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"error: field 'ray-address': Ray cluster at {address} is unreachable (Connection refused)"]


def test_vp_audit_on_ray_gives_the_serial_result(ray_cluster):
    """``vp audit --backend ray`` audits each set (its members' fits and permutation nulls) in a Ray task:
    every κ, null, p-value, interval and transfer score is the serial route's."""
    from judgeaudit.commands.vp import run_audit
    from judgeaudit.datasets.demo import vp_demo_sets
    from judgeaudit.runtime.context import RunContext

    kw = {"mode": "both", "permutations": 2, "n_boot": 50}
    serial = run_audit(vp_demo_sets(), jobs=1, **kw)
    on_ray = run_audit(vp_demo_sets(), context=RunContext.of(backend="ray"), **kw)
    assert len(serial.sets) >= 4 and on_ray.to_dict() == serial.to_dict()

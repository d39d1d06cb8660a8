"""Calls are claimed in the store before they are sent (a lease with expiry), so two runs sharing one store
buy each call once; an older store gains the lease table when opened."""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime.executor import run
from judgeaudit.runtime.store import CallStore


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text=f"claim {i}", evidence="e") for i in range(n)]


def test_two_runs_sharing_a_store_buy_each_call_once(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: "Score: 4", latency=0.05)
    db = tmp_path / "calls.sqlite"
    CallStore(db).close()
    n = 60

    def one_run(_: int) -> list[Verdict]:
        judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
        with CallStore(db) as cs:
            return run(judge, _requests(n), store=cs, concurrency=4, progress=False)

    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(one_run, range(2))
    assert len(srv.requests) == n                      # each call bought once (two runs without leases: 2n)
    assert [v.score for v in a] == [v.score for v in b] == [4.0] * n
    with CallStore(db) as cs:
        assert len(cs.completed([v.call_key for v in a])) == n
        assert cs._conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0   # every lease released


def test_a_lease_is_held_until_it_expires_or_the_call_is_stored(tmp_path):
    with CallStore(tmp_path / "s.sqlite") as s:
        assert s.claim("k", "run-a", 30) == "mine"
        assert s.claim("k", "run-a", 30) == "mine"     # its own lease (a retry)
        assert s.claim("k", "run-b", 30) == "busy"
        s.renew("run-a", 0.01)
        time.sleep(0.05)
        assert s.claim("k", "run-b", 30) == "mine"     # run a died: its lease expired
        s.put(Verdict(call_key="k", request_id="r", judge_id="j", score=3.0, parse_ok=True))
        assert s.claim("k", "run-a", 30) == "done"     # stored: nothing to send
        assert s.claim("e", "run-a", 30) == "mine"
        s.release("run-a")
        assert s.claim("e", "run-b", 30) == "mine"


def test_an_older_store_gains_the_lease_table(tmp_path):
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE calls (call_key TEXT PRIMARY KEY, judge_id TEXT NOT NULL, request_id TEXT NOT NULL,
            epoch INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
            attempts INTEGER NOT NULL DEFAULT 1, cost_usd REAL, verdict TEXT NOT NULL, updated TEXT NOT NULL);
    """)
    v = Verdict(call_key="k", request_id="r", judge_id="j", score=3.0, parse_ok=True)
    con.execute("INSERT INTO calls VALUES ('k', 'j', 'r', 0, 'ok', 1, NULL, ?, 'now')", (v.model_dump_json(),))
    con.commit()
    con.close()
    with CallStore(db, readonly=True) as s:            # a read-only open changes nothing
        assert s.completed(["k"])["k"].score == 3.0
    con = sqlite3.connect(db)
    assert con.execute("SELECT name FROM sqlite_master WHERE name='leases'").fetchone() is None
    con.close()
    with CallStore(db) as s:
        assert s.claim("k", "a", 30) == "done" and s.claim("x", "a", 30) == "mine"


# ---- a killed run's leases: taken over at once when its process is gone from this host -------------------------

_HOLDER = """
import sys
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import run
from judgeaudit.runtime.store import CallStore

base, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
judge = make_judge("api:openai/fake-model", api_base=base, id="fake")
with CallStore(db) as cs:
    run(judge, [JudgeRequest(request_id=f"r{i}", text=f"claim {i}", evidence="e") for i in range(n)], store=cs,
        concurrency=4, progress=False)
"""


def _held_by(db, pid: int, proc) -> list[tuple[str, str]]:
    """The leases the holder process ``pid`` took, once it has taken some (bounded: the holder must not exit)."""
    for _ in range(2400):
        assert proc.poll() is None, proc.stderr.read()
        with CallStore(db, readonly=True) as s:
            rows = s._conn.execute("SELECT owner, call_key FROM leases").fetchall()
        mine = [(o, k) for o, k in rows if o.split("|")[1:2] == [str(pid)]]
        if mine:
            return mine
        time.sleep(0.25)
    raise AssertionError("the holder took no lease")


def test_a_killed_runs_leases_are_taken_over_and_a_live_holder_is_waited_for(tmp_path, fake_server, monkeypatch):
    """A run (a real subprocess) leases its calls and hangs on them; while it lives its leases are waited for; once
    it is killed (SIGKILL: it releases nothing) a new run takes its leases at once, long before they expire, and
    buys every call."""
    import os
    import subprocess
    import sys
    import threading

    from judgeaudit.runtime.owner import holder_gone, run_owner

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    gate = threading.Event()
    srv = fake_server(responder=lambda p: (gate.wait(), "Score: 4")[1])     # the holder's calls hang until set
    db = tmp_path / "calls.sqlite"
    CallStore(db).close()
    n = 8
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, srv.base_url, str(db), str(n)], env=dict(os.environ),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        held = _held_by(db, child.pid, child)
        me = run_owner()
        with CallStore(db) as s:
            assert not holder_gone(held[0][0])
            assert s.claim(held[0][1], me, 30) == "busy"            # a live holder is waited for
        child.kill()
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with CallStore(db) as s:
        expires = s._conn.execute("SELECT expires FROM leases WHERE call_key = ?", (held[0][1],)).fetchone()[0]
        assert expires > time.time()                                 # its lease has not expired ...
        assert holder_gone(held[0][0])
        assert s.claim(held[0][1], me, 30) == "mine"                # ... and is taken over at once
        s.release(me)
    gate.set()
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url, id="fake")
    with CallStore(db) as cs:
        vs = run(judge, _requests(n), store=cs, concurrency=4, progress=False)
        assert [v.score for v in vs] == [4.0] * n
        assert len(cs.completed([v.call_key for v in vs])) == n
        assert cs._conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0


def test_owner_ids_of_other_hosts_and_older_stores_are_never_taken_as_gone():
    import os
    import socket

    from judgeaudit.runtime.owner import holder_gone, run_owner

    assert not holder_gone(run_owner())                              # this very process
    assert not holder_gone(uuid_like := "0" * 32) and uuid_like      # an id written before ids named a process
    assert not holder_gone(f"another-host-{socket.gethostname()}|{os.getpid() + 1}|1|x")
    dead = subprocess_pid_gone()
    assert holder_gone(f"{socket.gethostname()}|{dead}||x")


def subprocess_pid_gone() -> int:
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid

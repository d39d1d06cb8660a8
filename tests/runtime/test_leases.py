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

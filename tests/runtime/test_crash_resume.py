"""SIGKILL in the middle of a 500-call CLI run, then a rerun: nothing lost, nothing bought twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from fakeserver import FakeServer, HoldAfter

SECRET = "sk-live-SECRET-must-not-leak-4242"


def _ok_keys(db: Path) -> set[str]:
    if not db.exists():
        return set()
    con = sqlite3.connect(db, timeout=30)
    try:
        return {r[0] for r in con.execute("SELECT verdict FROM calls WHERE status='ok'")}
    except sqlite3.OperationalError:
        return set()
    finally:
        con.close()


def _cli(args, env):
    return [sys.executable, "-m", "judgeaudit.cli", *args]


def test_sigkill_mid_run_then_rerun(tmp_path, cli_main, monkeypatch):
    """The killed run is a real ``judgeaudit`` process; the rerun is the same command line in this process."""
    items = tmp_path / "items.jsonl"
    with items.open("w") as fh:
        for i in range(500):
            fh.write(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n")
    db, out = tmp_path / "calls.sqlite", tmp_path / "out"
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    env = {**os.environ}
    # the first 120 requests are answered, later ones held until the kill: the kill lands mid-run on any machine
    hold = HoldAfter(120, lambda p: "Score: 6")
    with FakeServer(responder=hold, latency=0.05) as srv:
        args = ["judge", "--judge", "api:openai/fake-judge", "--api-base", srv.base_url, "--input", str(items),
                "--out", str(out), "--store", str(db), "--concurrency", "8"]
        log1 = (tmp_path / "run1.log").open("w")
        proc = subprocess.Popen(_cli(args, env), env=env, stdout=log1, stderr=subprocess.STDOUT)
        deadline = time.time() + 600
        while len(_ok_keys(db)) < 100 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        hold.release()
        done_before = {json.loads(v)["call_key"]: json.loads(v) for v in _ok_keys(db)}
        assert 100 <= len(done_before) < 500, "the kill must land mid-run"
        hashes_before = {FakeServer.prompt_hash(p) for p in _prompts_of(srv, done_before)}

        srv.latency = 0   # nothing kills the rerun
        again = cli_main(*args)
        (tmp_path / "run2.log").write_text(again.stdout + again.stderr)
        assert again.returncode == 0, again.stderr
        final = [json.loads(v) for v in _ok_keys(db)]
        assert len(final) == 500 and len({v["request_id"] for v in final}) == 500
        # no call that had succeeded before the kill was requested again
        assert all(srv.answered[h] == 1 for h in hashes_before)
        assert len(hashes_before) == len(done_before)
        # every call was answered at least once, and re-asked only if it was in flight at the kill
        assert sum(srv.answered.values()) - 500 <= 8
        assert all(a.endswith(SECRET) for a in srv.auth_headers)      # the key was used ...
    # ... and written nowhere: store (with WAL), outputs, logs
    for path in [*tmp_path.rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"API key leaked into {path}"
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == 500


def _prompts_of(srv, verdicts):
    """The prompts the server saw for the given stored verdicts (matched by request id in the prompt)."""
    ids = {v["request_id"] for v in verdicts.values()}
    seen = {}
    for body in srv.requests:
        prompt = "\n".join(m.get("content", "") for m in body["messages"])
        claim = prompt.rsplit("Claim: claim ", 1)[-1].split("\n")[0]
        rid = f"i{claim}"
        if rid in ids:
            seen[rid] = prompt
    return list(seen.values())

"""Ctrl-C in the middle of a CLI run: exit 130, one line saying how many calls are stored and where,
and a rerun makes only the missing calls."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

from fakeserver import FakeServer

N = 200


def _n_ok(db) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM calls WHERE status='ok'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_sigint_mid_run_prints_the_resume_line_and_keeps_the_calls(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                             for i in range(N)))
    db, out = tmp_path / "calls.sqlite", tmp_path / "out"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeServer(responder=lambda p: "Score: 6", latency=0.05) as srv:
        args = [sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/fake-judge",
                "--api-base", srv.base_url, "--input", str(items), "--out", str(out), "--store", str(db),
                "--concurrency", "2"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while _n_ok(db) < 20 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        stored = _n_ok(db)
        assert 20 <= stored < N, "the interrupt must land mid-run"
        assert "Traceback" not in err
        m = re.search(r"interrupted: (\d+) of (\d+) calls of api:openai/fake-judge stored in (.+); "
                      r"rerun the same command to resume", err)
        assert m, err
        assert (int(m[1]), int(m[2]), m[3]) == (stored, N, str(db))
        assert not (out / "verdicts.jsonl").exists()            # nothing half-written

        asked_before = len(srv.requests)
        rc = subprocess.run(args, env=env, capture_output=True, text=True).returncode
        assert rc == 0
        assert len(srv.requests) - asked_before == N - stored   # only the missing calls are made
    assert _n_ok(db) == N
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == N

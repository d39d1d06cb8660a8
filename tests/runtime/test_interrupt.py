"""Ctrl-C in the middle of a CLI run: exit 130, one line saying how many calls are stored and where,
and a rerun makes only the missing calls."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from fakeserver import FakeServer
from testkit import stored_ok

N = 200


def _judge_args(tmp_path, srv, n: int, concurrency: int) -> tuple[list[str], object, object]:
    """``judge`` over ``n`` items against ``srv``: (argv, store path, output folder)."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                             for i in range(n)))
    db, out = tmp_path / "calls.sqlite", tmp_path / "out"
    return ([sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/fake-judge", "--api-base",
             srv.base_url, "--input", str(items), "--out", str(out), "--store", str(db), "--concurrency",
             str(concurrency)], db, out)


def _interrupt_once_stored(proc, db, k: int) -> str:
    """SIGINT once ``k`` calls are stored; the process's stderr."""
    deadline = time.time() + 120
    while stored_ok(db) < k and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    return err


def test_sigint_mid_run_prints_the_resume_line_and_keeps_the_calls(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeServer(responder=lambda p: "Score: 6", latency=0.05) as srv:
        args, db, out = _judge_args(tmp_path, srv, N, 2)
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = _interrupt_once_stored(proc, db, 20)
        stored = stored_ok(db)
        assert 20 <= stored < N, "the interrupt must land mid-run"
        m = re.search(r"interrupted: (\d+) of (\d+) calls of api:openai/fake-judge stored in (.+); "
                      r"rerun the same command to resume", err)
        assert m, err
        assert (int(m[1]), int(m[2]), m[3]) == (stored, N, str(db))
        assert not (out / "verdicts.jsonl").exists()            # nothing half-written

        asked_before = len(srv.requests)
        rc = subprocess.run(args, env=env, capture_output=True, text=True).returncode
        assert rc == 0
        assert len(srv.requests) - asked_before == N - stored   # only the missing calls are made
    assert stored_ok(db) == N
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == N


def test_first_ctrl_c_waits_for_the_calls_in_flight_and_stores_them(tmp_path):
    """Every call the server was asked for is stored after a Ctrl-C: none is bought again by the rerun."""
    n = 120
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeServer(responder=lambda p: "Score: 6", latency=0.4) as srv:
        args, db, _ = _judge_args(tmp_path, srv, n, 8)
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = _interrupt_once_stored(proc, db, 16)
        stored = stored_ok(db)
        assert 16 <= stored < n
        assert "sending no new calls; waiting up to" in err, err
        assert len(srv.requests) == stored, "calls the server was asked for but the client did not store"
        rc = subprocess.run(args, env=env, capture_output=True, text=True).returncode
        assert rc == 0 and len(srv.requests) == n      # the rerun buys only the calls never sent


def test_a_second_ctrl_c_aborts_the_wait(tmp_path):
    err_file = tmp_path / "err.txt"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "JUDGEAUDIT_INTERRUPT_GRACE": "60"}
    with FakeServer(responder=lambda p: "Score: 6", latency=30) as srv:
        args, _, _ = _judge_args(tmp_path, srv, 8, 2)
        with err_file.open("w") as fh:
            proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=fh, text=True)
            deadline = time.time() + 60
            while len(srv.requests) < 2 and time.time() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            while "waiting up to" not in err_file.read_text() and time.time() < deadline:
                time.sleep(0.05)
            t0 = time.time()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        assert time.time() - t0 < 10                   # not the 60 s grace nor the 30 s answers
        assert proc.returncode == 130, err_file.read_text()

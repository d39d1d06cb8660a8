"""Ctrl-C in the middle of a CLI run: exit 130, one line saying how many calls are stored and where,
and a rerun makes only the missing calls; SIGTERM leaves the same line (exit 143).

The children start with SIGINT at its default (``testkit.interruptible``) whatever the runner inherited, and
each test waits for a state (calls stored, requests received, a line on stderr), never for a time."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from fakeserver import FakeServer
from testkit import interruptible, stored_ok

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


def _interrupt_once_stored(proc, db, k: int, sig: int = signal.SIGINT) -> str:
    """``sig`` once ``k`` calls are stored; the process's stderr."""
    deadline = time.time() + 600   # a safety net against a hung child, not a measure of speed
    while stored_ok(db) < k and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before the signal"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_run_prints_the_resume_line_and_keeps_the_calls(tmp_path, sig, cli_main, monkeypatch):
    """Ctrl-C, and SIGTERM (a scheduler's stop, ``kill``) alike: the calls answered are stored, one line says how
    many and where, exit 130 or 143 (128 + SIGTERM), and a rerun (the same command line, in this process) makes
    only the missing calls."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    env = {**os.environ}
    with FakeServer(responder=lambda p: "Score: 6", latency=0.05) as srv:
        args, db, out = _judge_args(tmp_path, srv, N, 2)
        proc = interruptible(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = _interrupt_once_stored(proc, db, 20, sig)
        stored = stored_ok(db)
        assert 20 <= stored < N, "the interrupt must land mid-run"
        m = re.search(r"interrupted: (\d+) of (\d+) calls of api:openai/fake-judge stored in (.+); "
                      r"rerun the same command to resume", err)
        assert m, err
        assert (int(m[1]), int(m[2]), m[3]) == (stored, N, str(db))
        assert not (out / "verdicts.jsonl").exists()            # nothing half-written

        asked_before = len(srv.requests)
        srv.latency = 0   # the latency kept the signal mid-run; nothing interrupts the rerun
        again = cli_main(*args[3:])
        assert again.returncode == 0, again.stderr
        assert len(srv.requests) - asked_before == N - stored   # only the missing calls are made
    assert stored_ok(db) == N
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == N


def test_first_ctrl_c_waits_for_the_calls_in_flight_and_stores_them(tmp_path, cli_main, monkeypatch):
    """Every call the server was asked for is stored after a Ctrl-C: none is bought again by the rerun (the same
    command line, in this process)."""
    n = 120
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    env = {**os.environ}
    with FakeServer(responder=lambda p: "Score: 6", latency=0.4) as srv:
        args, db, _ = _judge_args(tmp_path, srv, n, 8)
        proc = interruptible(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = _interrupt_once_stored(proc, db, 16)
        stored = stored_ok(db)
        assert 16 <= stored < n
        assert "sending no new calls; waiting up to" in err, err
        assert len(srv.requests) == stored, "calls the server was asked for but the client did not store"
        srv.latency = 0   # the latency kept the calls in flight at the signal; nothing interrupts the rerun
        again = cli_main(*args[3:])
        assert again.returncode == 0, again.stderr
        assert len(srv.requests) == n                  # the rerun buys only the calls never sent


def test_a_second_ctrl_c_aborts_the_wait(tmp_path):
    """The answers take far longer than any wait here, and the grace is as long: a process that ends after the
    second Ctrl-C with none of them stored did not wait for them (nor for the grace)."""
    err_file = tmp_path / "err.txt"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "JUDGEAUDIT_INTERRUPT_GRACE": "3000"}
    with FakeServer(responder=lambda p: "Score: 6", latency=3000) as srv:
        args, db, _ = _judge_args(tmp_path, srv, 8, 2)
        with err_file.open("w") as fh:
            proc = interruptible(args, env=env, stdout=subprocess.DEVNULL, stderr=fh, text=True)
            deadline = time.time() + 600   # safety nets against a hung child, not measures of speed
            while len(srv.requests) < 2 and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            while "waiting up to" not in err_file.read_text() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert "waiting up to 3000 s" in err_file.read_text()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=600)
        assert proc.returncode == 130, err_file.read_text()
        assert sum(srv.answered.values()) == 0 and stored_ok(db) == 0   # it left before any answer came
        assert "Traceback" not in err_file.read_text()


def test_sigterm_before_any_answer_says_how_to_resume(tmp_path):
    """SIGTERM while every call in flight hangs (no grace): exit 143, the interrupted line with 0 stored, no
    traceback."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "JUDGEAUDIT_INTERRUPT_GRACE": "0"}
    with FakeServer(responder=lambda p: "Score: 6", latency=3000) as srv:
        args, db, _ = _judge_args(tmp_path, srv, 4, 2)
        proc = interruptible(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 600
        while len(srv.requests) < 2 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 143, err
        assert "Traceback" not in err
        assert re.search(r"interrupted: 0 of 4 calls of api:openai/fake-judge stored in .+; rerun the same "
                         r"command to resume", err), err

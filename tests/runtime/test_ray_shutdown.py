"""A local Ray instance started by a command ends with it: ``kill -9`` of a ``--backend ray`` run leaves no
Ray process of its instance behind (before the watcher, the raylet's agents outlived the driver by over a
minute). A module of its own: its driver starts its own local instance, with no other Ray instance in the
test process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fakeserver import FakeServer
from testkit import require_ray, stored_ok

from judgeaudit.runtime import raywatch

KEY = "sk-test-not-a-secret"


@pytest.mark.slow   # starts a local Ray instance of its own in a subprocess
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher reads /proc (Linux)")
def test_killing_the_driver_ends_its_local_ray_instance(tmp_path):
    require_ray()
    n = 200
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                             for i in range(n)))
    db = tmp_path / "calls.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["OPENAI_API_KEY"] = KEY
    env["RAY_raylet_start_wait_time_s"] = "300"    # a busy 2-core machine starts a raylet slowly
    # --concurrency 1: one actor, whose worker must end with the instance's own processes (another actor
    # would add only its start-up: a worker process importing the judge's client)
    with FakeServer(responder=lambda p: "Score: 5", latency=0.2) as srv:
        args = [sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "api:openai/fake-judge",
                "--api-base", srv.base_url, "--input", str(items), "--out", str(tmp_path / "out"),
                "--store", str(db), "--concurrency", "1", "--backend", "ray"]
        with (tmp_path / "run.log").open("w") as log:
            proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.time() + 300
                while stored_ok(db) < 3 and time.time() < deadline and proc.poll() is None:
                    time.sleep(0.1)
                assert proc.poll() is None and stored_ok(db) >= 3, (tmp_path / "run.log").read_text()
                ray_procs = raywatch.ray_descendants(proc.pid)
                # whole command lines: a checkout at a long path puts a binary's name past any cut-off
                names = {pid: raywatch.cmdline(pid) for pid in ray_procs}
                # the instance's own processes: its GCS server, raylet, agents and the actors' workers
                assert any("/raylet" in c for c in names.values()), names
                assert any(c.startswith("ray::") for c in names.values()), names
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    # Ray's own reaper ends the GCS server and the raylet; without the watcher the raylet's agents outlive the
    # driver by about a minute (61 s with Ray 2.60), so a longer wait would pass without it. The watcher ends
    # them within POLL + GRACE (3.2 s); 30 s leaves a busy machine ample room.
    deadline = time.monotonic() + 30
    left = {p: s for p, s in ray_procs.items() if raywatch.alive(p, s)}
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = {p: s for p, s in left.items() if raywatch.alive(p, s)}
    assert left == {}, {p: names[p] for p in left}
    assert 3 <= stored_ok(db) < n                    # it was killed mid-run; what was answered is stored


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher reads /proc (Linux)")
def test_the_watcher_ends_a_killed_parents_ray_processes_and_only_those(tmp_path):
    """The watcher on its own, with stand-in processes: a process named like a Ray worker below the watched
    parent is ended once the parent is killed, even at once after ``start`` returns; a sibling that is not
    Ray's is left alone."""
    script = (
        "import subprocess, sys, time\n"
        "ray = subprocess.Popen(['bash', '-c', 'exec -a ray::IDLE sleep 120'])\n"
        "other = subprocess.Popen(['sleep', '120'])\n"
        "print(ray.pid, other.pid, flush=True)\n"
        "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        ray_pid, other_pid = map(int, parent.stdout.readline().split())
        deadline = time.monotonic() + 120
        while raywatch.ray_descendants(parent.pid) == {} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert set(raywatch.ray_descendants(parent.pid)) == {ray_pid}
        watcher = raywatch.start(parent.pid)     # returns once the watcher has seen the parent's Ray process
        parent.kill()
        parent.wait()
        watcher.wait(timeout=120)
        assert not raywatch.alive(ray_pid)
        assert raywatch.alive(other_pid)
    finally:
        for pid in (locals().get("ray_pid"), locals().get("other_pid")):
            if pid and raywatch.alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher reads /proc (Linux)")
def test_the_watcher_of_a_driver_already_gone_returns_at_once():
    """``start`` waits for the watcher's first scan; a watcher whose driver has already exited scans nothing and
    exits, and ``start`` returns then, not after its timeout."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    began = time.monotonic()
    watcher = raywatch.start(gone.pid, timeout=600)
    assert watcher.wait(timeout=120) == 0
    assert time.monotonic() - began < 60

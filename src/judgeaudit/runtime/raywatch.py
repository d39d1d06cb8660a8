"""Ends a local Ray instance when the driver that started it dies, however it dies (``kill -9`` included).

``ray.init()`` starts the instance's processes (GCS server, raylet, its agents, workers) as descendants of the
driver. A driver that exits normally shuts them down; one that is killed leaves some of them running
(the raylet's agents outlive it by over a minute). ``start(driver_pid)`` launches this file as a small
process of its own (standard library only, so it starts in milliseconds and holds no judge) and returns once
the watcher has noted the driver's Ray descendants (a driver killed right after ``start`` still has them
ended); the watcher notes them again every ``SCAN_EVERY`` seconds while the driver lives, and when the driver is gone
it sends them SIGTERM, then SIGKILL to any still alive ``GRACE`` seconds later, and exits. It also exits
when the driver lives on but its Ray processes are gone (``ray.shutdown()``; a new ``ray.init()`` starts
a new watcher). Linux only (it reads ``/proc``); elsewhere ``start`` does nothing.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL = 0.2
"""Seconds between looks at the driver."""
SCAN_EVERY = 1.0
"""Seconds between scans of the driver's descendants."""
GRACE = 3.0
"""Seconds between SIGTERM and SIGKILL."""
READY_TIMEOUT = 30.0
"""Seconds ``start`` waits at most for the watcher's first scan."""


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in clock ticks) of ``pid``, None when there is no such process."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (None: no such process, or no ``/proc``)."""
    st = _stat(pid)
    return None if st is None else st[2]


def cmdline(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces ('': no such process)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


_RAY_FILE = re.compile(r"[/\\]ray[/\\](core|dashboard|_private|autoscaler)[/\\]")


def is_ray_process(cmdline: str) -> bool:
    """Whether a command line is one of Ray's processes (its binaries, agents, or a worker)."""
    return cmdline.startswith("ray::") or "default_worker.py" in cmdline or _RAY_FILE.search(cmdline) is not None


def alive(pid: int, started: int | None = None) -> bool:
    """Whether ``pid`` runs (a zombie does not), and is the process that started at ``started`` when given."""
    st = _stat(pid)
    return st is not None and st[0] != "Z" and (started is None or st[2] == started)


def ray_descendants(root: int) -> dict[int, int]:
    """pid -> start time of every Ray process below ``root``."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            children.setdefault(st[1], []).append(int(entry.name))
            starts[int(entry.name)] = st[2]
    out, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        if pid in starts and is_ray_process(cmdline(pid)):
            out[pid] = starts[pid]
    return out


def _end(procs: dict[int, int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = {p: s for p, s in procs.items() if alive(p, s)}
        for pid in live:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + GRACE
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(alive(p, s) for p, s in live.items()):
            time.sleep(0.1)


def _tell(ready: int | None) -> None:
    """Write a line to the pipe ``ready`` and close it (its reader may have given up and closed it already)."""
    if ready is not None:
        try:
            os.write(ready, b"scanned\n")
        except OSError:
            pass
        os.close(ready)


def watch(driver: int, ready: int | None = None) -> None:
    """Watch ``driver`` until it dies (then end its Ray processes) or its Ray processes are gone; after the first
    scan of its descendants, say so on the file descriptor ``ready`` (``start`` waits for it)."""
    first = _stat(driver)
    if first is None:
        return
    born = first[2]
    seen: dict[int, int] = {}
    last_scan = 0.0
    while alive(driver, born):
        now = time.monotonic()
        if now - last_scan >= SCAN_EVERY:
            last_scan = now
            current = ray_descendants(driver)
            if seen and not current:
                return           # ray.shutdown(): nothing left to watch
            seen = {p: s for p, s in {**seen, **current}.items() if alive(p, s)}
            _tell(ready)
            ready = None
        time.sleep(POLL)
    _end(seen)


def start(driver: int | None = None, *, timeout: float = READY_TIMEOUT) -> subprocess.Popen | None:
    """Launch the watcher of ``driver`` (default: this process) in its own session and return once it has
    scanned the driver's Ray processes (or after ``timeout`` seconds, or when it exits: ``driver`` is gone);
    None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    read, write = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-I", str(Path(__file__).resolve()), str(driver or os.getpid()),
                                 str(write)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True, pass_fds=(write,))
        os.close(write)
        write = -1
        select.select([read], [], [], timeout)   # readable: its line, or end of file when it exits
    finally:
        os.close(read)
        if write != -1:
            os.close(write)
    return proc


if __name__ == "__main__":
    watch(int(sys.argv[1]), ready=int(sys.argv[2]) if len(sys.argv) > 2 else None)

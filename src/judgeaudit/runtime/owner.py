"""Who holds a call's lease in the store: a run's owner id names its host, process id and the process's start
time, so a run that finds a call leased by a process of its own host that is gone (killed, crashed) takes the
lease over at once instead of waiting for it to expire. A holder on another host, a live process, or an owner
id written before ids named their process is waited for until its lease expires, as before.

The process is looked up as the Ray watcher does (``runtime.raywatch.alive``: ``/proc``, a zombie counts as
gone, a reused process id is told apart by its start time); without ``/proc`` a signal 0 asks whether the
process id exists."""

from __future__ import annotations

import os
import socket
import uuid

SEP = "|"


def run_owner() -> str:
    """A new owner id for one run: ``host|pid|start|random``."""
    from judgeaudit.runtime.raywatch import start_time

    pid = os.getpid()
    start = start_time(pid)
    return SEP.join((socket.gethostname(), str(pid), "" if start is None else str(start), uuid.uuid4().hex))


def holder_gone(owner: str) -> bool:
    """Whether the run that wrote ``owner`` is certainly gone: its host is this host and its process no longer
    runs (or another process now has its id). False whenever that cannot be known."""
    parts = owner.split(SEP)
    if len(parts) != 4 or not parts[1].isdigit() or parts[0] != socket.gethostname():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False                        # another run in this very process: alive
    if os.path.isdir("/proc/self"):
        from judgeaudit.runtime.raywatch import alive

        return not alive(pid, int(parts[2]) if parts[2].isdigit() else None)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    return False

"""Ctrl-C while the ``judgeaudit`` program is still loading its modules (pandas, typer, the verb groups):
one line and exit 130 instead of a traceback from inside an import. Installed by the package's first
import only when the process is the command line (the ``judgeaudit`` script or ``python -m
judgeaudit.cli``); the command line puts Python's own handler back once the command named on it is loaded
(``cli._LazyGroup.resolve_command``), before it runs."""

from __future__ import annotations

import os
import signal
import sys

MESSAGE = "interrupted while starting: nothing was run"


def interrupted(signum: int, frame: object) -> None:
    sys.stderr.write(MESSAGE + "\n")
    sys.stderr.flush()
    os._exit(130)


def _is_the_program() -> bool:
    argv = getattr(sys, "orig_argv", sys.argv)
    if os.path.basename(sys.argv[0] if sys.argv else "") == "judgeaudit":
        return True
    return any(a == "-m" and b == "judgeaudit.cli" for a, b in zip(argv, argv[1:], strict=False))


def install() -> None:
    if _is_the_program() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, interrupted)
        except ValueError:   # not the main thread
            pass


def uninstall() -> None:
    if signal.getsignal(signal.SIGINT) is interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


install()

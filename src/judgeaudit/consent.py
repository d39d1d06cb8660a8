"""Consent to run code: a file is data, so the code a file names runs only when the command line says so.

The one way a judge spec runs the user's own code is a ``python:module:attr`` judge (alone, or inside a
composite: ``vote:K:python:…``, ``ensemble:…,python:…``); importing its module runs the module. Under the
command line (``cli.main`` opens :func:`command_line` around every command):

* a ``python:`` spec typed on the command line is the user's choice: its code runs;
* a spec that came from a file (an experiment file, a run folder, any file read from disk) is refused,
  before the module is imported, unless the command line says ``--allow-code``: the file is what is
  untrusted, so the consent cannot live in it.

Readers that know where a spec came from check it with :func:`check_file_spec`, which names the file, line
and spec; :func:`require`, called where the module would be imported, refuses whatever reaches it by any other
route. Outside the command line (a Python program calling ``make_judge``, a Ray worker rebuilding the judge
its command checked) the caller is already running code of its choice: nothing is refused. This module is at
the bottom of the layers: it names only ``judgeaudit.errors``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgeaudit.errors import InputError

FLAG = "--allow-code"
#: ``python:module:attr.path`` where a spec (or a composite's inner spec, or an option's value) begins
_CODE = re.compile(r"(?:^|[:,=])python:([A-Za-z_][\w.]*:[A-Za-z_][\w.]*)")


def code_targets(spec: str) -> list[str]:
    """The ``module:attr`` targets of the ``python:`` judges a spec string names, composites' inner specs
    included, in order."""
    return list(dict.fromkeys(m.group(1) for m in _CODE.finditer(spec)))


@dataclass(frozen=True)
class _Consent:
    allow_code: bool
    typed: frozenset[str]


_STATE: _Consent | None = None   # None: not under the command line


@contextlib.contextmanager
def command_line(argv: Sequence[str], *, allow_code: bool | None = None) -> Iterator[None]:
    """The consent of one command line ``argv`` while it runs: the code its own ``python:`` specs name, and
    every file's code when it holds ``--allow-code`` (or ``allow_code``)."""
    global _STATE
    before = _STATE
    typed = frozenset(t for arg in argv for t in code_targets(str(arg)))
    _STATE = _Consent(FLAG in argv if allow_code is None else allow_code, typed)
    try:
        yield
    finally:
        _STATE = before


def allow_code() -> None:
    """The command's ``--allow-code`` flag was given (it may follow the command's name)."""
    global _STATE
    if _STATE is not None:
        _STATE = _Consent(True, _STATE.typed)


def _refused(spec: str) -> list[str]:
    if _STATE is None or _STATE.allow_code:
        return []
    return [t for t in code_targets(spec) if t not in _STATE.typed]


def check_file_spec(spec: str, *, path: str | Path, line: int | None, field: str) -> None:
    """Refuse (``InputError`` naming ``path``, ``line`` and the spec) a spec read from a file that names code
    the command line did not consent to."""
    if _refused(spec):
        raise InputError(f"judge {spec!r} runs Python code named by this file; a file's code runs only when "
                         f"the command line says {FLAG}", path=path, line=line, field=field)


def require(spec: str) -> None:
    """Refuse to import the code of ``spec`` unless the command line consented to it (raised where the
    module would be imported, whichever route the spec took from a file)."""
    if _refused(spec):
        raise InputError(f"judge spec {spec!r} runs Python code that was not typed on the command line (a file "
                         f"named it); a file's code runs only when the command line says {FLAG}", field="judge")

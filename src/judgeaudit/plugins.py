"""Plug-ins: modules that register into a lower layer's registry from above it.

A registry in a lower layer (the judge backends of ``judgeaudit.judges``) names a *group*, e.g.
``judgeaudit.judges``; a plug-in is a module that registers into it when imported. The registry calls
``load(group)`` on its first lookup, which imports every plug-in of the group once:

* the entry points of that group in the installed distributions' metadata (``[project.entry-points.
  "judgeaudit.judges"]`` in a package's ``pyproject.toml``; ``importlib.metadata.entry_points``), so
  another package adds a backend without judgeaudit importing it;
* judgeaudit's own plug-ins, declared by the top package (``judgeaudit.ENTRY_POINTS``, the same table
  as judgeaudit's ``pyproject.toml``; a test keeps the two equal), so they are found where judgeaudit
  runs from a source tree whose metadata is not installed, or is another checkout's.

An entry point's value is a module (``pkg.mod``) or an object in it (``pkg.mod:attr``); importing it is
what registers. A plug-in of another package that fails to import is skipped with a warning naming it
(judgeaudit's own is an error: it is part of the program). This module is at the bottom of the layers:
it names no other judgeaudit module.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import sys
import threading
import warnings
from dataclasses import dataclass

_LOADED: set[str] = set()
_LOCK = threading.RLock()


@dataclass(frozen=True)
class Plugin:
    """One plug-in of a group: its name, the object path it names, and who declared it."""

    name: str
    value: str
    builtin: bool


def _builtin(group: str) -> dict[str, str]:
    top = sys.modules.get(__name__.rpartition(".")[0])   # the top package, imported before any of its modules
    return dict(getattr(top, "ENTRY_POINTS", {}).get(group, {}))


def plugins(group: str) -> list[Plugin]:
    """The plug-ins of ``group``: judgeaudit's own first, then the installed entry points of other
    packages (one per name; an installed entry point naming one of judgeaudit's own is that one)."""
    own = _builtin(group)
    out = [Plugin(n, v, True) for n, v in own.items()]
    try:
        eps = md.entry_points(group=group)
    except Exception:   # unreadable metadata of some installed distribution: judgeaudit's own still load
        eps = ()
    seen = set(own) | set(own.values())
    for ep in eps:
        if ep.name in seen or ep.value in seen:
            continue
        seen.add(ep.name)
        out.append(Plugin(ep.name, ep.value, False))
    return out


def _import(value: str) -> object:
    module, _, attr = value.partition(":")
    obj: object = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def load(group: str) -> None:
    """Import every plug-in of ``group`` once (later calls do nothing)."""
    with _LOCK:
        if group in _LOADED:
            return
        _LOADED.add(group)
        for p in plugins(group):
            if p.builtin:
                try:
                    _import(p.value)
                except BaseException:
                    _LOADED.discard(group)   # the next lookup tries again (and fails the same way, loudly)
                    raise
                continue
            try:
                _import(p.value)
            except Exception as e:   # another package's broken plug-in must not stop judgeaudit
                warnings.warn(f"plug-in {p.name!r} ({p.value}) of {group} could not be loaded: {e}",
                              RuntimeWarning, stacklevel=2)

"""One registry type for every name → object table a lower layer offers to the layers above it (and to other
packages): judge backends, executor backends, replay formats, template families, the card's missing-run maker.

``Registry[T](kind, group)`` holds named objects of one kind:

* ``register(name, obj)`` (or ``@register(name)`` as a decorator) adds one. The overwrite rule is the same
  everywhere: registering the *same* object again under its name does nothing; a *different* object under a
  taken name is refused (``ValueError``), so two plug-ins can never silently shadow each other.
  ``override(name, obj)`` is the one way to replace an entry, for the length of a ``with`` block (tests).
* ``get(name)`` returns one; an unknown name raises the registry's error naming the known ones.
* ``names()`` lists them; ``items()`` returns them all (loading every plug-in first).

Where the objects come from, lazily and per name:

* **declared** modules: ``declare(group, name, load)`` says that calling ``load()`` registers ``name`` into
  the registries of ``group``. The declaring module is the one that composes the program — judgeaudit's
  top package declares its own plug-ins (``judgeaudit.ENTRY_POINTS``) with a loader of its own, so a lower
  layer never imports a higher one: the import runs in the top package's code. A lookup of a declared name
  loads that one module only (``make_judge("reference:…")`` imports ``judges.reference``, nothing else);
* **entry points** of other packages in the registry's one documented group (``[project.entry-points.
  "judgeaudit.judges"]`` in their ``pyproject.toml``; ``importlib.metadata``): loaded together the first
  time a name is missing or the whole table is asked for. One that fails to import is skipped with a
  warning naming it; judgeaudit's own entry points (values ``judgeaudit.…``) are the declared ones and are
  never imported from here.

This module is at the bottom of the layers: it names no other judgeaudit module.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
_UNSET: Any = object()
_LOCK = threading.RLock()

#: group → name → a loader that registers ``name`` when called (``declare``)
_DECLARED: dict[str, dict[str, Callable[[], object]]] = {}
#: groups whose other packages' entry points were imported
_EXTERNAL_LOADED: set[str] = set()


def declare(group: str, name: str, load: Callable[[], object]) -> None:
    """``load()`` registers ``name`` into the registries of ``group``; it is called on the first lookup of
    ``name`` (or of a name nothing declares, or of the whole table). A second declaration of a name replaces
    the first (the composing module's word is the last)."""
    with _LOCK:
        _DECLARED.setdefault(group, {})[name] = load


def declared(group: str) -> dict[str, Callable[[], object]]:
    """The declared loaders of ``group`` by name."""
    return dict(_DECLARED.get(group, {}))


def import_object(value: str) -> object:
    """The object an entry-point value names: a module ``pkg.mod`` or an attribute ``pkg.mod:attr.sub``."""
    module, _, attr = value.partition(":")
    obj: object = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def external_entry_points(group: str) -> list[md.EntryPoint]:
    """The installed entry points of ``group`` from other packages (not judgeaudit's own, which the top
    package declares), one per name."""
    try:
        eps = md.entry_points(group=group)
    except Exception:   # unreadable metadata of some installed distribution: judgeaudit's own still load
        return []
    out: dict[str, md.EntryPoint] = {}
    for ep in eps:
        if ep.value.strip().split(".")[0].split(":")[0] == "judgeaudit" or ep.name in out:
            continue
        out[ep.name] = ep
    return list(out.values())


def _load_external(group: str) -> None:
    with _LOCK:
        if group in _EXTERNAL_LOADED:
            return
        _EXTERNAL_LOADED.add(group)
        for ep in external_entry_points(group):
            try:
                import_object(ep.value)
            except Exception as e:   # another package's broken plug-in must not stop judgeaudit
                warnings.warn(f"plug-in {ep.name!r} ({ep.value}) of {group} could not be loaded: {e}",
                              RuntimeWarning, stacklevel=3)


class Registry(Generic[T]):
    """Named objects of one kind (see the module docstring).

    Args:
        kind: what an entry is, for messages ("judge backend").
        group: the entry-point group its plug-ins are declared under (None: no plug-ins).
        error: the exception an unknown name raises (called with the message; ``LookupError`` by default).
    """

    def __init__(self, kind: str, group: str | None = None, *,
                 error: Callable[[str], Exception] = LookupError):
        self.kind, self.group, self._error = kind, group, error
        self._entries: dict[str, T] = {}
        self._tried: set[str] = set()

    # ------------------------------------------------------------------ filling

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, obj: T) -> T: ...

    def register(self, name: str, obj: Any = _UNSET) -> Any:
        """Add ``obj`` under ``name`` (returns it); without ``obj``, a decorator that does so."""
        if obj is _UNSET:
            return lambda o: self.register(name, o)
        with _LOCK:
            have = self._entries.get(name, _UNSET)
            if have is not _UNSET and have is not obj:
                raise ValueError(f"{self.kind} {name!r} is already registered (as {have!r}); a name is taken once")
            self._entries[name] = obj
        return obj

    @contextmanager
    def override(self, name: str, obj: T) -> Iterator[T]:
        """Inside the block, ``name`` is ``obj`` (the entry it replaces, or none, is back after)."""
        with _LOCK:
            before = self._entries.get(name, _UNSET)
            self._entries[name] = obj
        try:
            yield obj
        finally:
            with _LOCK:
                if before is _UNSET:
                    self._entries.pop(name, None)
                else:
                    self._entries[name] = before

    # ------------------------------------------------------------------ loading

    def _load(self, name: str | None) -> None:
        """Load the declared module of ``name``; for an undeclared name (or None: everything) every declared
        module and the other packages' entry points of the group."""
        if self.group is None:
            return
        loaders = declared(self.group)
        if name is not None and name in loaders:
            todo = [name]
        else:
            todo = list(loaders)
        for n in todo:
            if n not in self._tried:
                self._tried.add(n)
                try:
                    loaders[n]()
                except BaseException:
                    self._tried.discard(n)   # the next lookup tries again (and fails the same way, loudly)
                    raise
        if name is None or name not in loaders:
            _load_external(self.group)

    def _complete(self) -> None:
        if self.group is not None and (set(declared(self.group)) - self._tried
                                       or self.group not in _EXTERNAL_LOADED):
            self._load(None)

    # ------------------------------------------------------------------ lookup

    def get(self, name: str) -> T:
        """The entry ``name`` (loading its plug-in on first use); the registry's error naming the known ones."""
        if name not in self._entries:
            self._load(name)
        try:
            return self._entries[name]
        except KeyError:
            pass
        if name not in self._entries:
            self._complete()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise self._error(f"unknown {self.kind} {name!r}; known: {known}") from None

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str) and name not in self._entries:
            self._load(name)
        return name in self._entries

    def names(self) -> list[str]:
        """Every registered name, sorted (every plug-in loaded first)."""
        self._complete()
        return sorted(self._entries)

    def items(self) -> dict[str, T]:
        """Every entry by name, sorted (every plug-in loaded first)."""
        self._complete()
        return dict(sorted(self._entries.items()))

    def loaded(self) -> dict[str, T]:
        """The entries registered so far, loading nothing."""
        return dict(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, names={sorted(self._entries)})"

"""Executor backends: where judge calls run, and the registry they fill.

``asyncio`` (the default, defined here) calls every judge in this process; ``ray``
(``runtime.raybackend``) calls them in Ray actors (a local instance, or a cluster named by
``--ray-address``/``RAY_ADDRESS``) and streams each answer back. Either way the executor
(``runtime.executor.arun``) stays the one writer of the call store: it reads what is stored, hands the
missing calls to the backend and stores each answer the moment it arrives.

A backend's ``open(judge, limit=, rpm=, policy=, state=)`` returns ``Calls``: ``await calls(key, request)`` is
one call with retries and its lease in the store (``runtime.calls``, ``state`` the run's ``RunState``), at most
``limit`` at once; ``calls.close()`` releases what the run held. ``make(name, address)`` builds a backend; a
command builds its own once, from its ``--backend`` option, into its ``runtime.context.RunContext``, which the
executor reads it from.

The registry (``BACKENDS``, a ``judgeaudit.registry.Registry``): a backend module calls ``register(name,
factory)`` when it is imported. judgeaudit's own (``ray``) is declared by the top package
(``judgeaudit.ENTRY_POINTS``) and imported the first time that name is looked up (or the list of names is
asked for); other packages' are their entry points of the group ``judgeaudit.backends``. So this module never imports a backend, and a
backend depends on this module and on ``runtime.calls`` only: the imports point one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from judgeaudit.errors import InputError
from judgeaudit.registry import Registry
from judgeaudit.runtime.calls import RateLimiter, RetryPolicy, RunState, call_with_retries, provider_semaphore

if TYPE_CHECKING:
    from judgeaudit.judges.base import Judge
    from judgeaudit.records import JudgeRequest, Verdict


class Calls(Protocol):
    def __call__(self, key: str, request: JudgeRequest) -> Awaitable[Verdict]: ...

    def close(self) -> None: ...


class Backend(Protocol):
    name: str
    #: ``map(fn, jobs, kwargs) -> [fn(*job, **kwargs) for job in jobs]`` run by the backend (None: not offered)
    map: Callable[[Callable[..., Any], Sequence[tuple[Any, ...]], dict[str, Any]], list[Any]] | None

    def open(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy,
             state: RunState | None = None) -> Calls: ...


@dataclass(frozen=True)
class Registered:
    """One registered backend: ``factory(address) -> Backend``; ``remote``: it takes an address (a cluster)."""

    factory: Callable[[str | None], Backend]
    remote: bool = False


DEFAULT = "asyncio"
PLUGIN_GROUP = "judgeaudit.backends"
"""The entry-point group of backend modules (each registers itself when imported; ``ray``: the ``ray``
package itself is imported only when that backend is made)."""

BACKENDS: Registry[Registered] = Registry("executor backend", PLUGIN_GROUP,
                                          error=lambda msg: InputError(msg, field="backend"))


def register(name: str, factory: Callable[[str | None], Backend], *, remote: bool = False) -> None:
    """Make backend ``name`` available to ``make``/``use``/``--backend``: ``factory(address)`` builds it
    (``remote``: it runs elsewhere and takes ``--ray-address``-style addresses; the others refuse one)."""
    BACKENDS.register(name, Registered(factory, remote))


def names() -> list[str]:
    """The registered backend names, the default first."""
    return sorted(BACKENDS.names(), key=lambda n: (n != DEFAULT, n))


class AsyncioCalls:
    """Calls in this process's event loop, bounded by the per-provider semaphore."""

    def __init__(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy,
                 state: RunState | None = None):
        self.judge, self.policy, self.state = judge, policy, state
        self.sem = provider_semaphore(judge.provider, limit)
        self.limiter = RateLimiter(rpm)

    def __call__(self, key: str, request: JudgeRequest) -> Awaitable[Verdict]:
        return call_with_retries(self.judge, request, key, self.policy, self.limiter, self.sem, self.state)

    def close(self) -> None:
        pass


class AsyncioBackend:
    name = "asyncio"
    map = None
    """No map of its own: parallel work (``vp audit``'s sets) stays in local processes."""

    def open(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy,
             state: RunState | None = None) -> Calls:
        return AsyncioCalls(judge, limit=limit, rpm=rpm, policy=policy, state=state)


register("asyncio", lambda address: AsyncioBackend())

def make(name: str | None = None, address: str | None = None) -> Backend:
    """The backend called ``name`` (default ``asyncio``); ``address`` is for backends that run elsewhere
    (``InputError`` when given to one that does not, or for an unknown name)."""
    name = name or DEFAULT
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; choose {', '.join(names())}", field="backend")
    entry = BACKENDS.get(name)
    if address and not entry.remote:
        remote = [n for n in names() if BACKENDS.get(n).remote]
        raise InputError(f"--ray-address needs --backend {' or '.join(remote) or 'ray'}", field="ray-address")
    return entry.factory(address)

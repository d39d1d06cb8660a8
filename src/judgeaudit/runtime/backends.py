"""Executor backends: where judge calls run.

``asyncio`` (the default) calls every judge in this process; ``ray`` calls them in Ray actors (a local
instance, or a cluster named by ``--ray-address``/``RAY_ADDRESS``) and streams each answer back. Either
way the executor (``runtime.executor.arun``) stays the one writer of the call store: it reads what is
stored, hands the missing calls to the backend and stores each answer the moment it arrives.

A backend's ``open(judge, limit=, rpm=, policy=)`` returns ``Calls``: ``await calls(key, request)`` is
one call with retries, at most ``limit`` at once; ``calls.close()`` releases what the run held.
``use(name, address)`` selects the backend for the calls made inside it (commands do it from their
``--backend`` option, see ``commands.common.calls_checked``).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from judgeaudit.errors import InputError

if TYPE_CHECKING:
    from judgeaudit.judges.base import Judge
    from judgeaudit.records import JudgeRequest, Verdict
    from judgeaudit.runtime.executor import RetryPolicy


class Calls(Protocol):
    def __call__(self, key: str, request: JudgeRequest) -> Awaitable[Verdict]: ...

    def close(self) -> None: ...


class Backend(Protocol):
    name: str
    #: ``map(fn, jobs, kwargs) -> [fn(*job, **kwargs) for job in jobs]`` run by the backend (None: not offered)
    map: Callable[[Callable[..., Any], Sequence[tuple[Any, ...]], dict[str, Any]], list[Any]] | None

    def open(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy) -> Calls: ...


class AsyncioCalls:
    """Calls in this process's event loop, bounded by the per-provider semaphore."""

    def __init__(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy):
        from judgeaudit.runtime.executor import RateLimiter, _semaphore

        self.judge, self.policy = judge, policy
        self.sem = _semaphore(judge.provider, limit)
        self.limiter = RateLimiter(rpm)

    def __call__(self, key: str, request: JudgeRequest) -> Awaitable[Verdict]:
        from judgeaudit.runtime.executor import _call_with_retries

        return _call_with_retries(self.judge, request, key, self.policy, self.limiter, self.sem)

    def close(self) -> None:
        pass


class AsyncioBackend:
    name = "asyncio"
    map = None
    """No map of its own: parallel work (``vp audit``'s sets) stays in local processes."""

    def open(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy) -> Calls:
        return AsyncioCalls(judge, limit=limit, rpm=rpm, policy=policy)


def _ray(address: str | None) -> Backend:
    return importlib.import_module("judgeaudit.runtime.raybackend").RayBackend(address)


BACKENDS: dict[str, Callable[[str | None], Backend]] = {
    "asyncio": lambda address: AsyncioBackend(),
    "ray": _ray,
}
"""Backend name -> factory(address). The first is the default."""

DEFAULT = next(iter(BACKENDS))

_ACTIVE: ContextVar[Backend | None] = ContextVar("judgeaudit_executor_backend", default=None)


def make(name: str | None = None, address: str | None = None) -> Backend:
    """The backend called ``name`` (default ``asyncio``); ``address`` is for backends that run elsewhere
    (``InputError`` when given to one that does not, or for an unknown name)."""
    name = name or DEFAULT
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; choose {', '.join(BACKENDS)}", field="backend")
    if address and name != "ray":
        raise InputError("--ray-address needs --backend ray", field="ray-address")
    return BACKENDS[name](address)


def current() -> Backend:
    """The backend selected by the innermost ``use`` (the default outside one)."""
    return _ACTIVE.get() or make()


@contextmanager
def use(name: str | None = None, address: str | None = None) -> Iterator[Backend]:
    """Run the judge calls made inside the block on backend ``name``."""
    token = _ACTIVE.set(make(name, address))
    try:
        yield _ACTIVE.get()
    finally:
        _ACTIVE.reset(token)

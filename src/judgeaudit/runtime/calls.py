"""One judge call as a run makes it, whatever the backend: the retry policy, the rate limiter, the
per-provider concurrency bound, the call's lease in the store, and the run state these share.

``call_with_retries`` is what a backend runs for each call (in this process, or in a Ray actor);
``claim`` takes the call's lease in the store first (``CallStore.claim``), inside the run's concurrency
bound, so a concurrent run sharing the store waits for that answer instead of buying it again. The
executor (``runtime.executor``) hands its ``RunState`` to the backend that makes the calls of one run; without
one (a Ray worker, which never holds the store) a call takes no lease: the driver took it before sending the
call.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgeaudit.errors import AuthError, TransientError

if TYPE_CHECKING:
    from judgeaudit.judges.base import Judge
    from judgeaudit.records import JudgeRequest, Verdict
    from judgeaudit.runtime.store import CallStore

LEASE_SECONDS = 30.0
"""A call's lease in the store: renewed every third of it while the run lives, so a killed run's calls are
free again within this time."""

LEASE_POLL = 0.5
"""Seconds between looks at a call another run holds."""


@dataclass
class RunState:
    """What one ``arun`` shares with its calls: the store and lease owner, the stop flag of the first
    Ctrl-C, and the counts the progress lines show."""

    store: CallStore | None
    owner: str
    stopping: bool = False
    in_flight: int = 0
    retries: int = 0
    waiting: int = 0
    reused: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than the server's Retry-After."""
        backoff = random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
        return max(backoff, retry_after or 0.0)


class RateLimiter:
    """Spaces call starts to at most ``rpm`` per minute (None: unlimited)."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        await asyncio.sleep(max(0.0, start - now))


# One semaphore per provider, shared by every run in this process.
_PROVIDER_SEMAPHORES: dict[tuple[int, str], asyncio.Semaphore] = {}
_PROVIDER_LIMITS: dict[str, int] = {}


def provider_semaphore(provider: str, limit: int) -> asyncio.Semaphore:
    loop_id = id(asyncio.get_running_loop())
    key = (loop_id, provider)
    if key not in _PROVIDER_SEMAPHORES or _PROVIDER_LIMITS.get(provider) != limit:
        _PROVIDER_SEMAPHORES[key] = asyncio.Semaphore(limit)
        _PROVIDER_LIMITS[provider] = limit
    return _PROVIDER_SEMAPHORES[key]


async def claim(state: RunState | None, key: str, sem: asyncio.Semaphore) -> Verdict | None:
    """Hold ``sem`` and the call's lease in the store (the stored verdict instead, when another run answered
    it meanwhile). While another live run holds the lease, wait outside ``sem``. After the first Ctrl-C no
    call is started (``CancelledError``)."""
    while True:
        await sem.acquire()
        if state is not None and state.stopping:
            sem.release()
            raise asyncio.CancelledError
        if state is None or state.store is None:
            return None
        got = state.store.claim(key, state.owner, LEASE_SECONDS)
        if got == "mine":
            return None
        if got == "done" and (v := state.store.completed([key]).get(key)) is not None:
            sem.release()
            state.reused.add(key)
            return v
        sem.release()
        state.waiting += 1
        try:
            await asyncio.sleep(LEASE_POLL * random.uniform(0.5, 1.5))
        finally:
            state.waiting -= 1


async def call_with_retries(judge: Judge, request: JudgeRequest, key: str, policy: RetryPolicy,
                             limiter: RateLimiter, sem: asyncio.Semaphore, state: RunState | None = None) -> Verdict:
    """One call with retries, its lease taken through ``state`` (the run's, None: no lease)."""
    last_error = "unknown error"
    for attempt in range(policy.max_retries + 1):
        retry_after: float | None = None
        if (stored := await claim(state, key, sem)) is not None:
            return stored
        try:
            await limiter.wait()
            started = time.perf_counter()
            if state is not None:
                state.in_flight += 1
            try:
                verdict = await asyncio.wait_for(judge.judge_one(request), timeout=policy.timeout)
                if verdict.latency_s is None:
                    verdict = verdict.model_copy(update={"latency_s": time.perf_counter() - started})
                return verdict
            except AuthError:   # no retry, and the run stops: every call fails the same way
                if state is not None:
                    state.stopping = True
                raise
            except TransientError as e:
                last_error, retry_after = str(e), e.retry_after
            except TimeoutError:
                last_error = f"timed out after {policy.timeout:g} s"
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a permanent failure: record it, do not retry
                return error_verdict(judge, request, key, f"{type(e).__name__}: {e}")
            finally:
                if state is not None:
                    state.in_flight -= 1
        finally:
            sem.release()
        if attempt < policy.max_retries:
            if state is not None:
                state.retries += 1
            await asyncio.sleep(policy.delay(attempt, retry_after))
    return error_verdict(judge, request, key, f"gave up after {policy.max_retries + 1} attempts: {last_error}")


def error_verdict(judge: Judge, request: JudgeRequest, key: str, error: str) -> Verdict:
    return judge.make_verdict(request, call_key=key, parse_ok=False, error=error, provider=judge.provider)



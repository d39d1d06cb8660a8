"""The executor: runs a judge over requests concurrently, through the call store.

* reads the store first and calls only what is missing or failed before;
* bounded concurrency per provider, optional requests-per-minute limit;
* retries transient failures with exponential backoff and full jitter, honouring ``Retry-After``;
* a per-call timeout;
* writes each verdict to the store the moment it completes, so Ctrl-C or a crash loses nothing;
* a cost/time estimate before the first call (``runtime.estimate``), then a rich progress bar with
  rate, ETA and cost so far on a terminal, or a progress line every ``progress_every`` seconds when
  stderr is not a terminal (a log file, CI);
* on Ctrl-C, one line saying how many of the run's calls are stored and where, before the interrupt
  propagates (the CLI exits 130);
* hands every run's verdicts to ``runtime.failures`` (the per-judge failure summary of a command);
* calls run on the selected backend (``runtime.backends``: this process, or Ray actors), the answers
  coming back here to be stored: the store has one writer whatever the backend.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text

from judgeaudit.errors import TransientError
from judgeaudit.judges.base import Judge
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime import backends, failures
from judgeaudit.runtime.estimate import duration, estimate
from judgeaudit.runtime.store import CallStore

PROGRESS_EVERY = 30.0
"""Seconds between progress lines when stderr is not a terminal (``JUDGEAUDIT_PROGRESS_EVERY`` overrides)."""


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


class _CostColumn(ProgressColumn):
    def __init__(self, tracker: dict[str, float]):
        super().__init__()
        self.tracker = tracker

    def render(self, task) -> Text:  # noqa: ANN001 - rich's Task
        return Text(f"${self.tracker['cost']:.4f}", style="green")


class _RateColumn(ProgressColumn):
    def render(self, task) -> Text:  # noqa: ANN001
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} calls/s" if speed else "– calls/s", style="cyan")


reported_interrupts: list[str] = []
"""The interrupted lines runs have printed (the CLI prints a generic one when there is none)."""

# One semaphore per provider, shared by every run in this process.
_PROVIDER_SEMAPHORES: dict[tuple[int, str], asyncio.Semaphore] = {}
_PROVIDER_LIMITS: dict[str, int] = {}


def _semaphore(provider: str, limit: int) -> asyncio.Semaphore:
    loop_id = id(asyncio.get_running_loop())
    key = (loop_id, provider)
    if key not in _PROVIDER_SEMAPHORES or _PROVIDER_LIMITS.get(provider) != limit:
        _PROVIDER_SEMAPHORES[key] = asyncio.Semaphore(limit)
        _PROVIDER_LIMITS[provider] = limit
    return _PROVIDER_SEMAPHORES[key]


async def _call_with_retries(judge: Judge, request: JudgeRequest, key: str, policy: RetryPolicy,
                             limiter: RateLimiter, sem: asyncio.Semaphore) -> Verdict:
    last_error = "unknown error"
    for attempt in range(policy.max_retries + 1):
        retry_after: float | None = None
        async with sem:
            await limiter.wait()
            started = time.perf_counter()
            try:
                verdict = await asyncio.wait_for(judge.judge_one(request), timeout=policy.timeout)
                if verdict.latency_s is None:
                    verdict = verdict.model_copy(update={"latency_s": time.perf_counter() - started})
                return verdict
            except TransientError as e:
                last_error, retry_after = str(e), e.retry_after
            except TimeoutError:
                last_error = f"timed out after {policy.timeout:g} s"
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a permanent failure: record it, do not retry
                return _error_verdict(judge, request, key, f"{type(e).__name__}: {e}")
        if attempt < policy.max_retries:
            await asyncio.sleep(policy.delay(attempt, retry_after))
    return _error_verdict(judge, request, key, f"gave up after {policy.max_retries + 1} attempts: {last_error}")


def _error_verdict(judge: Judge, request: JudgeRequest, key: str, error: str) -> Verdict:
    return judge._verdict(request, call_key=key, parse_ok=False, error=error, provider=judge.provider)


def _progress_every(value: float | None) -> float:
    if value is not None:
        return value
    try:
        return float(os.environ.get("JUDGEAUDIT_PROGRESS_EVERY", PROGRESS_EVERY))
    except ValueError:
        return PROGRESS_EVERY


def _progress_line(name: str, done: int, total: int, failed: int, elapsed: float) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = duration((total - done) / rate) if rate > 0 else "unknown"
    return (f"{name}: {done}/{total} calls ({100 * done // max(total, 1)}%), {rate:.2f} calls/s, ETA {eta}, "
            f"{failed} failed")


def _interrupted_line(judge: Judge, keys: list[str], store: CallStore | None) -> str:
    unique = list(dict.fromkeys(keys))
    if store is None or not judge.cacheable:
        return (f"interrupted: {judge.id}'s calls are not stored (no call store for this run); "
                "rerun the same command to start again")
    n = len(store.completed(unique))
    return (f"interrupted: {n} of {len(unique)} calls of {judge.id} stored in {store.path}; "
            "rerun the same command to resume")


async def arun(judge: Judge, requests: list[JudgeRequest], *, store: CallStore | None = None,
               concurrency: int | None = None, rpm: float | None = None,
               policy: RetryPolicy | None = None, progress: bool = True,
               description: str | None = None, progress_every: float | None = None) -> list[Verdict]:
    """Judge ``requests`` (in order) through ``store``; returns one verdict per request.

    Completed calls found in the store are returned without a call; failed ones are retried.
    With ``progress``, an estimate line comes first and, off a terminal, a progress line at most
    every ``progress_every`` seconds (on a completed call; 0: after every call).
    """
    policy = policy or RetryPolicy()
    keys = [judge.key(r) for r in requests]
    cached = store.completed(keys) if (store is not None and judge.cacheable) else {}
    results: dict[str, Verdict] = dict(cached)
    todo: dict[str, JudgeRequest] = {}
    for k, r in zip(keys, requests, strict=True):
        if k not in results:
            todo.setdefault(k, r)

    limit = max(1, min(concurrency or judge.max_concurrency, judge.max_concurrency))
    tracker = {"cost": float(sum(v.cost_usd or 0.0 for v in cached.values()))}

    console = Console(stderr=True)
    live = progress and bool(todo) and console.is_terminal
    name = description or judge.id
    if progress and todo:
        est = estimate(judge, list(todo.values()), cached=cached, concurrency=limit)
        console.print(f"{name}: {len(keys)} requests, {len(cached)} in the store, {len(todo)} to call; "
                      f"estimate: {est.describe()}", highlight=False, soft_wrap=True, markup=False)
    every = _progress_every(progress_every)
    counts = {"done": 0, "failed": 0, "last": time.perf_counter()}
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   _RateColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   _CostColumn(tracker), console=console, disable=not live, transient=False)
    started = time.perf_counter()

    async def one(k: str, r: JudgeRequest) -> None:
        v = await call(k, r)
        if store is not None and judge.cacheable:
            store.put(v)
        results[k] = v
        tracker["cost"] += v.cost_usd or 0.0
        bar.advance(task)
        counts["done"] += 1
        counts["failed"] += v.error is not None
        now = time.perf_counter()
        if progress and not live and now - counts["last"] >= every:
            counts["last"] = now
            console.print(_progress_line(name, int(counts["done"]), len(todo), int(counts["failed"]),
                                         now - started), highlight=False, soft_wrap=True, markup=False)

    call = backends.current().open(judge, limit=limit, rpm=rpm, policy=policy) if todo else None
    with bar:
        task = bar.add_task(name, total=len(todo))
        tasks = [asyncio.create_task(one(k, r)) for k, r in todo.items()]
        try:
            await asyncio.gather(*tasks)
        except BaseException as exc:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                bar.stop()
                line = _interrupted_line(judge, keys, store)
                console.print(line, highlight=False, soft_wrap=True, markup=False)
                reported_interrupts.append(line)
            raise
        finally:
            if call is not None:
                call.close()
    if progress and not live:   # no live bar (not a terminal): one line per run instead
        failed = sum(1 for k in todo if results[k].error is not None)
        console.print(f"{name}: {len(keys)} requests, {len(cached)} from the store, "
                      f"{len(todo)} called in {time.perf_counter() - started:.1f} s, {failed} failed, "
                      f"cost ${tracker['cost']:.4f}", highlight=False, soft_wrap=True)
    verdicts = [_as_answer_to(results[k], r, judge) for k, r in zip(keys, requests, strict=True)]
    failures.record(verdicts)
    return verdicts


def _as_answer_to(verdict: Verdict, request: JudgeRequest, judge: Judge) -> Verdict:
    """The stored verdict, labelled with the asking request and judge: requests that render
    identically (or judges with one fingerprint) share a call, but each gets its own row."""
    if (verdict.request_id, verdict.judge_id) == (request.request_id, judge.id):
        return verdict
    return verdict.model_copy(update={"request_id": request.request_id, "judge_id": judge.id})


def run(judge: Judge, requests: list[JudgeRequest], **kwargs) -> list[Verdict]:
    """Synchronous ``arun`` (see there for arguments)."""
    return asyncio.run(arun(judge, requests, **kwargs))

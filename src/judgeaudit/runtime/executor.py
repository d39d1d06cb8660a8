"""The executor: runs a judge over requests concurrently, through the call store.

* reads the store first and calls only what is missing or failed before;
* bounded concurrency per provider, optional requests-per-minute limit;
* retries transient failures with exponential backoff and full jitter, honouring ``Retry-After``;
* a per-call timeout;
* writes each verdict to the store the moment it completes, so a crash loses only the calls in flight;
* leases each call in the store before sending it (``CallStore.claim``), so a concurrent run sharing the
  store waits for that answer instead of buying it again;
* an authentication failure (``AuthError``) stops the run at once, without retries;
* a cost/time estimate before the first call (``runtime.estimate``), then a rich progress bar with
  rate, ETA, cost so far, calls in flight and retries on a terminal, or a progress line every
  ``progress_every`` seconds when stderr is not a terminal (a log file, CI), whether or not a call completed,
  its ETA re-estimated from the calls completed so far (``estimate.Remaining``);
* on the first Ctrl-C, no new call is sent and the calls in flight get ``INTERRUPT_GRACE`` seconds to be
  answered and stored (a second Ctrl-C aborts); then one line saying how many of the run's calls are
  stored and where, before the interrupt propagates (the CLI exits 130);
* a run's ``context`` (``runtime.context.RunContext``, built once by the command) carries the command's
  ``--timeout``/``--retries``/``--rpm``, its backend and its batch sink to every run it makes;
* hands every run's verdicts to ``runtime.failures`` (the per-judge failure summary of a command);
* calls run on the selected backend (``runtime.backends``: this process, or Ray actors), the answers
  coming back here to be stored: the store has one writer whatever the backend. One call's retries,
  rate limit and lease are ``runtime.calls``, which every backend runs.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text

from judgeaudit.errors import InputError
from judgeaudit.judges.base import Judge
from judgeaudit.records import JudgeRequest, Verdict, verdicts_frame
from judgeaudit.runtime import batch, failures
from judgeaudit.runtime.calls import LEASE_POLL, LEASE_SECONDS, RateLimiter, RetryPolicy, RunState
from judgeaudit.runtime.context import CallDefaults, RunContext
from judgeaudit.runtime.context import of as context_of
from judgeaudit.runtime.estimate import Remaining, duration, estimate, request_kind
from judgeaudit.runtime.store import CallStore
from judgeaudit.runtime.owner import run_owner

__all__ = ["LEASE_POLL", "LEASE_SECONDS", "CallDefaults", "RateLimiter", "RetryPolicy", "RunContext", "arun", "run"]

PROGRESS_EVERY = 30.0
"""Seconds between progress lines when stderr is not a terminal (``JUDGEAUDIT_PROGRESS_EVERY`` overrides)."""

INTERRUPT_GRACE = 15.0
"""Seconds the first Ctrl-C waits for the calls in flight to be answered and stored (no new call is sent
meanwhile; a second Ctrl-C aborts at once). ``JUDGEAUDIT_INTERRUPT_GRACE`` overrides."""


class _CostColumn(ProgressColumn):
    def __init__(self, tracker: dict[str, float]):
        super().__init__()
        self.tracker = tracker

    def render(self, task) -> Text:  # noqa: ANN001 - rich's Task
        return Text(f"${self.tracker['cost']:.4f}", style="green")


class _FlightColumn(ProgressColumn):
    def __init__(self, state: RunState):
        super().__init__()
        self.state = state

    def render(self, task) -> Text:  # noqa: ANN001
        s = self.state
        return Text(f"{s.in_flight} in flight, {s.retries} retries" + (f", {s.waiting} held elsewhere"
                                                                        if s.waiting else ""), style="magenta")


class _RateColumn(ProgressColumn):
    def render(self, task) -> Text:  # noqa: ANN001
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} calls/s" if speed else "– calls/s", style="cyan")


reported_interrupts: list[str] = []
"""The interrupted lines runs have printed (the CLI prints a generic one when there is none)."""

def _progress_every(value: float | None) -> float:
    if value is not None:
        return value
    try:
        return float(os.environ.get("JUDGEAUDIT_PROGRESS_EVERY", PROGRESS_EVERY))
    except ValueError:
        return PROGRESS_EVERY


def _progress_line(name: str, done: int, total: int, failed: int, elapsed: float,
                   state: RunState | None = None, left_seconds: float | None = None) -> str:
    """One progress line; the ETA is ``left_seconds`` (``estimate.Remaining``) when known, else the calls
    left at the rate so far."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if left_seconds is not None:
        eta = duration(left_seconds)
    else:
        eta = duration((total - done) / rate) if rate > 0 else "unknown"
    line = (f"{name}: {done}/{total} calls ({100 * done // max(total, 1)}%), {rate:.2f} calls/s, ETA {eta}, "
            f"{failed} failed")
    if state is not None:
        line += f", {state.in_flight} in flight, {state.retries} retries"
        if state.waiting:
            line += f", {state.waiting} held by another run"
    return line


def _interrupt_grace() -> float:
    try:
        return max(0.0, float(os.environ.get("JUDGEAUDIT_INTERRUPT_GRACE", INTERRUPT_GRACE)))
    except ValueError:
        return INTERRUPT_GRACE


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
               description: str | None = None, progress_every: float | None = None,
               context: RunContext | None = None) -> list[Verdict]:
    """Judge ``requests`` (in order) through ``store``; returns one verdict per request.

    Completed calls found in the store are returned without a call; failed ones are retried.
    With ``progress``, an estimate line comes first and, off a terminal, a progress line at most
    every ``progress_every`` seconds (on a completed call; 0: after every call). ``context`` (a command's
    ``RunContext``; None: the defaults) gives the policy and rate when ``policy``/``rpm`` are not given, the
    backend the calls run on, and the batch sink the calls go to instead.
    """
    context = context_of(context)
    policy = policy or context.calls.policy()
    rpm = context.calls.rpm if rpm is None else rpm
    keys = [judge.key(r) for r in requests]
    cached = store.completed(keys) if (store is not None and judge.cacheable) else {}
    results: dict[str, Verdict] = dict(cached)
    todo: dict[str, JudgeRequest] = {}
    for k, r in zip(keys, requests, strict=True):
        if k not in results:
            todo.setdefault(k, r)

    if todo and (sink := context.sink) is not None and judge.cacheable and sink.takes(judge):
        if store is None:
            raise InputError("--batch needs a call store: the provider's answers are read into it", field="--batch")
        sink.defer(judge, todo, store)   # no call is made: the calls go to the provider's batch file
        raise batch.Deferred(judge.id, len(todo))

    limit = max(1, min(concurrency or judge.max_concurrency, judge.max_concurrency))
    tracker = {"cost": float(sum(v.cost_usd or 0.0 for v in cached.values()))}

    console = Console(stderr=True)
    live = progress and bool(todo) and console.is_terminal
    name = description or judge.id
    prior = None
    if progress and todo:
        est = estimate(judge, list(todo.values()), cached=cached, concurrency=limit)
        prior = est.per_call
        console.print(f"{name}: {len(keys)} requests, {len(cached)} in the store, {len(todo)} to call; "
                      f"estimate: {est.describe()}", highlight=False, soft_wrap=True, markup=False)
    every = _progress_every(progress_every)
    counts = {"done": 0, "failed": 0, "last": time.perf_counter()}
    state = RunState(store=store if (store is not None and judge.cacheable) else None, owner=run_owner())
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   _RateColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   _CostColumn(tracker), _FlightColumn(state), console=console, disable=not live,
                   transient=False)
    started = time.perf_counter()

    remaining = Remaining([request_kind(r) for r in todo.values()], concurrency=limit, prior=prior)

    def print_progress(now: float) -> None:
        counts["last"] = now
        console.print(_progress_line(name, int(counts["done"]), len(todo), int(counts["failed"]),
                                     now - started, state, remaining.seconds()),
                      highlight=False, soft_wrap=True, markup=False)

    async def one(k: str, r: JudgeRequest) -> None:
        v = await call(k, r)
        if k not in state.reused:   # a call another run answered meanwhile is neither stored again nor paid here
            if state.store is not None:
                state.store.put(v)
            tracker["cost"] += v.cost_usd or 0.0
        results[k] = v
        remaining.done(request_kind(r), None if (k in state.reused or v.error is not None) else v.latency_s)
        bar.advance(task)
        counts["done"] += 1
        counts["failed"] += v.error is not None
        now = time.perf_counter()
        if progress and not live and now - counts["last"] >= every:
            print_progress(now)

    async def ticker() -> None:
        """Renews this run's leases and, off a terminal, prints a progress line every ``every`` seconds
        even when no call completes (calls in flight, retries)."""
        while True:
            await asyncio.sleep(max(0.05, min(LEASE_SECONDS / 3, every if every > 0 else LEASE_SECONDS / 3)))
            if state.store is not None:
                state.store.renew(state.owner, LEASE_SECONDS)
            now = time.perf_counter()
            if progress and not live and every > 0 and now - counts["last"] >= every:
                print_progress(now)

    call = context.backend.open(judge, limit=limit, rpm=rpm, policy=policy, state=state) if todo else None
    with bar:
        task = bar.add_task(name, total=len(todo))
        tasks = [asyncio.create_task(one(k, r)) for k, r in todo.items()]
        tick = asyncio.create_task(ticker()) if tasks else None
        try:
            if tasks:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                for t in done:
                    if not t.cancelled() and t.exception() is not None:
                        raise t.exception()
        except BaseException as exc:
            state.stopping = True   # no new call is sent
            interrupted = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
            pending = [t for t in tasks if not t.done()]
            if interrupted and pending and state.in_flight:
                grace = _interrupt_grace()
                bar.stop()
                console.print(f"interrupted: sending no new calls; waiting up to {grace:g} s for the "
                              f"{state.in_flight} in flight to be answered and stored (Ctrl-C again aborts)",
                              highlight=False, soft_wrap=True, markup=False)
                await asyncio.wait(pending, timeout=grace)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if interrupted:
                bar.stop()
                line = _interrupted_line(judge, keys, store)
                console.print(line, highlight=False, soft_wrap=True, markup=False)
                reported_interrupts.append(line)
            raise
        finally:
            if tick is not None:
                tick.cancel()
            if state.store is not None:
                state.store.release(state.owner)
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


def judge_all(judges: list[Judge], requests: list[JudgeRequest], *, store_path: Path,
              concurrency: int | None = None, policy: RetryPolicy | None = None,
              progress: bool = True, context: RunContext | None = None) -> pd.DataFrame:
    """Run every judge on every request it can answer (``Judge.can_answer``) through one call store (in
    ``context``, see ``arun``); the verdict table of all of them."""
    frames = []
    deferred: list[batch.Deferred] = []   # with --batch, every judge's missing calls go to the one batch file
    with CallStore(store_path) as store:
        for j in judges:
            try:
                verdicts = run(j, [r for r in requests if j.can_answer(r)], store=store, concurrency=concurrency,
                               policy=policy, progress=progress, context=context)
            except batch.Deferred as d:
                deferred.append(d)
                continue
            frames.append(verdicts_frame(verdicts))
    if deferred:
        raise batch.Deferred(", ".join(d.judge_id for d in deferred), sum(d.n for d in deferred))
    return pd.concat(frames, ignore_index=True) if frames else verdicts_frame([])

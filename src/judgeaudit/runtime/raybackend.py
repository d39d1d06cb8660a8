"""The Ray executor backend: judge calls run in Ray actors, each answer streams back to the driver.

The driver (the process running the command) connects to Ray — a local instance it starts, or the
cluster named by ``--ray-address`` (``HOST:PORT`` of a head node, ``ray://HOST:10001`` through Ray
Client, ``auto``) or ``RAY_ADDRESS`` — and starts a pool of async actors once (``pool``: their imports
are paid once per command). For each judge run every actor rebuilds the judge from its spec (``Judge.recipe``: the spec string and options ``make_judge`` got; a spec is
picklable, a judge holding a socket or a model is not) and checks that the rebuilt judge is the same
instrument (same ``JudgeSpec``, hence the same call keys). A judge built without a spec is sent as it
is and must pickle.

The driver keeps at most ``limit`` calls in flight across the actors (each actor bounds its own share
and applies the retry policy and its share of the rate limit) and awaits each call's result as it
completes; the executor stores it at once. Only the driver writes the store, so a killed driver loses
only the calls in flight, and a rerun buys nothing that was stored. The driver also takes each call's lease
in the store before sending it (``runtime.calls.claim``, as the asyncio backend does), so another run
sharing the store — on Ray or not — waits for that answer instead of buying it again.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from judgeaudit.errors import InputError
from judgeaudit.runtime import backends, raywatch
from judgeaudit.runtime.calls import RateLimiter, RetryPolicy, RunState, call_with_retries, claim

if TYPE_CHECKING:
    from judgeaudit.judges.base import Judge, JudgeSpec
    from judgeaudit.records import JudgeRequest, Verdict

INSTALL_HINT = "pip install 'judgeaudit[ray]'"
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a TCP connection to the cluster before calling it unreachable."""
START_TIMEOUT = 300.0
"""Seconds to wait for the actors to start and rebuild a run's judge."""

_CONNECT_LOCK = threading.Lock()


def import_ray() -> Any:
    """The ``ray`` module, or ``InputError`` saying how to install it."""
    try:
        import ray
    except ImportError as e:
        raise InputError(f"--backend ray needs Ray, which is not installed ({e}); {INSTALL_HINT}",
                         field="backend") from None
    return ray


def check_reachable(address: str, *, timeout: float = CONNECT_TIMEOUT) -> None:
    """``InputError`` unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a TCP connection within
    ``timeout`` seconds (Ray itself retries an absent cluster for minutes). ``auto`` is not checked."""
    target = address.removeprefix("ray://")
    if target in ("auto", "local"):
        return
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"Ray address must be HOST:PORT, ray://HOST:PORT or auto, got {address!r}",
                         field="ray-address")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise InputError(f"Ray cluster at {address} is unreachable ({e.strerror or e})", field="ray-address") from None


def cluster_address(address: str | None) -> str | None:
    """The cluster to use: ``address``, else ``RAY_ADDRESS``, else None (a local instance)."""
    return address or os.environ.get("RAY_ADDRESS") or None


def connect(address: str | None = None) -> Any:
    """Ray, initialised once per process: an instance already initialised here (a test's, a notebook's)
    is used as it is; else the cluster at ``address`` (or ``RAY_ADDRESS``); else a new local instance,
    watched by ``runtime.raywatch`` so that it ends with this process even when the process is killed."""
    ray = import_ray()
    with _CONNECT_LOCK:
        if ray.is_initialized():
            return ray
        address = cluster_address(address)
        if address:
            check_reachable(address)
        try:
            if address:
                ray.init(address=address)
            else:
                ray.init(include_dashboard=False)
                raywatch.start()   # the instance ends with this process, even when it is killed
        except Exception as e:  # noqa: BLE001 - Ray raises bare Exception when a local node does not start
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            if "InvalidAuthToken" in f"{e} {e.__cause__}":
                e = "it requires token authentication: set RAY_AUTH_MODE=token and give its token " \
                    "(RAY_AUTH_TOKEN, or the file ~/.ray/auth_token)"
            raise InputError(f"could not connect to {where}: {e}", field="ray-address") from None
    return ray


class JudgeWorker:
    """A pool actor (made a Ray actor class in ``pool``): runs calls of the judges registered on it, each
    within its own share of the run's concurrency and rate limits."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[Judge, asyncio.Semaphore, Any, RetryPolicy]] = {}

    async def add(self, token: str, recipe: tuple[str, dict[str, Any]] | None, judge: Judge | None,
                  spec: JudgeSpec, limit: int, rpm: float | None, policy: RetryPolicy) -> str:
        """Register one run's judge: rebuilt from its recipe (or the judge as sent) and checked to be
        the driver's instrument."""
        if recipe is not None:
            from judgeaudit.judges.base import make_judge

            judge = make_judge(recipe[0], **recipe[1])
        assert judge is not None
        if judge.spec != spec:
            raise RuntimeError(f"judge {spec.id!r} rebuilt on a Ray worker is another instrument "
                               f"(fingerprint {judge.spec.fingerprint()} there, {spec.fingerprint()} on the driver)")
        self.runs[token] = (judge, asyncio.Semaphore(limit), RateLimiter(rpm), policy)
        return judge.id

    async def drop(self, token: str) -> None:
        """Forget a finished run's judge, closing what it holds (an HTTP client in this loop)."""
        run = self.runs.pop(token, None)
        if run is not None:
            if (aclose := getattr(run[0], "aclose", None)) is not None:
                await aclose()
            run[0].close()

    async def call(self, token: str, key: str, request: JudgeRequest) -> Verdict:
        """One call with retries. A worker holds no store and takes no lease: the driver took the call's
        lease before sending it here."""
        judge, sem, limiter, policy = self.runs[token]
        return await call_with_retries(judge, request, key, policy, limiter, sem)


_POOL: dict[tuple[str, str], list[Any]] = {}
_POOL_LOCK = threading.Lock()


def pool(ray: Any, size: int) -> list[Any]:
    """``size`` of this driver's actors (at most one per CPU of the cluster), started on first use and kept
    for its later runs, so a worker's imports are paid once per command; spread over the nodes. They
    reserve no CPU — a judge call mostly waits on a server — so runs never wait for one another's actors."""
    ctx = ray.get_runtime_context()
    session = (ctx.gcs_address, ctx.get_job_id())
    size = max(1, min(size, int(ray.cluster_resources().get("CPU", 1))))
    with _POOL_LOCK:   # runs in several threads of one driver share its pool
        if session not in _POOL:
            _POOL.clear()   # a pool of an earlier Ray session is gone with it
            _POOL[session] = []
        actors = _POOL[session]
        if len(actors) < size:
            worker = ray.remote(JudgeWorker).options(num_cpus=0, scheduling_strategy="SPREAD")
            actors += [worker.remote() for _ in range(size - len(actors))]
        return actors[:size]


class RayCalls:
    """The calls of one judge run, spread over the pool's actors; at most ``limit`` in flight."""

    def __init__(self, ray: Any, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy,
                 state: RunState | None = None):
        self.ray, self.token, self.state = ray, uuid.uuid4().hex, state
        self.actors = pool(ray, limit)
        n = len(self.actors)
        share, rate = math.ceil(limit / n), (rpm / n if rpm else None)
        shipped = None if judge.recipe is not None else judge
        try:
            added = [a.add.remote(self.token, judge.recipe, shipped, judge.spec, share, rate, policy)
                     for a in self.actors]
        except TypeError as e:   # the judge (or an option) does not pickle
            raise InputError(f"judge {judge.id!r} cannot be sent to Ray workers ({e}); build it from a spec",
                             field="judge") from None
        self.in_flight = [0] * n
        self.window = asyncio.Semaphore(limit)
        try:
            ray.get(added, timeout=START_TIMEOUT)
        except Exception as e:   # noqa: BLE001 - Ray wraps the worker's error in its own types
            self.close()
            cause = getattr(e, "cause", None) or e
            raise InputError(f"judge {judge.id!r} could not start on Ray workers: {type(cause).__name__}: {cause}",
                             field="judge") from None

    async def __call__(self, key: str, request: JudgeRequest) -> Verdict:
        """One call: its lease in the store is taken here, on the driver, inside the run's window (the
        stored verdict instead, when another run answered it meanwhile), then the call goes to the actor
        with the fewest in flight."""
        state = self.state
        if (stored := await claim(state, key, self.window)) is not None:
            return stored
        i = min(range(len(self.actors)), key=self.in_flight.__getitem__)
        self.in_flight[i] += 1
        if state is not None:
            state.in_flight += 1
        try:
            ref = self.actors[i].call.remote(self.token, key, request)
            try:
                return await ref
            except asyncio.CancelledError:
                self.ray.cancel(ref)
                raise
        finally:
            self.in_flight[i] -= 1
            if state is not None:
                state.in_flight -= 1
            self.window.release()

    def close(self) -> None:
        for a in self.actors:
            a.drop.remote(self.token)


class RayBackend:
    name = "ray"
    remote = True

    def __init__(self, address: str | None = None):
        """Fails at once (``InputError``) when Ray is not installed or the cluster does not answer."""
        import_ray()
        self.address = cluster_address(address)
        if self.address:
            check_reachable(self.address)

    def open(self, judge: Judge, *, limit: int, rpm: float | None, policy: RetryPolicy,
             state: RunState | None = None) -> RayCalls:
        return RayCalls(connect(self.address), judge, limit=limit, rpm=rpm, policy=policy, state=state)

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], kwargs: dict[str, Any]) -> list[Any]:
        """``[fn(*job, **kwargs) for job in jobs]``, one Ray task per job (a CPU each), in job order.
        ``fn`` must be importable on the workers (a module-level function)."""
        ray = connect(self.address)
        task = ray.remote(fn)
        return ray.get([task.remote(*job, **kwargs) for job in jobs])


backends.register("ray", RayBackend, remote=True)

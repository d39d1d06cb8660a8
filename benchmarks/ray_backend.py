"""Ray backend overhead vs the asyncio backend at equal concurrency, against the async server.

Starts ``benchmarks/async_server.py`` in its own process (200 ms latency, loopback) and a local Ray
instance (no dashboard), then for each in-flight count (default 8 and 32) runs the same api judge
(lean transport) through the executor with a call store on both backends and prints the fraction of
the ceiling (in flight / latency) each reaches, side by side, in one run. Ray's start (``ray.init``) and
its actors' first start (their imports) are timed apart: they are paid once per command, not per call.
Run: python benchmarks/ray_backend.py [--in-flight 8 32] [--latency 0.2] [--cap 2000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from async_server import ServerProcess, calls_for  # noqa: E402

from judgeaudit.judges import make_judge  # noqa: E402
from judgeaudit.records import JudgeRequest  # noqa: E402
from judgeaudit.runtime.context import RunContext  # noqa: E402
from judgeaudit.runtime.executor import run  # noqa: E402
from judgeaudit.runtime.store import CallStore  # noqa: E402


def requests(n: int, tag: str) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"{tag}{i}", text=f"claim {tag} {i}", evidence="e") for i in range(n)]


def rate(judge, backend: str, in_flight: int, calls: int, store: CallStore) -> float:  # noqa: ANN001
    reqs = requests(calls, f"{backend}-{in_flight}-")
    context = RunContext.of(backend=backend)
    started = time.perf_counter()
    verdicts = run(judge, reqs, store=store, concurrency=in_flight, progress=False, context=context)
    elapsed = time.perf_counter() - started
    failed = sum(v.error is not None or not v.parse_ok for v in verdicts)
    if failed:
        raise SystemExit(f"{failed} of {calls} calls failed on {backend} at {in_flight} in flight")
    return calls / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--cap", type=int, default=2000, help="most calls per cell")
    args = ap.parse_args()
    import ray

    with ServerProcess(args.latency) as url, tempfile.TemporaryDirectory() as tmp, \
            CallStore(Path(tmp) / "calls.sqlite") as store:
        judge = make_judge("api:openai/bench", api_base=url, max_concurrency=max(args.in_flight))
        print(f"executor backends, async loopback server at {args.latency * 1000:.0f} ms, lean transport, call "
              f"store on; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
        started = time.perf_counter()
        ray.init(include_dashboard=False)
        init_s = time.perf_counter() - started
        started = time.perf_counter()
        rate(judge, "ray", 2, 4, store)        # the actors' first start and imports
        actors_s = time.perf_counter() - started
        rate(judge, "asyncio", 2, 4, store)
        print(f"ray.init {init_s:.1f} s; actor pool's first run (start, imports, 4 calls) {actors_s:.1f} s")
        print(f"{'in flight':>9} {'calls':>6} {'ceiling/s':>9} {'asyncio':>8} {'ray':>6} {'ray/asyncio':>11}")
        for c in args.in_flight:
            n = calls_for(c, args.latency, cap=args.cap)
            ceiling = c / args.latency
            a = rate(judge, "asyncio", c, n, store) / ceiling
            r = rate(judge, "ray", c, n, store) / ceiling
            print(f"{c:>9} {n:>6} {ceiling:>9.1f} {a:>8.2f} {r:>6.2f} {r / a:>11.2f}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        ray.shutdown()


if __name__ == "__main__":
    main()

"""Lean HTTP transport vs LiteLLM for api judges, through the executor, against the async server.

Starts ``benchmarks/async_server.py`` in its own process (200 ms latency, loopback), then for 1, 8,
32 and 128 calls in flight prints the fraction of the ceiling (in flight / latency) reached by a
bare aiohttp client (the reference: what this machine allows right now), by the executor with the
lean transport and by the executor with LiteLLM, side by side, all in one run. Call counts are
bounded (about 5 s at the ceiling per cell, at most ``--cap``).
Run: python benchmarks/lean_path.py [--cap 2000] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from async_server import ServerProcess, bare_client_rate, calls_for  # noqa: E402

from judgeaudit.judges import make_judge  # noqa: E402
from judgeaudit.records import JudgeRequest  # noqa: E402
from judgeaudit.runtime.executor import run  # noqa: E402

IN_FLIGHT = (1, 8, 32, 128)


def requests(n: int, tag: str) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"{tag}{i}", text=f"claim {tag} {i}", evidence="e") for i in range(n)]


def judge_rate(url: str, transport: str, in_flight: int, calls: int) -> float:
    judge = make_judge(f"api:openai/bench?transport={transport}", api_base=url, max_concurrency=max(IN_FLIGHT))
    run(judge, requests(4, f"warm-{transport}-{in_flight}-"), progress=False)
    reqs = requests(calls, f"{transport}-{in_flight}-")
    started = time.perf_counter()
    verdicts = run(judge, reqs, concurrency=in_flight, progress=False)
    rate = calls / (time.perf_counter() - started)
    failed = sum(v.error is not None or not v.parse_ok for v in verdicts)
    if failed:
        raise SystemExit(f"{failed} of {calls} {transport} calls failed at {in_flight} in flight")
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--cap", type=int, default=2000, help="most calls per cell")
    args = ap.parse_args()
    with ServerProcess(args.latency) as url:
        print(f"api judge throughput, async loopback server at {args.latency * 1000:.0f} ms; "
              f"fraction of the ceiling (in flight / latency); {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f} at start")
        print(f"{'in flight':>9} {'calls':>6} {'ceiling/s':>9} {'bare':>6} {'lean':>6} {'litellm':>7}")
        for c in IN_FLIGHT:
            n = calls_for(c, args.latency, cap=args.cap)
            ceiling = c / args.latency
            bare = asyncio.run(bare_client_rate(url, c, n)) / ceiling
            lean = judge_rate(url, "http", c, n) / ceiling
            slow = judge_rate(url, "litellm", c, n) / ceiling
            print(f"{c:>9} {n:>6} {ceiling:>9.1f} {bare:>6.2f} {lean:>6.2f} {slow:>7.2f}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

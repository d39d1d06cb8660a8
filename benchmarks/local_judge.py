"""The embedded local judge on this machine: graded items per second at batch sizes 1, 8, 32,
and cold vs. warm start.

A "batch" is one ``judge()`` call of that many graded items sharing the few-shot prefix. llama.cpp
runs them one after another; the shared prefix is evaluated once and reused from the KV cache.
Run: python benchmarks/local_judge.py
     python benchmarks/local_judge.py --compare /tmp/main-src/src   # items/s of another src tree beside
                                                                     # this one, threads 1 and 2, alternated
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time

from judgeaudit.judges import local, make_judge
from judgeaudit.probes.design import graded_requests
from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.records import probes_frame

COLD = ("import time; t=time.perf_counter(); from judgeaudit.judges import make_judge; import asyncio; "
        "from judgeaudit.records import JudgeRequest as R; j=make_judge('local'); "
        "asyncio.run(j.judge_one(R(request_id='a', text='A claim.', evidence='Some evidence.'))); "
        "print(time.perf_counter()-t)")


RATE = ("import asyncio, time, sys; from judgeaudit.judges import local, make_judge; "
        "from judgeaudit.probes.design import graded_requests; "
        "from judgeaudit.probes.io import bundled_probes_path, read_probes; from judgeaudit.records import probes_frame; "
        "reqs = graded_requests(probes_frame(read_probes(bundled_probes_path()))); j = make_judge('local'); "
        "asyncio.run(j.judge_one(reqs[0])); b = int(sys.argv[1]); items = reqs[2:2 + 48]; t = time.perf_counter(); "
        "[asyncio.run(j.judge(items[i:i + b])) for i in range(0, len(items), b)]; "
        "print(len(items) / (time.perf_counter() - t))")


def compare(other_src: str, rounds: int) -> None:
    """Graded items/s at batch 1 and 8, threads 1 and 2, of ``other_src`` and this tree, alternated in one
    invocation so that both see the same load."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    print(f"load average at start: {os.getloadavg()}")
    print(f"{'tree':>6} {'threads':>7} {'batch':>5} {'items/s':>8}")
    for r in range(rounds):
        for threads in ("1", "2"):
            for b in ("1", "8"):
                for name, src in (("before", other_src), ("after", here)):
                    env = dict(os.environ, PYTHONPATH=src, JUDGEAUDIT_LOCAL_THREADS=threads)
                    out = subprocess.run([sys.executable, "-c", RATE, b], capture_output=True, text=True, env=env)
                    print(f"{name:>6} {threads:>7} {b:>5} {float(out.stdout.split()[-1]):>8.2f}", flush=True)
    print(f"load average at end: {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", metavar="SRC", help="another judgeaudit src tree to measure beside this one")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, args.rounds)
        return
    reqs = graded_requests(probes_frame(read_probes(bundled_probes_path())))
    cold = float(subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True).stdout.split()[-1])
    t = time.perf_counter()
    asyncio.run(make_judge("local").judge_one(reqs[0]))
    first_in_process = time.perf_counter() - t
    judge = make_judge("local")                     # a new judge: the loaded model is reused
    t = time.perf_counter()
    asyncio.run(judge.judge_one(reqs[1]))
    warm = time.perf_counter() - t
    print(f"start to first verdict: cold process (imports + load + item) {cold:.2f} s; "
          f"in-process first load {first_in_process:.2f} s; warm (model loaded) {warm:.3f} s; "
          f"cold/warm {cold / warm:.0f}x")
    print(f"{'batch':>5} {'items':>5} {'items/s':>8} {'vs batch 1':>10}")
    base = None
    offset = 2
    for b in (1, 8, 32):
        n_batches = max(1, 64 // b)
        items = reqs[offset: offset + b * n_batches]
        offset += len(items)
        local._DIST_CACHE.clear()
        t = time.perf_counter()
        for i in range(n_batches):
            asyncio.run(judge.judge(items[i * b:(i + 1) * b]))
        rate = len(items) / (time.perf_counter() - t)
        base = base or rate
        print(f"{b:>5} {len(items):>5} {rate:>8.2f} {rate / base:>10.2f}")


if __name__ == "__main__":
    main()

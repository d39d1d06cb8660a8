"""The embedded local judge on this machine: graded items per second at batch sizes 1, 8, 32,
and cold vs. warm start.

A "batch" is one ``judge()`` call of that many graded items sharing the few-shot prefix. llama.cpp
runs them one after another; the shared prefix is evaluated once and reused from the KV cache.
Run: python benchmarks/local_judge.py
"""

from __future__ import annotations

import asyncio
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


def main() -> None:
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

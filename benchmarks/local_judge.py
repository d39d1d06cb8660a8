"""The embedded local judge on this machine: graded items per second at batch sizes 1, 8, 32,
and cold vs. warm start.

A "batch" is one ``judge()`` call of that many graded items sharing the few-shot prefix. llama.cpp
runs them one after another; the shared prefix is evaluated once and reused from the KV cache.
Then what one call costs (prompt tokens, tokens evaluated, generated tokens, seconds).
Run: python benchmarks/local_judge.py
     python benchmarks/local_judge.py --compare /tmp/main-src/src   # items/s at batch 1 of another src tree
        # ("before") beside this one ("after"), alternated: threads 1, 2 and each tree's default (this
        # tree: chosen by measured speed), no load added and one busy core
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
        "asyncio.run(j.judge_one(reqs[0])); b, n = int(sys.argv[1]), int(sys.argv[2]); items = reqs[2:2 + n]; "
        "t = time.perf_counter(); [asyncio.run(j.judge(items[i:i + b])) for i in range(0, len(items), b)]; "
        "print(len(items) / (time.perf_counter() - t))")

BUSY = "while True: pass"


def compare(other_src: str, rounds: int, items: int,
            thread_counts: tuple[str, ...] = ("1", "2", "default")) -> None:
    """Graded items/s at batch 1 of ``other_src`` ("before") and this tree ("after"), at 1 and 2 compute
    threads and at each tree's default (``JUDGEAUDIT_LOCAL_THREADS`` unset), with no load added and beside
    one busy-looping process this benchmark starts (one core busy), the two trees alternated in one
    invocation so that both see the same load. Prints every measurement, then the median items/s of each
    cell and the after/before ratio."""
    import statistics

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    print(f"load average at start: {os.getloadavg()}")
    rates: dict[tuple[str, str, str], list[float]] = {}
    print(f"{'load':>9} {'threads':>7} {'tree':>6} {'items/s':>8}")
    for _ in range(rounds):
        for load in ("none", "busy core"):
            busy = subprocess.Popen([sys.executable, "-c", BUSY]) if load == "busy core" else None
            try:
                for threads in thread_counts:
                    for name, src in (("before", other_src), ("after", here)):
                        env = dict(os.environ, PYTHONPATH=src, JUDGEAUDIT_LOCAL_THREADS=threads)
                        if threads == "default":
                            del env["JUDGEAUDIT_LOCAL_THREADS"]
                        out = subprocess.run([sys.executable, "-c", RATE, "1", str(items)], capture_output=True,
                                             text=True, env=env, check=True)
                        rate = float(out.stdout.split()[-1])
                        rates.setdefault((load, threads, name), []).append(rate)
                        print(f"{load:>9} {threads:>7} {name:>6} {rate:>8.2f}", flush=True)
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()
    print(f"load average at end: {os.getloadavg()}")
    print(f"\nmedian of {rounds} round(s), {items} graded items at batch 1")
    print(f"{'load':>9} {'threads':>7} {'before':>8} {'after':>8} {'after/before':>12}")
    for load in ("none", "busy core"):
        for threads in thread_counts:
            b, a = (statistics.median(rates[(load, threads, n)]) for n in ("before", "after"))
            print(f"{load:>9} {threads:>7} {b:>8.2f} {a:>8.2f} {a / b:>12.2f}")


def call_costs(judge, reqs, n: int = 24) -> None:
    """What a call costs on this tree: prompt tokens, tokens evaluated after the reused prefix, generated
    tokens and seconds, for graded calls in probe order after the first, regrades (a fresh pass) and a
    generation of 128 tokens (the demo's loop revisions are generations of at most 128)."""
    from judgeaudit.records import JudgeRequest

    items = reqs[2:2 + n]
    local._DIST_CACHE.clear()
    graded = judge.planned_work(items)[1:]          # the first is graded untimed: the prefix is then cached
    asyncio.run(judge.judge_one(items[0]))
    items = items[1:]
    t = time.perf_counter()
    for r in items:
        asyncio.run(judge.judge_one(r))
    g_sec = (time.perf_counter() - t) / len(items)
    regrades = [r.model_copy(update={"meta": {**r.meta, "regrade": True}}) for r in items[:4]]
    t = time.perf_counter()
    for r in regrades:
        asyncio.run(judge.judge_one(r))
    r_sec = (time.perf_counter() - t) / len(regrades)
    prompt = sum(len(judge.llm.tokenize((judge.render(r) + " ").encode(), add_bos=True, special=False))
                 for r in items) / len(items)
    gen = make_judge("local", max_tokens=128)
    v = asyncio.run(gen.judge_one(JudgeRequest(request_id="g", form="generate",
                                               prompt="Write three sentences about rivers.\n")))
    print(f"{'call':>18} {'prompt tok':>10} {'evaluated':>9} {'generated':>9} {'s/call':>7}")
    print(f"{'graded':>18} {prompt:>10.0f} {sum(w.evaluated for w in graded) / len(graded):>9.1f} {0:>9} {g_sec:>7.3f}")
    print(f"{'graded (regrade)':>18} {prompt:>10.0f} {prompt:>9.0f} {0:>9} {r_sec:>7.3f}")
    print(f"{'generate':>18} {v.input_tokens:>10} {v.input_tokens:>9} {v.output_tokens:>9} {v.latency_s:>7.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", metavar="SRC", help="another judgeaudit src tree to measure beside this one")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--items", type=int, default=48, help="graded items per --compare measurement")
    ap.add_argument("--threads", default="1,2,default",
                    help="compute thread counts --compare measures ('default': the variable unset)")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, args.rounds, args.items, tuple(args.threads.split(",")))
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
    print()
    call_costs(judge, reqs)


if __name__ == "__main__":
    main()

"""Executor throughput against the local server (200 ms simulated latency), and resumption cost.

Prints, for concurrency 1, 8, 32 and 128: achieved calls/s as a fraction of the ceiling
(concurrency / latency); then the cost of a resumed run (half the calls already in the store) and
of a rerun (all in the store) as fractions of a cold run, in calls made and in wall time.
Run: python benchmarks/executor_throughput.py [--calls 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


from judgeaudit.judges import make_judge  # noqa: E402
from judgeaudit.records import JudgeRequest  # noqa: E402
from judgeaudit.runtime.executor import run  # noqa: E402
from judgeaudit.runtime.store import CallStore  # noqa: E402

LATENCY = 0.2


class ServerProcess:
    """The local server in its own process, so it does not share the client's interpreter lock."""

    def __init__(self, tmp: Path, latency: float):
        self.tmp, self.latency = tmp, latency

    def __enter__(self) -> "ServerProcess":
        port_file, self.log = self.tmp / "port", self.tmp / "answered.log"
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parents[1] / "tests" / "fakeserver.py"),
                                      "--latency", str(self.latency), "--port-file", str(port_file),
                                      "--log", str(self.log)])
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        self.base_url = port_file.read_text()
        return self

    @property
    def requests(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait()


def requests(n: int, tag: str) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"{tag}{i}", text=f"claim {tag} {i}", evidence="e") for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(Path(tmp), LATENCY) as srv:
        judge = make_judge("api:openai/fake", api_base=srv.base_url, max_concurrency=256)
        run(judge, requests(4, "warm"), progress=False)
        print(f"executor throughput, {LATENCY * 1000:.0f} ms simulated latency")
        print(f"{'concurrency':>11} {'calls':>6} {'calls/s':>9} {'ceiling':>8} {'fraction':>8}")
        for c in (1, 8, 32, 128):
            n = min(args.calls, 50) if c == 1 else args.calls   # 1,000 calls at concurrency 1 take 200 s
            reqs = requests(n, f"c{c}-")
            t = time.perf_counter()
            run(judge, reqs, concurrency=c, progress=False)
            rate = n / (time.perf_counter() - t)
            ceiling = c / LATENCY
            print(f"{c:>11} {n:>6} {rate:>9.1f} {ceiling:>8.1f} {rate / ceiling:>8.2f}")

        reqs = requests(args.calls, "resume-")
        store_cold = CallStore(Path(tmp) / "cold.sqlite")
        before = len(srv.requests)
        t = time.perf_counter()
        run(judge, reqs, store=store_cold, concurrency=128, progress=False)
        cold_t, cold_n = time.perf_counter() - t, len(srv.requests) - before

        store_half = CallStore(Path(tmp) / "half.sqlite")
        run(judge, [r.model_copy(update={"request_id": r.request_id}) for r in reqs[: args.calls // 2]],
            store=store_half, concurrency=128, progress=False)
        before = len(srv.requests)
        t = time.perf_counter()
        run(judge, reqs, store=store_half, concurrency=128, progress=False)
        half_t, half_n = time.perf_counter() - t, len(srv.requests) - before

        before = len(srv.requests)
        t = time.perf_counter()
        run(judge, reqs, store=store_cold, concurrency=128, progress=False)
        full_t, full_n = time.perf_counter() - t, len(srv.requests) - before
        print("\nresumption (concurrency 128)")
        print(f"{'run':>26} {'calls made':>10} {'fraction':>8} {'time fraction':>13}")
        print(f"{'cold':>26} {cold_n:>10} {1.0:>8.2f} {1.0:>13.2f}")
        print(f"{'resumed, half in store':>26} {half_n:>10} {half_n / cold_n:>8.2f} {half_t / cold_t:>13.2f}")
        print(f"{'rerun, all in store':>26} {full_n:>10} {full_n / cold_n:>8.2f} {full_t / cold_t:>13.3f}")


if __name__ == "__main__":
    main()

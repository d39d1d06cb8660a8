"""World run throughput against the local server (200 ms simulated latency), and a rerun from the store.

All HaluEval QA answers (1,000: the right and the hallucinated answer of 500 questions) × 3 arms
(blind, informed, placebo) × 3 votes = 9,000 label calls through ``judgeaudit world``'s runner.
Prints calls/s against the concurrency ceiling (concurrency / latency), then the rerun: calls made
(all served from the store: 0) and wall time.

    python benchmarks/world_run.py [--set halueval:PATH?part=qa] [--concurrency 128]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from executor_throughput import LATENCY, ServerProcess  # noqa: E402

from judgeaudit.commands.world import run_world_cmd  # noqa: E402

ARMS = ["blind", "informed", "placebo"]


def main() -> None:
    data = Path(os.environ.get("JUDGEAUDIT_DATA_DIR", "data")) / "halueval"
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default=f"halueval:{data}?part=qa")
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--votes", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(Path(tmp), LATENCY) as srv:
        out = Path(tmp) / "out"
        kw = dict(out=out, votes=args.votes, concurrency=args.concurrency, api_base=srv.base_url, n_boot=200,
                  judge_specs=[{"spec": "api:openai/fake", "max_concurrency": 1024}], progress=False)
        t = time.perf_counter()
        r = run_world_cmd_specs(args.set, ARMS, **kw)
        cold = time.perf_counter() - t
        calls = len(srv.requests)
        ceiling = args.concurrency / LATENCY
        print(f"world run: {len(r.verdicts)} verdicts ({r.result['provenance']['items']} answers × {len(ARMS)} arms "
              f"× {args.votes} votes), {calls} calls in {cold:.1f} s = {calls / cold:.1f} calls/s; ceiling "
              f"{ceiling:.0f} calls/s at concurrency {args.concurrency} and {LATENCY * 1000:.0f} ms "
              f"({calls / cold / ceiling:.2f} of it)")
        t = time.perf_counter()
        run_world_cmd_specs(args.set, ARMS, **kw)
        warm = time.perf_counter() - t
        print(f"rerun: {len(srv.requests) - calls} new calls (all served from the store), {warm:.1f} s "
              f"({warm / cold:.2f} of the cold run)")


def run_world_cmd_specs(set_spec, arms, *, judge_specs, **kw):
    return run_world_cmd(set_spec, judge_specs, arms, **kw)


if __name__ == "__main__":
    main()

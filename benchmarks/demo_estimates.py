"""The demo's steps on this machine: the estimate printed before each step that calls the embedded judge
beside the measured time of its calls and of the whole step, the demo's wall time and the load average.

    python benchmarks/demo_estimates.py                       # the cut demo into a temporary folder
    python benchmarks/demo_estimates.py --full --out /tmp/d   # the full sizes
    python benchmarks/demo_estimates.py --record tests/runtime/data/demo/idle   # and record the calls for the tests
    python benchmarks/demo_estimates.py --busy 2 --record tests/runtime/data/demo/loaded   # beside 2 busy loops

With ``--record DIR`` the embedded judge's calls of the run are written to ``DIR/demo_call_durations.csv``
(``step,judge,kind,latency_s``, in the order they were stored) and each step's per-call estimate by judge
and request kind to ``DIR/demo_step_estimates.json``; ``tests/runtime/test_demo_estimates.py`` checks the
estimate method against them (no wall clock in the test). Load averages are read from /proc/loadavg: the
machine may be shared, and its load is part of every number here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def table(rows: list[dict]) -> str:
    out = ["| step | calls to make | estimate (s) | calls made | measured in calls (s) | estimate / measured "
           "| step wall (s) |", "|---|---:|---:|---:|---:|---:|---:|"]

    def f(x):
        return "—" if x is None else f"{x:.1f}" if isinstance(x, float) else str(x)

    for r in rows:
        out.append(f"| {r['step']} | {r['calls']} | {f(r['estimate_s'])} | {r['made']} | {f(r['judge_s'])} "
                   f"| {f(r['ratio'] and round(r['ratio'], 2))} | {f(r['wall_s'])} |")
    return "\n".join(out)


def record(out: Path, rows: list[dict], dest: Path) -> None:
    """The embedded judge's stored calls by step (the steps ran one after another, so the store's order
    splits them) and the steps' per-call estimates."""
    from judgeaudit.runtime.estimate import request_kind
    from judgeaudit.runtime.store import CallStore

    with CallStore(out / "calls.sqlite", readonly=True) as cs:
        df = cs.frame()
    judges = {j for r in rows for j in r["per_call"]}
    df = df[df["judge_id"].isin(judges) & df["latency_s"].notna() & df["error"].isna()].reset_index(drop=True)
    # a vote's stored regrade carries no regrade flag when stored before judges.composite kept it: its epoch
    # (validity regrades are epoch 1) says the same
    kinds = ["graded (regrade)" if v.form == "graded" and e >= 1 else request_kind(v)
             for v, e in zip(cs_verdicts(df), df["epoch"], strict=True)]
    bounds = [r["step"] for r in rows for _ in range(r["made"])]
    if len(bounds) != len(df):
        raise SystemExit(f"{len(df)} stored calls of {sorted(judges)} against {len(bounds)} made by the steps")
    dest.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"step": bounds, "judge": df["judge_id"], "kind": kinds,
                  "latency_s": df["latency_s"].round(4)}).to_csv(dest / "demo_call_durations.csv", index=False)
    (dest / "demo_step_estimates.json").write_text(json.dumps(
        {r["step"]: {"estimate_s": r["estimate_s"], "per_call": r["per_call"]} for r in rows}, indent=2) + "\n",
        encoding="utf-8")


def cs_verdicts(df: pd.DataFrame):
    from types import SimpleNamespace

    return [SimpleNamespace(form=f, meta=m or {}) for f, m in zip(df["form"], df["meta"], strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--bootstrap", type=int, default=None)
    ap.add_argument("--record", type=Path, default=None, help="folder for the recorded calls and estimates")
    ap.add_argument("--busy", type=int, default=0, help="busy-looping processes started beside the demo")
    args = ap.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        _run(args)
    finally:
        for b in busy:
            b.kill()
            b.wait()


def _run(args: argparse.Namespace) -> None:
    out = args.out or Path(tempfile.mkdtemp(prefix="demo-estimates-"))
    before = load()
    started = time.perf_counter()
    from judgeaudit.demo import run_demo   # the imports are part of the demo's wall time

    run_demo(out, n_boot=args.bootstrap, full=args.full)
    wall = time.perf_counter() - started
    rows = json.loads((out / "steps.json").read_text(encoding="utf-8"))["steps"]
    print(table(rows))
    print(f"\ndemo wall {wall:.0f} s (imports to card.html) → {out}; {args.busy} busy loop(s) beside it; "
          f"load average before {before}, after {load()}")
    if args.record is not None:
        record(out, rows, args.record)


if __name__ == "__main__":
    main()

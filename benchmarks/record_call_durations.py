"""Record the embedded local judge's call durations on this machine, in the order the calls were made, for
``tests/runtime/test_remaining.py`` (the progress lines' re-estimate checked against real durations).

Two demo-like steps share one call store: a validity slice (graded reads of the bundled probes) and a loop
slice (IFEval generations: the responder's revisions and the judge's reports, ``--max-tokens`` each). The
store's completed calls are written as ``step,kind,latency_s`` in store order.

    python benchmarks/record_call_durations.py --out tests/runtime/data/local_call_durations.csv
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import pandas as pd

from judgeaudit.runtime.estimate import request_kind
from judgeaudit.runtime.store import CallStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--bases", type=int, default=1, help="probe base items in the validity slice")
    ap.add_argument("--loop-items", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()

    from judgeaudit.commands.loop import run_loop_command
    from judgeaudit.commands.validity import run_validity
    from judgeaudit.commands.default_runs import DATA
    from judgeaudit.judges import make_judge
    from judgeaudit.probes.io import bundled_probes_path

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = [json.loads(x) for x in bundled_probes_path().read_text(encoding="utf-8").splitlines() if x]
        bases = list(dict.fromkeys(r["base_id"] for r in rows))[: args.bases]
        probes = tmp / "probes.jsonl"
        probes.write_text("".join(json.dumps(r) + "\n" for r in rows if r["base_id"] in bases), encoding="utf-8")
        store = tmp / "calls.sqlite"
        run_validity(str(probes), ["local"], out=tmp / "validity", store=store, n_boot=20, n_regrade=0)
        with CallStore(store) as cs:
            n_validity = len(cs)
        local = make_judge("local", max_tokens=args.max_tokens)
        run_loop_command(task="ifeval", data=DATA / "ifeval", initial="shipped", responder=local, judge=local,
                         regulators=["informed"], out=tmp / "loop", store=store, rounds=1, votes=1, bootstrap=0,
                         max_items=args.loop_items, progress=False)
        with CallStore(store, readonly=True) as cs:
            df = cs.frame(status="ok")
    df = df[df["latency_s"].notna()].reset_index(drop=True)
    kinds = [request_kind_of(m, f) for m, f in zip(df["meta"], df["form"], strict=True)]
    out = pd.DataFrame({"step": ["validity" if i < n_validity else "loop" for i in range(len(df))],
                        "kind": kinds, "latency_s": df["latency_s"].round(4)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(args.out, index=False)
    print(out.groupby(["step", "kind"])["latency_s"].agg(["count", "mean", "min", "max"]).to_string())


def request_kind_of(meta, form) -> str:
    """``request_kind`` of a stored verdict row (its form, a graded regrade apart)."""
    from types import SimpleNamespace

    return request_kind(SimpleNamespace(form=form, meta=meta or {}))


if __name__ == "__main__":
    main()

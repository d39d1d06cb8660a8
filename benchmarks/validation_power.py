"""Benchmark: the full validation-power audit of every bundled set, both modes, all members with
their label-permutation nulls — against a naive implementation that refits the vectoriser (and
re-extracts every feature) inside every fold and every permutation.

Run: ``python benchmarks/validation_power.py [--permutations N] [--data-dir DIR]``

Prints wall time and peak traced memory of each implementation, side by side in one run, their
ratio, and checks that both produce the same pooled κ for every (set, mode, member) and null.
With ``--data-dir`` (or JUDGEAUDIT_DATA_DIR) it also times the fast audit on the public LLMBar
Natural and JudgeBench sets (the naive one is too slow to be worth waiting for there; it is
timed on one of them with a reduced number of permutations).

``--routes`` instead times the full audit of every labelled set in the data folder (both modes,
transfer on, as ``judgeaudit vp audit --mode both`` runs it) under the reference route and the
fast route (one process, and ``--jobs`` worker processes), side by side in one run (``--runs``
picks the runs, e.g. ``fast:2@../before/src,fast:2``: another checkout's fast route vs this one), wall and CPU
seconds and their ratios: each run in
its own child process, so its peak resident memory (``ru_maxrss``) is its own; the fast runs'
results are checked equal to the reference run's (timing fields aside). ``--max-rows`` trims every
set (whole groups) for a quicker comparison.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np

from judgeaudit.analyses import validation_power as vp
from judgeaudit.datasets.demo import vp_demo_sets
from judgeaudit.datasets.registry import load_set


# ----------------------------------------------------------------------------- the naive harness
def _naive_features(member: str, prep: vp.Prepared, train: np.ndarray, test: np.ndarray):
    """Everything rebuilt from the texts for one fold: no caching of any kind."""
    paired = prep.texts_b is not None
    ta = prep.texts_a
    tb = prep.texts_b
    if member == "surface_ngram":
        vec = vp.make_ngram_vectorizer()
        vec.fit([ta[i] for i in train] + ([tb[i] for i in train] if paired else []))
        xa = vec.transform(ta)
        x = (xa - vec.transform(tb)).tocsr() if paired else xa
        return x[train], x[test]
    fn = vp.length_only_features if member == "length_only" else vp.numeric_surface_features
    a = np.vstack([fn(t) for t in ta])
    b = np.vstack([fn(t) for t in tb]) if paired else None
    resp = np.vstack([a[train], b[train]]) if paired else a[train]
    mu, sd = resp.mean(axis=0), resp.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    x = (a - b) / sd if paired else (a - mu) / sd
    return x[train], x[test]


def naive_member(prep: vp.Prepared, member: str, perms: np.ndarray, plan: vp.FoldPlan) -> tuple[float, np.ndarray]:
    def oof(y):
        pred = np.empty(len(y), dtype=object)
        for train, test in plan.splits():
            x_tr, x_te = _naive_features(member, prep, train, test)
            pred[test] = vp._fit_predict(x_tr, y[train], x_te)
        return pred.astype(str)

    obs = vp.pooled_kappa(prep.y, oof(prep.y))
    null = np.array([vp.pooled_kappa(p, oof(p)) for p in perms])
    return obs, null


def naive_audit(tables: dict, n_perm: int, seed: int) -> dict:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # same BLAS setting as the audit: isolate caching
        return _naive_audit(tables, n_perm, seed)


def _naive_audit(tables: dict, n_perm: int, seed: int) -> dict:
    out = {}
    for name, df in tables.items():
        for mode in ("item", "paired"):
            prep = vp.prepare_paired(df, seed=seed) if mode == "paired" else vp.prepare_item(df)
            plan = vp.make_folds(prep.groups, seed=seed)
            perms = vp.label_permutations(prep, n_perm, seed + 1)
            for m in vp.FAMILY:
                out[(name, mode, m)] = naive_member(prep, m, perms, plan)
    return out


def fast_audit(tables: dict, n_perm: int, seed: int) -> dict:
    res = vp.audit_validation_power(tables, modes=("item", "paired"), n_permutations=n_perm, seed=seed,
                                    n_boot=1000, transfer=False, members=list(vp.FAMILY))
    out = {}
    for r in res.sets:
        for m in r.members:
            out[(r.set_name, r.mode, m.name)] = (m.kappa, m.null_mean)
    return out


def measure(fn, *args):
    tracemalloc.start()
    t0 = time.perf_counter()
    value = fn(*args)
    wall = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, wall, peak / 2**20


# ----------------------------------------------------------------------------- reference vs fast route
def shared_specs(d: Path, max_rows: int | None = None) -> dict[str, str]:
    """display name → spec of every labelled set in the public data folder ``d``."""
    from judgeaudit.datasets import llmbar

    specs = {f"llmbar:{s}": f"llmbar:{d / 'llmbar'}?subset={s}" for s in llmbar.discover(d / "llmbar")}
    specs.update({
        "judgebench": f"judgebench:{d / 'judgebench'}", "rm_bench": f"rm_bench:{d / 'rm_bench'}",
        "mt_bench": f"mt_bench:{d / 'mt_bench'}", "halueval:qa": f"halueval:{d / 'halueval'}?part=qa",
        "halueval:general": f"halueval:{d / 'halueval'}?part=general", "frank": f"frank:{d / 'frank'}",
        "gsm8k:items": f"gsm8k:{d / 'gsm8k'}?part=items", "gsm8k:pairs": f"gsm8k:{d / 'gsm8k'}?part=pairs",
    })
    if max_rows:
        specs = {k: v + ("&" if "?" in v else "?") + f"max_rows={max_rows}" for k, v in specs.items()}
    return specs


def _child(route: str, jobs: int, permutations: int, seed: int, data_dir: str, max_rows: int, out: str) -> None:
    """One full audit in this (child) process; writes its result and wall time to ``out``."""
    import json
    import resource

    tables = {k: load_set(v) for k, v in shared_specs(Path(data_dir), max_rows or None).items()}
    t0 = time.perf_counter()
    res = vp.audit_validation_power(tables, modes=("item", "paired"), n_permutations=permutations, seed=seed,
                                    route=route, n_jobs=jobs)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out).write_text(json.dumps({"wall": wall, "peak_mib": peak, "result": res.to_dict()}, default=str))


def _strip_timing(o):
    if isinstance(o, dict):
        return {k: _strip_timing(v) for k, v in o.items() if "time" not in k.lower() and "elapsed" not in k.lower()}
    if isinstance(o, list):
        return [_strip_timing(v) for v in o]
    return o


ROUTE_LABELS = {"reference": "reference", "fast": "fast"}


def _differences(a, b, path=""):
    """``(path, a, b)`` of every leaf where two results differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in _differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in _differences(u, v, f"{path}[{i}]")]
    return [] if a == b or (a != a and b != b) else [(path, a, b)]


def _leaves(o) -> int:
    if isinstance(o, dict):
        return sum(_leaves(v) for v in o.values())
    if isinstance(o, list):
        return sum(_leaves(v) for v in o)
    return 1


def compare_routes(data_dir: str, permutations: int, seed: int, max_rows: int, jobs: int,
                   runs_spec: str | None = None) -> None:
    """Each run in its own child process, in order; the first run is the baseline of the ratios
    and of the result comparison. Wall and CPU seconds (the child and its worker processes:
    ``RUSAGE_CHILDREN`` around the run) side by side — on a shared machine the CPU time is the
    steadier number."""
    import json
    import resource
    import subprocess
    import sys
    import tempfile

    if runs_spec:
        runs = []
        for r in runs_spec.split(","):
            run, _, src = r.partition("@")
            runs.append((run.split(":")[0], int(run.split(":")[1]), src or None))
    else:
        runs = [("reference", 1, None), ("fast", 1, None)] + ([("fast", jobs, None)] if jobs > 1 else [])
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (route, n_jobs, src) in enumerate(runs):
            out = Path(tmp) / f"{i}-{route}-{n_jobs}.json"
            env = dict(os.environ)
            if src:   # another checkout's package (e.g. the previous commit's src folder)
                env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, __file__, "--child", route, str(n_jobs), "--permutations",
                            str(permutations), "--seed", str(seed), "--data-dir", data_dir,
                            "--max-rows", str(max_rows), "--out", str(out)], check=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            got[(route, n_jobs, src)] = r = json.loads(out.read_text())
            r["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(f"  done: {route}, {n_jobs} process(es): wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s", flush=True)
    base_key = runs[0]
    base = got[base_key]
    print(f"full audit, every shared set{f' (max_rows={max_rows})' if max_rows else ''}, both modes, transfer, "
          f"{permutations} permutations per member; ratios and results against the first row")
    print(f"{'route':<44}{'wall s':>9}{'CPU s':>9}{'wall ratio':>12}{'CPU ratio':>11}{'peak RSS MiB':>14}"
          f"{'same result':>13}")
    for (route, n_jobs, src), r in got.items():
        same = _strip_timing(r["result"]) == _strip_timing(base["result"])
        peak = f"{r['peak_mib']:.0f}" + (" /proc" if n_jobs > 1 else "")
        label = f"{ROUTE_LABELS[route]}{f' [{src}]' if src else ''}, {n_jobs} process(es)"
        print(f"{label:<44}{r['wall']:>9.1f}{r['cpu']:>9.1f}"
              f"{base['wall'] / r['wall']:>12.2f}{base['cpu'] / r['cpu']:>11.2f}{peak:>14}{str(same):>13}")
    for (route, n_jobs, src), r in got.items():
        diffs = _differences(_strip_timing(base["result"]), _strip_timing(r["result"]))
        if not diffs:
            continue
        label = f"{ROUTE_LABELS[route]}{f' [{src}]' if src else ''}, {n_jobs} process(es)"
        print(f"{label}: {len(diffs)} of {_leaves(_strip_timing(base['result']))} values differ from the first row's")
        for path, u, v in diffs:
            print(f"  {path}: {u} -> {v}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--permutations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("JUDGEAUDIT_DATA_DIR"))
    ap.add_argument("--routes", action="store_true", help="reference vs fast route on every shared set")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes of the parallel fast run (--routes)")
    ap.add_argument("--max-rows", type=int, default=0, help="trim every shared set to this many rows (--routes)")
    ap.add_argument("--runs", help="(--routes) ROUTE:JOBS[@SRC],... in order, ROUTE one of reference, fast; @SRC runs that child on another "
                    "checkout's src folder (e.g. the previous commit's); the first run is the baseline")
    ap.add_argument("--child", nargs=2, metavar=("ROUTE", "JOBS"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), args.permutations, args.seed, args.data_dir, args.max_rows,
               args.out)
        return
    if args.routes:
        if not args.data_dir:
            raise SystemExit("--routes needs --data-dir or JUDGEAUDIT_DATA_DIR")
        compare_routes(args.data_dir, args.permutations, args.seed, args.max_rows, args.jobs, args.runs)
        return

    tables = {}
    for spec in vp_demo_sets():
        df = load_set(spec)
        tables[df.attrs["judgeaudit"]["name"]] = df
    sizes = ", ".join(f"{k}: {len(v)} pairs" for k, v in tables.items())
    print(f"bundled sets: {sizes}; both modes; members {list(vp.FAMILY)}; {args.permutations} permutations")

    fast, t_fast, m_fast = measure(fast_audit, tables, args.permutations, args.seed)
    naive, t_naive, m_naive = measure(naive_audit, tables, args.permutations, args.seed)
    worst = 0.0
    for key, (k_naive, null_naive) in naive.items():
        k_fast, null_mean_fast = fast[key]
        worst = max(worst, abs(k_naive - k_fast), abs(float(np.mean(null_naive)) - null_mean_fast))
    print(f"{'implementation':<44}{'wall s':>10}{'peak MiB':>10}")
    print(f"{'judgeaudit (cached per fold, row-space fits)':<44}{t_fast:>10.2f}{m_fast:>10.1f}")
    print(f"{'naive (vectoriser refit per fold x perm)':<44}{t_naive:>10.2f}{m_naive:>10.1f}")
    print(f"speed-up naive/judgeaudit: {t_naive / t_fast:.2f}x   "
          f"largest |Δκ| between the two (observed or null mean): {worst:.4f}")

    if args.data_dir and Path(args.data_dir).is_dir():
        d = Path(args.data_dir)
        big = {"llmbar:Natural": load_set(f"llmbar:{d / 'llmbar'}?subset=Natural"),
               "judgebench": load_set(f"judgebench:{d / 'judgebench'}")}
        _, t_big, m_big = measure(fast_audit, big, args.permutations, args.seed)
        print(f"public LLMBar Natural + JudgeBench (full), both modes, {args.permutations} permutations: "
              f"{t_big:.1f} s, peak {m_big:.1f} MiB")
        one = {"llmbar:Natural": big["llmbar:Natural"]}
        n_small = max(2, args.permutations // 4)
        _, tf, _ = measure(fast_audit, one, n_small, args.seed)
        _, tn, _ = measure(naive_audit, one, n_small, args.seed)
        print(f"public LLMBar Natural, {n_small} permutations: judgeaudit {tf:.1f} s, naive {tn:.1f} s, "
              f"ratio {tn / tf:.2f}x")


if __name__ == "__main__":
    main()

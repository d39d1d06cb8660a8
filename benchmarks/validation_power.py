"""Benchmark: the full validation-power audit of every bundled set, both modes, all members with
their label-permutation nulls — against a naive implementation that refits the vectoriser (and
re-extracts every feature) inside every fold and every permutation.

Run: ``python benchmarks/validation_power.py [--permutations N] [--data-dir DIR]``

Prints wall time and peak traced memory of each implementation, side by side in one run, their
ratio, and checks that both produce the same pooled κ for every (set, mode, member) and null.
With ``--data-dir`` (or JUDGEAUDIT_DATA_DIR) it also times the fast audit on the public LLMBar
Natural and JudgeBench sets (the naive one is too slow to be worth waiting for there; it is
timed on one of them with a reduced number of permutations).
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--permutations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("JUDGEAUDIT_DATA_DIR"))
    args = ap.parse_args()

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

"""Growth table: the cost of each analysis at ×1, ×10 and ×100 its data, measured side by side in one run.

* validity: 3 judges, 1,000 base-item resamples, 1,000 axis-label permutations, 48 / 480 / 4,800 base
  items of 12 probes (576 / 5,760 / 57,600 probes), simulated as in the validity tests;
* cap: every shipped judge's published verdicts on the JudgeBench and LLMBar pairs (the copies under
  ``$JUDGEAUDIT_DATA_DIR``, else the bundled LLMBar slice and JudgeBench-format fixture), the pairs copied
  ×1 / ×10 / ×100 under new ids (1,000 resamples, 999 Spearman permutations); its size column counts the judge ×
  set cells measured (a judge's verdicts on a set), so the CPU seconds over it give the cost per cell;
* world: the label form of a world run, 3 arms × 3 votes × 1 judge, 200 / 2,000 / 20,000 answers
  (2,000 resamples, 999 permutations);
* vp: the validation-power audit of the bundled demo set in item mode, its groups copied ×1 / ×10 / ×100
  (30 label permutations). A copy repeats every response under a new group, and the n-gram member
  factors and multiplies a repeated row once (``rowspace.row_space``), so this row measures more
  groups of the same responses, not as many distinct responses;
* vp-distinct: the same copies, copy c's responses spelled with its own substitution of the letters (copy 0 is
  the set itself), so the copies share no words but those without letters: every copy's responses are new
  rows with new n-grams, as in a set of as many distinct responses (3,707 of 4,000 at ×10, 36,812 of 40,000 at
  ×100; the n-gram member's design reaches its 20,000-column cap between ×10 and ×30, where its folds are
  fit on the sparse design, ``fitcost.cheapest_form``). This row measures growth in distinct responses.

Each cell is timed once after a warm-up at ×1 (imports, first-call costs): wall seconds, and the CPU
seconds of the process (all its threads; on a busy machine the steadier of the two). The ratio columns
are each time over the time at the previous size (×10 data: linear growth is about ×10). Run:

    python benchmarks/growth.py [--only validity,cap,world,vp,vp-distinct] [--scales 1,10,100]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analyses"))


# ----------------------------------------------------------------------------- validity


def validity_case(scale: int) -> tuple[str, Callable[[], object]]:
    from simulate_validity import make_probes, planted, simulate_grades

    from judgeaudit.analyses.validity import validity_profile

    probes = make_probes(48 * scale, seed=1)
    verdicts = pd.concat([simulate_grades(probes, planted(0.04 + 0.01 * j, 0.25 + 0.05 * j, 0.15 + 0.04 * j),
                                          seed=100 + j, judge_id=f"judge{j}") for j in range(3)], ignore_index=True)
    return f"{len(probes):,} probes", lambda: validity_profile(probes, verdicts, n_boot=1000, n_perm=1000)


# ----------------------------------------------------------------------------- cap


def _copies(frame: pd.DataFrame, k: int, cols: tuple[str, ...], respelled: tuple[str, ...] = ()) -> pd.DataFrame:
    """``k`` copies of ``frame``, copy c's ``cols`` suffixed ``~c`` and, from copy 1 on, its ``respelled``
    texts' letters put through a permutation of the alphabet drawn for that copy (``_respell``)."""
    if k == 1:
        return frame
    parts = []
    for c in range(k):
        part = frame.copy()
        for col in cols:
            if col in part:
                part[col] = part[col].astype(str) + f"~{c}"
        if c:
            table = _respell(c)
            for col in respelled:
                if col in part:
                    part[col] = part[col].astype(str).str.translate(table)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _respell(seed: int) -> dict[int, str]:
    """A translation table of a random permutation of the 26 letters (the same for upper case)."""
    import string

    low = string.ascii_lowercase
    perm = "".join(np.random.default_rng(seed).permutation(list(low)))
    return str.maketrans(low + low.upper(), perm + perm.upper())


def cap_sets() -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict]:
    """The pairs, published judge tables and coverage of JudgeBench and LLMBar: the copies under
    ``$JUDGEAUDIT_DATA_DIR`` where there are, else the bundled LLMBar slice and judgeaudit's own
    JudgeBench-format fixture (whose judges are simulated)."""
    import os

    import judgeaudit
    from judgeaudit.datasets import judgebench, llmbar

    bundled = Path(judgeaudit.__file__).parent / "data"
    given = Path(os.environ.get("JUDGEAUDIT_DATA_DIR") or bundled)
    jb_root = given / "judgebench" if (given / "judgebench").is_dir() else bundled / "judgebench_fixture"
    lb_root = given / "llmbar" if (given / "llmbar").is_dir() else bundled / "llmbar"
    jb, lb = judgebench.load_pairs(jb_root), llmbar.load_pairs(lb_root)
    pairs = pd.concat([jb, lb], ignore_index=True)
    tables = {**judgebench.published_judges(jb_root), **llmbar.published_judges(lb_root)}
    cov = {**{s: judgebench.COVERAGE for s in jb["source_set"].unique()},
           **{s: llmbar.COVERAGE[s] for s in lb["source_set"].unique()}}
    return pairs, tables, cov


def cap_case(scale: int) -> tuple[str, Callable[[], object]]:
    from judgeaudit.analyses.cap import cap_profile

    pairs, tables, cov = cap_sets()
    pairs = _copies(pairs, scale, ("pair_id", "base_id"))
    tables = {j: _copies(t, scale, ("pair_id",)) for j, t in tables.items()}
    set_of = pairs.drop_duplicates("pair_id").set_index("pair_id")["source_set"]
    cells = sum(t["pair_id"].map(set_of).nunique() for t in tables.values())   # the judge × set cells measured
    return (f"{len(pairs):,} pairs, {cells} judge × set cells",
            lambda: cap_profile(pairs, tables, cov, n_boot=1000, seed=0, n_perm=999))


# ----------------------------------------------------------------------------- world


def world_case(scale: int) -> tuple[str, Callable[[], object]]:
    from judgeaudit.analyses.world.analysis import SEP, analyse
    from judgeaudit.records import WorldItem

    arms = ["blind", "informed", "placebo"]
    rng = np.random.default_rng(0)
    n_q = 100 * scale
    items = []
    for q in range(n_q):
        for right in (True, False):
            ans = f"Answer {q} is {'right' if right else 'wrong'}" + " word" * int(rng.integers(3, 30))
            items.append(WorldItem(item_id=f"q{q}-{'right' if right else 'wrong'}", task="qa", output=ans,
                                   world=f"Knowledge {q}.", question=f"Question {q}?", reference="Answer.",
                                   defective=not right, group=f"q{q}"))
    p_flag = {"blind": (0.2, 0.5), "informed": (0.1, 0.8), "placebo": (0.2, 0.5)}
    rows = []
    for it in items:
        for arm in arms:
            p = p_flag[arm][1] if it.defective else p_flag[arm][0]
            for vote in range(3):
                rows.append({"judge_id": "judge", "request_id": f"{it.item_id}{SEP}{arm}", "epoch": vote,
                             "label": bool(rng.random() < p), "parse_ok": True, "error": None, "score": None,
                             "unit_labels": None, "defect_ids": None, "defects": None})
    verdicts = pd.DataFrame(rows)
    return (f"{len(items):,} answers, {len(verdicts):,} verdicts",
            lambda: analyse(items, verdicts, form="label", arms=arms, n_boot=2000, n_perm=999))


# ----------------------------------------------------------------------------- validation power


def vp_case(scale: int, distinct: bool = False) -> tuple[str, Callable[[], object]]:
    from judgeaudit.analyses import validation_power as vp
    from judgeaudit.datasets.demo import vp_demo_sets
    from judgeaudit.datasets.registry import load_set

    name = "halueval"
    df = load_set(next(s for s in vp_demo_sets() if s.startswith(name)))
    df = _copies(df, scale, tuple(c for c in ("group", "item_id", "id", "pair_id") if c in df),
                 ("response_a", "response_b") if distinct else ())
    responses = len(set(df["response_a"]) | set(df["response_b"]))
    return (f"{len(df):,} rows of {name}, {responses:,} distinct responses",
            lambda: vp.audit_validation_power({name: df}, modes=("item",), n_permutations=30, seed=0))


def vp_distinct_case(scale: int) -> tuple[str, Callable[[], object]]:
    return vp_case(scale, distinct=True)


CASES = {"validity": validity_case, "cap": cap_case, "world": world_case, "vp": vp_case,
         "vp-distinct": vp_distinct_case}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--scales", default="1,10,100")
    args = ap.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    print(f"{'analysis':11} {'data':>6}  {'size':50} {'wall s':>9} {'ratio':>7} {'CPU s':>9} {'ratio':>7}")
    for name in args.only.split(","):
        make = CASES[name]
        make(1)[1]()                                   # warm-up: imports, first-call costs
        prev = None
        for k in scales:
            label, run = make(k)
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            now = (time.perf_counter() - t0, time.process_time() - c0)
            ratios = [f"×{a / b:.1f}" if prev else "" for a, b in zip(now, prev or now, strict=True)]
            print(f"{name:11} ×{k:<5} {label:50} {now[0]:9.2f} {ratios[0]:>7} {now[1]:9.2f} {ratios[1]:>7}", flush=True)
            prev = now


if __name__ == "__main__":
    main()

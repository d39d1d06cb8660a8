"""The migrate verdict for every pair of published judges replayed from the public data sets: JudgeBench's five
reward models and o1-mini on the same GPT-4o response pairs, and the evaluators in LLMBar's outputs (on the pairs
both judged). Each judge's two presentation orders are two anchors of one cluster (its pair); the old judge's
other order is its re-grade. Prints a Markdown table (the README's "Judge migration" table).

    python benchmarks/migrate_real_judges.py [DATA_DIR] [--bootstrap N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from judgeaudit.analyses.migrate import migrate
from judgeaudit.analyses.migrate.anchors import two_order_anchors


def _short(name: str) -> str:
    for prefix in ("arena_hard/", "reward_model/"):
        name = name.removeprefix(prefix)
    return name.replace("-2024-09-12", "")


def table(judges: dict, labels, pairs: list[tuple[str, str]], n_boot: int) -> list[str]:
    rows = ["| old → new | pairs | verdict | win-rate diff | agreement − ceiling | accuracy diff |",
            "|---|---:|---|---|---|---|"]
    for a, b in pairs:
        t = two_order_anchors(judges[a], judges[b], labels)
        r = migrate(t, form="pairwise", old_judge=a, new_judge=b, n_boot=n_boot)

        def cell(name: str) -> str:
            q = r.quantity(name)
            if q is None or q.estimate is None or None in q.ci:
                return "—"
            return f"{q.estimate:+.3f} [{q.ci[0]:+.3f}, {q.ci[1]:+.3f}]"

        rows.append(f"| {_short(a)} → {_short(b)} | {r.n_clusters} | {r.verdict} | {cell('mean_diff')} | "
                    f"{cell('agreement')} | {cell('human_agreement')} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=os.environ.get("JUDGEAUDIT_DATA_DIR", "../shared/data"))
    ap.add_argument("--bootstrap", type=int, default=1000)
    a = ap.parse_args()
    root = Path(a.data)
    t0 = time.perf_counter()
    from judgeaudit.datasets import judgebench, llmbar

    jb = {k: v for k, v in judgebench.published_judges(root / "judgebench").items() if "claude-3-haiku" not in k}
    labels = judgebench.load_pairs(root / "judgebench").set_index("pair_id")["label"]
    old = "arena_hard/o1-mini-2024-09-12"
    pairs = [(old, old)] + [(old, k) for k in jb if k != old] + [
        (k, k2) for k in jb for k2 in jb if k != k2 and k.startswith("reward_model") and k2.startswith("reward_model")
        and ("internlm" in k and "internlm" in k2 or "Skywork" in k and "Skywork" in k2)]
    print("## JudgeBench (GPT-4o response pairs)\n")
    print("\n".join(table(jb, labels, pairs, a.bootstrap)))
    lb = llmbar.published_judges(root / "llmbar")
    lpairs = llmbar.load_pairs(root / "llmbar").set_index("pair_id")["label"]
    names = sorted(lb)
    if names:
        base = next((n for n in names if n.endswith("Vanilla_NoRules")), names[0])
        print("\n## LLMBar (the evaluators' outputs, pairs both judged)\n")
        print("\n".join(table(lb, lpairs, [(base, base)] + [(base, n) for n in names if n != base], a.bootstrap)))
    print(f"\n({time.perf_counter() - t0:.0f} s, {a.bootstrap} resamples)", file=sys.stderr)


if __name__ == "__main__":
    main()

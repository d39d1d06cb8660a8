"""Choose the structural judge's thresholds on the recorded development split (graph.DEV_SPLIT).

    PYTHONPATH=src python benchmarks/structural_calibrate.py [HALUEVAL_DIR] [NLI_SPEC]

HaluEval QA (one-turn), a seeded 20% of questions (both answers of a question together), lexical
backend by default. Prints the balanced-accuracy grid over tau_s × tau_c, the chosen point and the
sensitivity around it. The report set (the other 80%) is never read here.
"""

from __future__ import annotations

import os
import sys

import json

from judgeaudit.structural.calibrate import (TAU_C_GRID, TAU_S_GRID, build_graphs, dev_result, dev_split,
                                             halueval_qa_items, sensitivity)
from judgeaudit.structural.graph import DEV_SPLIT
from judgeaudit.structural.nli import make_nli


def main() -> None:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("JUDGEAUDIT_DATA_DIR", "data"), "halueval")
    spec = sys.argv[2] if len(sys.argv) > 2 else DEV_SPLIT["backend"]
    items = halueval_qa_items(root)
    dev = dev_split(items["group"])
    d = items[items["group"].isin(dev)].reset_index(drop=True)
    print(f"dev split: {len(dev)} of {items['group'].nunique()} questions, {len(d)} answers; backend {spec}")
    graphs = build_graphs(d, make_nli(spec))
    table = sensitivity(graphs, d["defective"], TAU_S_GRID, TAU_C_GRID)
    print(table.pivot(index="tau_s", columns="tau_c", values="balanced_accuracy").round(3).to_string())
    rec = dev_result(table, len(dev), len(d))
    print(f"chosen: tau_s={rec['chosen']['tau_s']} tau_c={rec['chosen']['tau_c']} balanced accuracy "
          f"{rec['balanced_accuracy']:.3f}, flag rate {rec['flag_rate']:.3f}")
    print("graph.DEV_RESULT =", json.dumps(rec))


if __name__ == "__main__":
    main()

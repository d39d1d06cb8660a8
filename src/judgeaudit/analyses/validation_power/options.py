"""The options of a validation-power audit, declared once: ``judgeaudit vp audit``'s flags, the default run a card
names and their rules are read from ``OPTIONS``."""

from __future__ import annotations

import os
from pathlib import Path

from judgeaudit import options as shared
from judgeaudit.options import CONSTRUCT_VALIDITY, MAX_RESAMPLES, Option, Options, Rule

DEFAULT_PERMUTATIONS = 20
"""Label permutations per member for the null (recorded in result.json)."""

DEFAULT_JOBS = min(2, os.cpu_count() or 1)
"""Worker processes of ``vp audit`` (sets are audited in parallel; results do not depend on it)."""

SETS = Option("sets", list[str], flag="--set", help="data-set spec, e.g. llmbar:PATH?subset=Natural, "
              "jsonl:PATH?text=…&label=…&group=… (repeatable)")
OUT = Option("out", Path, help="output folder (result.json, report.html)", writes="folder")
MODE = Option("mode", str, "both", help="item | paired | both")
PERMUTATIONS = Option("permutations", int, DEFAULT_PERMUTATIONS, help="label permutations per member (null)",
                      rule=Rule(integer=True, lo=0, cap=MAX_RESAMPLES * 10), cite=f"{CONSTRUCT_VALIDITY} App. E")
SEED = Option("seed", int, 0, help="side order, KFold shuffle, permutations, bootstrap")
CEILINGS = Option("ceilings", list[str] | None, None, flag="--ceiling", param="ceiling",
                  help="user-supplied human ceiling NAME[:MODE]=VALUE,LO,HI (repeatable)")
NO_TRANSFER = Option("no_transfer", bool, False, help="skip cross-set transfer")
JOBS = Option("jobs", int, DEFAULT_JOBS, help="worker processes auditing sets (a job per input mode) and fitting "
              "transfer sources in parallel (the result does not depend on it)", rule=Rule(integer=True, lo=1))

OPTIONS = Options((SETS, OUT, MODE, PERMUTATIONS, SEED, CEILINGS, NO_TRANSFER, shared.LEDGER, shared.STRICT_REGISTER,
                   JOBS))
"""Every option of a validation-power audit, in ``--help``'s order."""

ANALYSIS = ("mode", "permutations", "seed", "no_transfer")
"""The options that set the analysis itself (the rest name its inputs, where it writes and how it runs)."""

DEFAULTS = {name: OPTIONS[name].default for name in ANALYSIS}
"""The analysis's defaults: a default run (``judgeaudit card --run-missing``, the demo) runs with these."""

WRITES = ("result.json", "report.html", "predictions.parquet")
"""The files a run writes into its output folder (never over one it did not make)."""

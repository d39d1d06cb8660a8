"""The options of a CAP run, declared once: ``judgeaudit cap run``'s flags, an ``analysis: cap`` experiment file's
keys, the default run a card names, and their rules are all read from ``OPTIONS``."""

from __future__ import annotations

from pathlib import Path

from judgeaudit import options as shared
from judgeaudit.options import Option, Options

SETS = Option("sets", list[str], flag="--set", param="set_",
              help="judgebench:PATH, llmbar:PATH, rm_bench:PATH or cap_testbed:FILE.jsonl (repeat)")
JUDGES = Option("judges", list[str] | None, None, flag="--judge", param="judge", help="live judge spec (repeat)")
PUBLISHED = Option("published", bool, False, help="use the judge outputs shipped with the sets")
EVALUATOR = Option("evaluator", str | None, None, help="C8 rationale evaluator judge spec")
ALLOW_SAME_FAMILY = Option("allow_same_family", bool, False,
                           help="allow a C8 evaluator of a judge's own family (recorded)")
HUMAN = Option("human", Path | None, None, help="human-labelled C8 sample (pair_id, judge_id, human)")
C8_SAMPLE = Option("c8_sample", int | None, None, help="evaluate a random sample of this many correct-verdict "
                   "rationales per judge (the paper: 100)")
STRESS = Option("stress", list[str] | None, None, help="BASE=STRESS set names (Eq. 3)")
BOOTSTRAP = Option("bootstrap", int, 1000, help="bootstrap resamples per cell", rule=shared.BOOTSTRAP.rule)
FAILURES = Option("failures", str, "exclude", help="exclude (App. L) or wrong")
STORE = Option("store", Path | None, None, help="call store (SQLite)", writes="store")
AUGMENT = Option("augment", list[str] | None, None,
                 help="style and/or length (needs --generator; only where the adapter admits augmentation)")
GENERATOR = Option("generator", str | None, None, help="generator judge spec for --augment")
OUT = Option("out", Path, Path("cap-out"), help="output folder", writes="folder")

OPTIONS = Options((
    SETS, JUDGES, PUBLISHED, EVALUATOR, ALLOW_SAME_FAMILY, HUMAN, C8_SAMPLE, STRESS, BOOTSTRAP, shared.SEED, FAILURES,
    STORE, shared.CONCURRENCY, shared.API_BASE, AUGMENT, GENERATOR, OUT, shared.ALLOW_FAILURES, shared.TIMEOUT,
    shared.RETRIES, shared.RPM, shared.BATCH, shared.BATCH_OUT, shared.MLFLOW, shared.MLFLOW_EXPERIMENT,
    shared.TEMPLATE, shared.LEDGER, shared.STRICT_REGISTER,
))
"""Every option of a CAP run, in ``--help``'s order."""

ANALYSIS = ("bootstrap", "seed", "failures")
"""The options that set the analysis itself (the rest say what it reads, where it writes and how it calls its
judges)."""

DEFAULTS = {name: OPTIONS[name].default for name in ANALYSIS}
"""The analysis's defaults: a default run (``judgeaudit card --run-missing``, the demo) runs with these."""

WRITES = ("result.json", "report.html", "units.parquet", "pair_verdicts.parquet")
"""The files a run writes into its output folder (never over one it did not make)."""

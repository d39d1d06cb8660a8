"""The options of a validity run, declared once: ``judgeaudit validity run``'s flags, an ``analysis: validity``
experiment file's keys, the default run a card names, and their rules are all read from ``OPTIONS``."""

from __future__ import annotations

from judgeaudit import options as shared
from judgeaudit.options import CONSTRUCT_VALIDITY, Option, Options

PROBES = Option("probes", str, "bundled", help="probe JSONL, or 'bundled'")
S_FLOOR = shared.S_FLOOR
BAR = shared.BAR
REGRADE = Option("regrade", int, 48, help="requests re-graded for regrade agreement", rule=shared.REGRADE.rule,
                 cite=f"{CONSTRUCT_VALIDITY} App. D")

OPTIONS = Options((
    shared.JUDGES, shared.OUT, PROBES, S_FLOOR, BAR, shared.BOOTSTRAP, REGRADE, shared.STORE, shared.CONCURRENCY,
    shared.API_BASE, shared.SEED, shared.ALLOW_FAILURES, shared.TIMEOUT, shared.RETRIES, shared.RPM, shared.BATCH,
    shared.BATCH_OUT, shared.MLFLOW, shared.MLFLOW_EXPERIMENT, shared.TEMPLATE, shared.LEDGER, shared.STRICT_REGISTER,
))
"""Every option of a validity run, in ``--help``'s order."""

ANALYSIS = ("probes", "s_floor", "bar", "bootstrap", "regrade", "seed")
"""The options that set the analysis itself (the rest say where it writes and how it calls its judges)."""

DEFAULTS = {name: OPTIONS[name].default for name in ANALYSIS}
"""The analysis's defaults: a default run (``judgeaudit card --run-missing``, the demo) runs with these."""

WRITES = ("result.json", "verdicts.parquet", "report.html")
"""The files a run writes into its output folder (never over one it did not make)."""

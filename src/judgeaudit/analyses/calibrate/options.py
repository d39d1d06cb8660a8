"""The options of ``judgeaudit calibrate``, declared once: the command's flags and the analysis's defaults are read
from ``OPTIONS`` (an estimate from verdicts and labels, or ``--plan``: the labels an interval of a width needs)."""

from __future__ import annotations

from pathlib import Path

from judgeaudit import options as shared
from judgeaudit.options import Option, Options

VERDICTS = Option("verdicts", str | None, None, help="the judge's verdicts: replay:<file>[?…] (any replay format), "
                  "a run folder, or a verdicts.parquet/.jsonl")
LABELS = Option("labels", Path | None, None, help="human labels on a subset: CSV/JSONL/Parquet with id, label")
OUT = Option("out", Path | None, None, help="output folder", writes="folder")
TARGET = Option("target", str, "pass_rate", help="mean | pass_rate | accuracy | win_rate")
JUDGE = Option("judge", str | None, None, help="the judge id, when the verdicts hold several")
THRESHOLD = Option("threshold", float | None, None, help="pass_rate/accuracy on scored verdicts: a score at or "
                   "above this passes")
LEVEL = Option("level", float, 0.95, help="interval level")
BOOTSTRAP = Option("bootstrap", int, 2000, help="bootstrap resamples (Rogan–Gladen, κ)", rule=shared.BOOTSTRAP.rule)
ENGINE = Option("engine", str, "builtin", help="PPI++ estimator: builtin (numpy/scipy) or ppi-python (the calibrate "
                "extra)")
SCALE = Option("scale", str | None, None, help="--target mean: the scale's LOW,HIGH (e.g. 1,5); default: the "
               "observed range of verdicts and labels")
STRATA = Option("strata", Path | None, None, help="labels drawn at random within strata: a file with id, stratum for "
                "every judged item (stratified PPI++)")
PLAN = Option("plan", bool, False, help="print the labels needed for a 95% interval of --width (PPI++ and "
              "human-only, checked by simulation), from a pilot (--verdicts, --labels) or stated "
              "--prevalence/--tpr/--tnr/--unlabelled")
WIDTH = Option("width", float | None, None, help="--plan: the target width of the 95% interval")
PREVALENCE = Option("prevalence", float | None, None, help="--plan: the stated prevalence")
TPR = Option("tpr", float | None, None, help="--plan: the judge's stated TPR")
TNR = Option("tnr", float | None, None, help="--plan: the judge's stated TNR")
UNLABELLED = Option("unlabelled", int | None, None, help="--plan: the unlabelled items to be judged (default: the "
                    "pilot's)")
SETS = Option("sets", int, 400, help="--plan: simulated data sets of the check")

OPTIONS = Options((VERDICTS, LABELS, OUT, TARGET, JUDGE, THRESHOLD, LEVEL, BOOTSTRAP, shared.SEED, ENGINE, SCALE,
                   STRATA, PLAN, WIDTH, PREVALENCE, TPR, TNR, UNLABELLED, SETS))
"""Every option of ``judgeaudit calibrate``, in ``--help``'s order."""

ANALYSIS = ("target", "threshold", "level", "bootstrap", "seed", "engine")
"""The options that set the estimate itself (the rest name its inputs, where it writes, and the plan)."""

DEFAULTS = {name: OPTIONS[name].default for name in ANALYSIS}
"""The estimate's defaults."""

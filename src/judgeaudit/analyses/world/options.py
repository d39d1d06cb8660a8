"""The options of a world run, declared once: ``judgeaudit world run``'s flags (and ``world factorial``'s, a
subset), an ``analysis: world`` experiment file's keys, the default run a card names, and their rules are all
read from ``OPTIONS``."""

from __future__ import annotations

from judgeaudit import options as shared
from judgeaudit.options import Option, Options, Rule
from judgeaudit.validate import OPTION_RULES

SET = Option("set", str, param="set_spec", help="world set spec, e.g. halueval:PATH?part=qa, frank:PATH")
ARMS = Option("arms", list[str], ("blind", "informed"), flag="--arm", param="arm",
              help="arm (repeatable); the first is the baseline")
VOTES = Option("votes", int, 3, help="samples per request (pooled)", rule=OPTION_RULES["votes"])
FORM = Option("form", str, "label", help="label | sentences | typed | score | defects")
MAX_ITEMS = Option("max_items", int | None, None, help="judge the first N items only (whole groups)",
                   rule=OPTION_RULES["max_items"])
TEMPERATURE = Option("temperature", float, 0.3, help="sampling temperature of the votes",
                     rule=OPTION_RULES["temperature"])
STRICT_THRESHOLD = Option("strict_threshold", float, 0.5, rule=Rule(lo=0, hi=1, lo_open=True),
                          help="strict span match: the overlap coefficient of content tokens a complaint's quote "
                          "and a marked segment must reach")
TOP_K = Option("top_k", int, 5, help="routed arm: world sentences per claim", rule=Rule(integer=True, lo=1, cap=1000))
MATCHER_JUDGE = Option("matcher_judge", str | None, None,
                       help="judge spec of the generous span matcher (form defects)")
SECOND_MATCHER_JUDGE = Option("second_matcher_judge", str | None, None,
                              help="a second matcher re-matching the same pairs (agreement, κ)")
CORRELATE = Option("correlate", list[str], ("world_chars",),
                   help="covariate for Spearman ρ of per-answer gains and false alarms (repeatable): world_chars, "
                   "output_chars, units or a numeric item meta key")
PERMUTATIONS = Option("permutations", int, 9999, help="Spearman permutations", rule=OPTION_RULES["permutations"])
ALTERNATIVE = Option("alternative", str, "greater",
                     help="Spearman p: greater (the predicted direction, P17) | two-sided | less")
SPLIT = Option("split", str, "all", help="all | report (leave out the structural judge's development items) | dev")

OPTIONS = Options((
    SET, shared.JUDGES, shared.OUT, ARMS, VOTES, FORM, MAX_ITEMS, shared.STORE, shared.CONCURRENCY, shared.API_BASE,
    shared.BOOTSTRAP, shared.SEED, TEMPERATURE, STRICT_THRESHOLD, TOP_K, MATCHER_JUDGE, SECOND_MATCHER_JUDGE,
    CORRELATE, PERMUTATIONS, ALTERNATIVE, SPLIT, shared.ALLOW_FAILURES, shared.TIMEOUT, shared.RETRIES, shared.RPM,
    shared.BATCH, shared.BATCH_OUT, shared.MLFLOW, shared.MLFLOW_EXPERIMENT, shared.TEMPLATE,
))
"""Every option of a world run, in ``--help``'s order."""

FACTORS = Option("factors", str, "question,source,typed", help="question,source,typed[,instrument]")

FACTORIAL = Options((
    *(OPTIONS[n] for n in ("set", "judges", "out")), FACTORS,
    *(OPTIONS[n] for n in ("votes", "form", "max_items", "store", "concurrency", "api_base", "bootstrap", "seed",
                           "temperature", "split", "allow_failures", "timeout", "retries", "rpm", "batch",
                           "batch_out", "mlflow", "mlflow_experiment")),
))
"""The options of ``judgeaudit world factorial``: the run's that a factorial takes, and its factors."""

ANALYSIS = ("set", "arms", "votes", "form", "max_items", "bootstrap", "seed", "temperature", "strict_threshold",
            "top_k", "correlate", "permutations", "alternative", "split")
"""The options that set the analysis itself (the rest say where it writes and how it calls its judges)."""

DEFAULTS = {name: OPTIONS[name].default for name in ANALYSIS if not OPTIONS[name].required}
"""The analysis's defaults (every analysis option but the set, which a run must name)."""


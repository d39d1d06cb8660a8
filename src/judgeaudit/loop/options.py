"""The options of a loop run, declared once: ``judgeaudit loop run``'s flags, an ``analysis: loop`` experiment
file's keys, the default run a card names and their rules are all read from ``OPTIONS``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from judgeaudit import options as shared
from judgeaudit.options import BLIND_SPOT, Option, Options, Rule
from judgeaudit.validate import MAX_ROUNDS, MAX_VOTES


VOTE_TEMPERATURE = 0.3
"""The feedback judge's sampling temperature (blind-spot §3.4: three votes at temperature 0.3)."""

NLI_HELP = ("HaluEval QA: where containment fails, an NLI backend decides entailment to the right answer "
            "(the paper's fallback): lexical | hf:PATH | api:MODEL | local [?tau_s=0.95&cache=PATH]; lexical is a "
            "weak baseline")

TASK = Option("task", str, help="ifeval | gsm8k | halueval_qa")
DATA = Option("data", Path, help="the task's data file or folder")
RESPONDER = Option("responder", str, help="generating spec, or reference:echo")
REGULATORS = Option("regulators", list[str], flag="--regulator", param="regulator", help=(
    "an arm (repeatable): control, blind, informed, typed, certificate, informed_once, two_agree, score, "
    "world_none|half|full, throttle_1|3|all, goal_good|constraints, hidden, second_blind, second_informed; "
    "NAME+MOD composes"))
INITIAL = Option("initial", str, "shipped", help="shipped[:CONDITION] | replay:PATH | generating spec")
JUDGE = Option("judge", str | None, None, help="feedback judge spec")
JUDGE2 = Option("judge2", str | None, None, help="second-family judge spec")
REWRITER = Option("rewriter", str | None, None, help="constraints-hidden rewriter (default: judge)")
ROUNDS = Option("rounds", int, 1, help=f"revision rounds, 1–{MAX_ROUNDS} (paper: 3)",
                rule=Rule(integer=True, lo=1, hi=MAX_ROUNDS), cite=f"{BLIND_SPOT} §8.2")
VOTES = Option("votes", int, 3, help=f"judge samples per report, 1–{MAX_VOTES} (paper: 3)",
               rule=Rule(integer=True, lo=1, hi=MAX_VOTES), cite=f"{BLIND_SPOT} §3.4")
TEMPERATURE = Option("temperature", float, VOTE_TEMPERATURE, help=(
    "sampling temperature of the feedback judges' votes, api and local backends (paper: 0.3)"),
    rule=Rule(lo=0, cap=2), cite=f"{BLIND_SPOT} §3.4")
MAX_ITEMS = Option("max_items", int | None, None, help="keep the first N items", rule=Rule(integer=True, lo=1))
NLI = Option("nli", str | None, None, help=NLI_HELP)

OPTIONS = Options((
    TASK, DATA, RESPONDER, shared.OUT, REGULATORS, INITIAL, JUDGE, JUDGE2, REWRITER, ROUNDS, VOTES, TEMPERATURE,
    MAX_ITEMS, shared.BOOTSTRAP, shared.SEED, shared.STORE, shared.CONCURRENCY, shared.API_BASE,
    shared.ALLOW_FAILURES, NLI, shared.TIMEOUT, shared.RETRIES, shared.RPM, shared.BATCH, shared.BATCH_OUT,
    shared.MLFLOW, shared.MLFLOW_EXPERIMENT, shared.TEMPLATE,
))
"""Every option of a loop run, in ``--help``'s order."""

RUN = ("task", "data", "responder", "out", "regulators", "initial", "judge", "judge2", "rewriter", "rounds", "votes",
       "temperature", "max_items", "bootstrap", "seed", "store", "concurrency", "api_base", "nli", "template")
"""The options ``commands.loop.run_loop_command`` takes, by their declared names (the rest are the command's
call options and exits, applied around the run)."""

ANALYSIS = ("task", "data", "initial", "regulators", "rounds", "votes", "temperature", "max_items", "bootstrap",
            "seed")
"""The options that set the analysis itself (the rest name the models, where it writes and how it calls)."""

DEFAULT_REGULATORS = ("control", "blind", "informed", "certificate")
"""The arms of the default run a card names: no report, the bare report, the informed report, a certificate."""

DEFAULT_RUN: dict[str, Any] = {"task": "ifeval", "data": Path(str(files("judgeaudit") / "data")) / "ifeval",
                               "initial": "shipped", "regulators": list(DEFAULT_REGULATORS), "rounds": 1, "votes": 1}
"""The default run (``judgeaudit card --run-missing``, the demo): the bundled IFEval slice, the judge as responder
and feedback judge, one round, one vote; every other option at its declared default."""


def command_line(values: dict[str, Any], *, judge: str = "{judge}", out: str = "DIR") -> str:
    """The ``judgeaudit loop run`` line of ``values`` (declared names; the judge as ``responder`` and ``judge``)."""
    v = {**values, "responder": judge, "judge": judge, "out": out}
    order = ("task", "data", "initial", "responder", "judge", "regulators", "rounds", "votes", "out")
    parts = ["judgeaudit loop run"]
    for name in order:
        o = OPTIONS[name]
        for x in (v[name] if isinstance(v[name], list | tuple) else [v[name]]):
            parts.append(f"{o.option} {x}")
    return " ".join(parts)

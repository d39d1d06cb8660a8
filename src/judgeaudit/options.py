"""Options declared once: name, type, default, rule, help text and the paper the definition is from.

An ``Option`` is what a command's flag, an experiment file's key and a run function's keyword argument
have in common. A command line (``commands.declared.typer_parameters``), an experiment file's model
(``experiment.file_model``) and the rule table (``validate.OPTION_RULES``) are derived from the
declarations, so an option is added, renamed or bounded in one place. The options many analyses share are
declared here; an analysis's own are declared beside it (``analyses.validity.options``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

REQUIRED: Any = ...
"""The default of an option that must be given."""


@dataclass(frozen=True)
class Rule:
    """A number's admissible range: ``lo``/``hi`` bounds (None: open), ``lo_open`` for a strict lower bound;
    ``cap``: judgeaudit's own upper bound on a quantity that has no natural one (resamples, votes, seconds),
    against runs that would exhaust memory or money."""

    integer: bool = False
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    cap: float | None = None

    def problem(self, value: object) -> str | None:
        """Why ``value`` breaks the rule, or None."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, got {value!r}"
        if self.integer and math.isfinite(value) and value != int(value):
            return f"must be a whole number, got {value!r}"
        if self.cap is not None and math.isfinite(value) and value > self.cap:
            return f"must be at most {_num(self.cap)} (judgeaudit's bound), got {value!r}"
        ok = math.isfinite(value) and (self.lo is None or (value > self.lo if self.lo_open else value >= self.lo)) \
            and (self.hi is None or value <= self.hi)
        if ok:
            return None
        if self.lo is not None and self.hi is not None:
            return f"must be between {_num(self.lo)} and {_num(self.hi)}, got {value!r}"
        return f"must be {'>' if self.lo_open else '≥'} {_num(self.lo)}, got {value!r}"


def _num(x: float | None) -> str:
    return str(int(x)) if x is not None and x == int(x) else str(x)


@dataclass(frozen=True)
class Option:
    """One option of an analysis.

    ``name`` is the experiment file's key and the flag (``s_floor`` → ``--s-floor``, unless ``flag`` says
    otherwise); ``param`` the command's parameter name where it differs (``timeout`` → ``call_timeout``);
    ``type`` the value's type on the command line and ``file_type`` in the file where it differs (a judge
    entry may be a mapping there); ``rule`` the bounds every path checks; ``cite`` the paper (and section)
    whose definition the option sets, appended to its help; ``writes`` what a path option writes
    (``folder``, ``file``, ``store``); ``where``: ``both``, ``command`` (a flag only: a run's own, such as
    ``--backend``, that ``judgeaudit run`` takes as its flag) or ``file``.
    """

    name: str
    type: Any
    default: Any = REQUIRED
    help: str = ""
    flag: str = ""
    param: str = ""
    rule: Rule | None = None
    cite: str = ""
    file_type: Any = None
    writes: Literal["folder", "file", "store"] | None = None
    where: Literal["both", "command", "file"] = "both"

    @property
    def option(self) -> str:
        """The flag: ``--s-floor``."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def keyword(self) -> str:
        """The command's parameter name."""
        return self.param or self.name

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def help_text(self) -> str:
        """The help as ``--help`` prints it: the text, then the paper whose definition it is."""
        return f"{self.help} ({self.cite})" if self.cite else self.help

    def problem(self, value: object) -> str | None:
        """Why ``value`` breaks the option's rule, or None."""
        return None if self.rule is None else self.rule.problem(value)


class Options(tuple):
    """The options of one analysis, in the order ``--help`` lists them; names are unique."""

    def __new__(cls, options: Iterable[Option]) -> Options:
        opts = tuple(options)
        names = [o.name for o in opts]
        if len(set(names)) != len(names):
            raise ValueError(f"an option is declared twice: {sorted(n for n in names if names.count(n) > 1)}")
        return super().__new__(cls, opts)

    def __iter__(self) -> Iterator[Option]:
        return super().__iter__()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for o in tuple.__iter__(self):
                if o.name == key:
                    return o
            raise KeyError(key)
        return super().__getitem__(key)

    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self)

    def on_command(self) -> tuple[Option, ...]:
        return tuple(o for o in self if o.where != "file")

    def in_file(self) -> tuple[Option, ...]:
        return tuple(o for o in self if o.where != "command")

    def defaults(self) -> dict[str, Any]:
        """Every option that has a default, by name."""
        return {o.name: o.default for o in self if not o.required}

    def rules(self) -> dict[str, Rule]:
        return {o.name: o.rule for o in self if o.rule is not None}

    def check(self, **values: object) -> None:
        """``InputError`` naming the first option (as its flag) whose value breaks its rule."""
        from judgeaudit.errors import InputError

        for name, value in values.items():
            msg = self[name].problem(value)
            if msg is not None:
                raise InputError(msg, field=self[name].option)


CONSTRUCT_VALIDITY = "“A Judge Should Know What Changed: Construct Validity for LLM-as-a-Judge Evaluation”"
"""The paper the validity options' definitions are from (help texts cite it)."""
BLIND_SPOT = "Kumar, Pothuneedi & Bandak, “The Anatomy of a Blind Spot: What an LLM Judge Must Be Shown, and How Much”"
"""The paper the loop options' definitions are from."""
CAP_PAPER = "Li et al., “Conditional Accuracy Profiles: Diagnosing LLM Judges across Deployment Conditions”"
"""The paper of the conditional accuracy profiles (the cap commands' help cites it)."""

MAX_RESAMPLES = 100_000
"""Upper bound of bootstrap resamples, regrades and permutations: far above what an interval or a p needs
(the papers use 1 000–10 000), and below what fills memory (a resample index matrix is resamples × units)."""

STORE_HELP = "call store: the SQLite file keeping every judge call, so a rerun resumes without paying twice"

# --- what a run writes and where its calls are kept ----------------------------------------------------------
OUT = Option("out", Path, help="output folder", writes="folder")
STORE = Option("store", Path | None, None, help=STORE_HELP + " (default OUT/calls.sqlite)", writes="store")
SEED = Option("seed", int, 0, help="random seed of the bootstrap and of every random draw (the same seed gives "
              "the same numbers)")
BOOTSTRAP = Option("bootstrap", int, 2000, help="bootstrap resamples behind every interval",
                   rule=Rule(integer=True, lo=0, cap=MAX_RESAMPLES))
REGRADE = Option("regrade", int, 0, help="requests re-graded for regrade agreement",
                 rule=Rule(integer=True, lo=0, cap=MAX_RESAMPLES))

# --- the validity analysis's thresholds (shared: ``agreement`` reads ``bar`` too) ---------------------------------
S_FLOOR = Option("s_floor", float, 0.90, help="invariance floor, set before the run", rule=Rule(lo=0, hi=1),
                 cite=f"{CONSTRUCT_VALIDITY} Def. 4")
BAR = Option("bar", float, 0.75, help="raw pairwise agreement bar for a slot/axis", rule=Rule(lo=0, hi=1),
             cite=f"{CONSTRUCT_VALIDITY} §4.1")

# --- how a run calls its judges ----------------------------------------------------------------------------
JUDGES = Option("judges", list[str], flag="--judge", param="judge", help="judge spec (repeatable)")
TEMPLATE = Option("template", str | None, None, param="judge_template",
                  help="judge template (a YAML file or a built-in name: judgeaudit templates list) for every api: "
                  "and local --judge")
CONCURRENCY = Option("concurrency", int | None, None, help="judge calls in flight at once per judge (default, "
                     "and at most: the judge's own limit)", rule=Rule(integer=True, lo=1, cap=1024))
API_BASE = Option("api_base", str | None, None, help="base URL of an OpenAI-compatible server for every api: judge "
                  "(e.g. http://127.0.0.1:8000/v1; default: the provider's own)")
TIMEOUT = Option("timeout", float | None, None, param="call_timeout",
                 help="per-call timeout, seconds (default 120; at most 3600)",
                 rule=Rule(lo=0, lo_open=True, cap=3600))
RETRIES = Option("retries", int | None, None, param="call_retries", help="retries of a failed call (default 5; at "
                 "most 20)", rule=Rule(integer=True, lo=0, cap=20))
RPM = Option("rpm", float | None, None, param="call_rpm", help="requests per minute limit (default: none)",
             rule=Rule(lo=0, lo_open=True, cap=1_000_000))
ALLOW_FAILURES = Option("allow_failures", bool, False, help="exit 0 even when a judge produced no usable verdict "
                        "(the failures are still reported)")
BATCH = Option("batch", str | None, None, file_type=Literal["openai", "anthropic"] | None,
               help="openai | anthropic: write the provider's batch request file (--batch-out) for every api: judge "
               "call not yet in the store and make no call; submit it, then `judgeaudit batch ingest RESULTS "
               "--store STORE` and rerun the same command")
BATCH_OUT = Option("batch_out", Path | None, None, writes="file",
                   help="the batch request file --batch writes (default: batch-<provider>.jsonl, or .json for "
                   "anthropic, in the current folder)")
MLFLOW = Option("mlflow", str | None, None,
                help="MLflow tracking URI (a local file:./mlruns or sqlite:///mlflow.db needs no server): log the "
                "run's result.json numbers (intervals as .lo/.hi) and report files to a new MLflow run (pip install "
                "'judgeaudit\\[mlflow]')")
MLFLOW_EXPERIMENT = Option("mlflow_experiment", str | None, None,
                           help="MLflow experiment of --mlflow (default: judgeaudit)")

# --- the prediction ledger ----------------------------------------------------------------------------------
LEDGER = Option("ledger", Path | None, None, help="prediction ledger: mark headline numbers registered or not")
STRICT_REGISTER = Option("strict_register", bool, False, help="exit 3 (after writing outputs) when a headline "
                         "number was not registered in --ledger")

SHARED = Options((OUT, STORE, SEED, BOOTSTRAP, REGRADE, S_FLOOR, BAR, JUDGES, TEMPLATE, CONCURRENCY, API_BASE, TIMEOUT, RETRIES,
                  RPM, ALLOW_FAILURES, BATCH, BATCH_OUT, MLFLOW, MLFLOW_EXPERIMENT, LEDGER, STRICT_REGISTER))
"""The options several analyses share, each declared once."""

"""A loop run's ``result.json`` as a typed, versioned record: what ``judgeaudit loop run`` writes, and what the card,
the gate's card sections and other readers read back through ``LoopFile`` instead of by literal key, so that a key
renamed in the writer is an error at the reader, not an empty value on a card.

The shape is the validity result's (``analyses.validity.schema``): each regulator's net and each paired difference
is read as an ``Estimate`` — its value, its interval and its ``Unit`` (responses resampled, how many, how many
resamples, at which level) — and each judge the loop called is read with its ``JudgeIdentity`` as the run recorded
it (model family, model, the template it was asked with). Every key a run writes is kept (``extra="allow"``).

``schema_version``: 0 is a file written before the version was recorded (the same keys, read the same way; its
unit is read from ``before.n_responses`` and ``n_boot``, its identities from ``judge``/``judge2`` and
``templates``); 1 adds ``schema_version``, ``unit`` and ``identities``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from judgeaudit.analyses.validity.schema import Estimate, JudgeIdentity, ResultReader, Unit

SCHEMA_VERSION = 1
"""The version this code writes."""

LEVEL = 0.95
"""The level of every loop interval (``loop.accounting.ci``)."""

RESAMPLED = "response"
"""What the loop's bootstrap resamples: responses (an item's output), each with all its checked units."""

Interval = tuple[float | None, float | None] | None


class Before(BaseModel):
    """The initial outputs' pass rates over the checked units."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    pass_rate: float | None
    loose_pass_rate: float | None
    n_units: int
    n_responses: int


class LoopRound(BaseModel):
    """One round of an arm (``regulators.<name>.rounds[i]``): its pass rates at the round's end, its net against
    the initial outputs, what it fixed and broke against its own start, and the responses acted on."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    round: int
    pass_rate: float | None
    loose_pass_rate: float | None
    net: float | None
    fixed_this_round: int
    broken_this_round: int
    acted_on: int


class PrecisionVsNet(BaseModel):
    """The Spearman ρ of report precision against net across the arms with a precision (one-sided permutation
    ``p``; ``exact`` when every permutation was enumerated)."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    rho: float | None
    p: float | None
    n: int
    exact: bool | None
    regulators: list[str]


class CheckerRoutes(BaseModel):
    """How many checks each HaluEval QA route decided (``checks``), and the NLI fallback's spec and unusable
    replies where one was asked."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    checks: dict[str, int]
    nli: str | None = None
    nli_unusable: int | None = None

    def nli_failed(self) -> str | None:
        """One line when the NLI fallback was asked and every one of its replies was unusable."""
        asked = sum(v for k, v in self.checks.items() if k.startswith("nli"))
        if asked and (self.nli_unusable or 0) == asked:
            return f"the NLI fallback {self.nli} gave no usable reply in {asked} check(s)"
        return None


class ArmNet(BaseModel):
    """What a card reads of an arm: its net with its interval, and ``status`` when it had no usable report."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    net: float | None
    net_ci: Interval = None
    """Required of a versioned file (``Regulator``); an earlier one may lack it (no interval)."""
    status: str | None = None


class Regulator(ArmNet):
    """One arm's block (``regulators.<name>``): its final round against the initial outputs, its rates pooled over
    the rounds and each round's row. An arm whose every report vote failed carries ``status``."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    net_ci: Interval
    fixed: int
    broken: int
    fixed_summed: int
    broken_summed: int
    pass_rate: float | None
    acted_on: int
    precision: float | None
    false_alarm_rate: float | None
    break_rate_flagged: float | None
    break_rate_unflagged: float | None
    rounds: list[LoopRound]
    judge_votes: int | None = None
    failed_calls: int | None = None
    parse_failures: int | None = None
    usable_votes: int | None = None


class Difference(BaseModel):
    """A paired difference of two arms' nets (``differences["a - b"]``), on the same resamples."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    net: float | None
    ci: Interval


class LoopArms(ResultReader):
    """The part of a loop result a card reads: who judged, each arm's net with its interval, and (where the run
    recorded them) the interval's unit and the judges' identities."""

    WHAT: ClassVar[str] = "loop"

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    judge: str | None
    judge2: str | None = None
    regulators: dict[str, ArmNet]
    before: Before | None = None
    n_boot: int | None = None
    unit: Unit | None = None
    """What every interval resampled (schema 1; ``interval_unit`` reads it from a schema-0 file)."""
    identities: dict[str, JudgeIdentity] | None = None
    """The feedback judges as the run recorded them, by judge id (schema 1)."""
    templates: dict[str, dict[str, Any]] | None = None

    @property
    def interval_unit(self) -> Unit | None:
        """What every interval of the run resampled: the responses, one bootstrap shared by every arm (None: a
        file that recorded neither its unit nor its response count)."""
        if self.unit is not None:
            return self.unit
        if self.before is None or self.n_boot is None:
            return None
        return Unit(resampled=RESAMPLED, n=self.before.n_responses, resamples=self.n_boot, level=LEVEL)

    def usable(self, regulator: str) -> bool:
        """Whether the arm had a usable report (an arm whose every vote failed took no action)."""
        from judgeaudit.loop.engine import NO_USABLE_REPORT

        return self.regulators[regulator].status != NO_USABLE_REPORT

    def identity(self, judge: str) -> JudgeIdentity:
        """A feedback judge as the run recorded it (a schema-0 file: the template it was asked with only)."""
        if self.identities is not None and judge in self.identities:
            return self.identities[judge]
        if judge not in (self.judge, self.judge2):
            raise KeyError(f"{judge!r} is not a feedback judge of this loop run ({self.judge}, {self.judge2})")
        return JudgeIdentity(template=(self.templates or {}).get(judge))


class LoopFile(LoopArms):
    """A loop run's ``result.json``: every key a run writes."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    schema_version: int = 0
    task: str
    data: str
    n_items: int
    rounds: int
    votes: int
    temperature: float
    initial: str
    responder: str
    judge: str | None
    judge2: str | None
    templates: dict[str, dict[str, Any]]
    checker: str
    regulator_descriptions: dict[str, str]
    before: Before
    regulators: dict[str, Regulator]
    differences: dict[str, Difference]
    precision_vs_net: PrecisionVsNet
    n_boot: int
    judge_parse_failures: dict[str, Any]
    judge_errors: dict[str, Any]
    judge_calls: dict[str, Any]
    no_usable_report: list[str]
    calls: dict[str, dict[str, Any]]
    planned_calls: dict[str, int]
    responder_errors: int
    n_rewrites: int
    keyword_table: dict[str, list[str]]
    notes: str
    checker_routes: CheckerRoutes | None = None
    """HaluEval QA's routes (the other tasks have none)."""
    excluded: Any = None
    inputs: dict[str, Any] | None = None
    run_id: str | None = None
    created_at: str | None = None

    def net(self, regulator: str) -> Estimate:
        """Arm ``regulator``'s net (fixed − broken over units, final round against the initial outputs)."""
        g = self.regulators[regulator]
        return Estimate(name=f"{regulator}.net", value=g.net, ci=g.net_ci, unit=self.interval_unit)

    def difference(self, a: str, b: str) -> Estimate:
        """The paired difference of two arms' nets, ``a − b``."""
        d = self.differences[f"{a} - {b}"]
        return Estimate(name=f"{a} - {b}", value=d.net, ci=d.ci, unit=self.interval_unit)

    def to_json(self) -> dict[str, Any]:
        """The ``result.json`` object: every key read or written, typed fields as the run wrote them."""
        return self.model_dump(mode="json", exclude_unset=True)


class World(BaseModel):
    """One world of a ``loop worlds`` run (``worlds.<W>``): the agent's accuracy with its Wilson 95% interval, its
    correct answers of ``n`` and the calls that failed (counted wrong)."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    description: str
    accuracy: float
    correct: int
    n: int
    ci: Interval
    failed_calls: int


class LoopWorldsFile(ResultReader):
    """A ``loop worlds`` run's ``result.json`` (an agent under the seven worlds W0–W6): every key a run writes."""

    WHAT: ClassVar[str] = "loop worlds"

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    task: str
    data: str
    agent: str
    n_items: int
    checker: str
    worlds: dict[str, World]
    checker_routes: CheckerRoutes | None = None
    excluded: Any = None
    inputs: dict[str, Any] | None = None
    run_id: str | None = None
    created_at: str | None = None

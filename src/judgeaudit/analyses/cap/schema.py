"""A CAP run's ``result.json`` as a typed, versioned record: what ``CapResult.to_dict`` writes, and what the card,
the gate, the ledger and other readers read back through ``CapFile`` instead of by literal key, so that a key
renamed in the writer is a validation error at the reader, not an empty value on a card.

The shape follows validity's (``analyses.validity.schema``, after Inspect AI's ``EvalResults``/``EvalScore``): a
run holds one block per set, each with one block per judge; every cell (a condition, or ``overall``) is read as an
``Estimate`` — its value, its interval and its ``Unit`` (the set's base items, how many, how many resamples, at
which level) — and each judge carries its ``JudgeIdentity`` as the run recorded it (model family, model, template;
a pairwise judge has no grade scale). Every key a run writes is kept (``extra="allow"``): the typed fields are
the ones readers use.

The keys every reader needs are required (each set's ``judges``, each judge's ``overall`` and ``conditions``, each
cell's ``value``, ``ci`` and ``n``, a condition's ``coverage``); the rest a run always writes, and a reader that
needs one (``settings`` for a unit) says when it is absent.

``schema_version``: 0 is a file written before the version was recorded (the same keys, read the same way; its
unit count is unknown); 1 adds ``schema_version``, ``settings.level``, each set's ``n_units`` and each judge's
``identity``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, ValidationError

from judgeaudit.analyses.validity.schema import Block, Estimate, JudgeIdentity, ResultReader, Unit
from judgeaudit.errors import InputError

SCHEMA_VERSION = 1
"""The version this code writes."""

RESAMPLED = "base_id"
"""What every CAP interval resamples: the base item (a pair's two orderings and all its presentation variants)."""

Interval = tuple[float | None, float | None] | None


class Metric(Block):
    """A cell's other metric (``strict``, ``consistency``, ``acc_AB``, …): value, interval, items used (a run
    writes them; None where a result does not say)."""

    value: float | None
    ci: Interval
    n: int | None = None


class CellSummary(Block):
    """What a card keeps of a cell (``sections.cap.sets.<set>.conditions.<c>`` and ``.overall``): its value,
    interval and items used, the coverage status for a condition, strict and consistency for C5–C7."""

    value: float | None
    ci: Interval
    n: int | None
    coverage: str | None = None
    strict: Metric | dict[str, Any] | None = None
    consistency: Metric | dict[str, Any] | None = None


class Cell(Block):
    """One cell of a judge on a set (a condition, or ``overall``): the value by the condition's operator, with
    its interval, items used, coverage status and operator, and the cell's other metrics."""

    value: float | None
    ci: Interval
    n: int
    coverage: str | None = None
    operator: str | None = None
    strict: Metric | None = None
    consistency: Metric | None = None
    acc_AB: Metric | None = None
    acc_BA: Metric | None = None
    reference: Metric | None = None
    accuracy: Metric | None = None
    unconditional: Metric | None = None
    q0: Metric | None = None
    q1: Metric | None = None
    excluded: Metric | None = None
    as_wrong: Metric | None = None
    strict_excluded: Metric | None = None
    strict_as_wrong: Metric | None = None

    def metric(self, name: str) -> Metric:
        """The cell's ``name`` metric (``value`` is the cell itself)."""
        if name == "value":
            return Metric(value=self.value, ci=self.ci, n=self.n)
        m = getattr(self, name, None) if name in Cell.model_fields else (self.model_extra or {}).get(name)
        if m is None:
            raise KeyError(f"the cell has no metric {name!r}")
        return m if isinstance(m, Metric) else Metric.model_validate(m)

    def summary(self, condition: bool = True) -> dict[str, Any]:
        """What a card keeps of the cell (``CellSummary``'s keys)."""
        out: dict[str, Any] = {"value": self.value, "ci": None if self.ci is None else list(self.ci), "n": self.n}
        if condition:
            out["coverage"] = self.coverage
            for k in ("strict", "consistency"):
                m = getattr(self, k)
                if m is not None:
                    out[k] = {"value": m.value, "ci": None if m.ci is None else list(m.ci)}
        return out


class ConditionCell(Cell):
    """A condition's cell: its coverage status is what a card compares cells by."""

    coverage: str


class BenchmarkScore(Block):
    value: float | None
    rule: str
    n: int


class CapJudge(Block):
    """One judge's block on a set (``sets.<set>.judges.<id>``)."""

    family: str | None = None
    conditions: dict[str, ConditionCell]
    overall: Cell
    benchmark_score: BenchmarkScore | None = None
    template: dict[str, Any] | None = None
    identity: JudgeIdentity | None = None


class Coverage(Block):
    status: str
    operator: str


class CapSet(Block):
    """One benchmark's block (``sets.<set>``)."""

    judges: dict[str, CapJudge]
    coverage: dict[str, Coverage] = Field(default_factory=dict)
    exclusions: list[dict[str, Any]] = Field(default_factory=list)
    bias_corrected: list[dict[str, Any]] = Field(default_factory=list)
    n_units: int | None = None
    """The base items the set's intervals resample (None: a file written before it was recorded)."""


class Settings(Block):
    n_boot: int
    seed: int | None
    failures: str
    level: float = 0.95
    """The intervals' confidence level (a file of schema 0 used 0.95, the only level a run could ask for)."""


class CapFile(ResultReader):
    """A CAP run's ``result.json``."""

    WHAT: ClassVar[str] = "CAP"

    model_config = ConfigDict(extra="allow")
    schema_version: int = 0
    sets: dict[str, CapSet]
    conditions: list[dict[str, Any]] = Field(default_factory=list)
    settings: Settings | None = None
    """The estimator's settings (None: a result that records none, such as one written by hand)."""
    evaluator: dict[str, Any] | None = None
    spearman: list[dict[str, Any]] = Field(default_factory=list)
    stress: list[dict[str, Any]] = Field(default_factory=list)
    l1: list[dict[str, Any]] = Field(default_factory=list)
    published_statistics: list[dict[str, Any]] | None = None
    call_failures: list[dict[str, Any]] | None = None
    calls: dict[str, Any] | None = None
    answers: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    """What the run read, with hashes (``runinfo``)."""
    run_id: str | None = None
    created_at: str | None = None
    notes: list[str] = Field(default_factory=list)

    def judge(self, set_name: str, judge: str) -> CapJudge:
        return self.sets[set_name].judges[judge]

    def judges(self) -> list[str]:
        """Every judge of every set, in the order the file names them."""
        return list(dict.fromkeys(j for s in self.sets.values() for j in s.judges))

    def unit(self, set_name: str) -> Unit:
        """What every interval of set ``set_name`` resampled (one bootstrap over its base items, shared by all its
        judges and cells); ``InputError`` for a result that records no settings."""
        if self.settings is None:
            raise InputError("the CAP result records no settings (n_boot, level): its intervals' unit is unknown",
                             field="settings")
        return Unit(resampled=RESAMPLED, n=self.sets[set_name].n_units, resamples=self.settings.n_boot,
                    level=self.settings.level)

    def cell(self, set_name: str, judge: str, condition: str) -> Cell:
        """The cell of ``condition`` (``C1``–``C8`` or ``overall``); ``KeyError`` when the run has none."""
        j = self.judge(set_name, judge)
        if condition == "overall":
            return j.overall
        return j.conditions[condition]

    def estimate(self, set_name: str, judge: str, condition: str, metric: str = "value") -> Estimate:
        """A cell's ``metric`` with its interval and unit."""
        m = self.cell(set_name, judge, condition).metric(metric)
        name = condition if metric == "value" else f"{condition}.{metric}"
        return Estimate(name=name, value=m.value, ci=m.ci, unit=self.unit(set_name))

    def identity(self, set_name: str, judge: str) -> JudgeIdentity:
        """The judge as the run recorded it (a file of schema 0: its family and template)."""
        j = self.judge(set_name, judge)
        if j.identity is not None:
            return j.identity
        return JudgeIdentity(family=j.family, template=j.template)


def cell_summary(data: Any, *, where: str) -> CellSummary:
    """A card's CAP cell (``CellSummary``), an ``InputError`` naming ``where`` when a key it needs is missing or
    renamed."""
    try:
        return CellSummary.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        raise InputError(f"malformed card: a CAP cell {first['msg'].lower()}",
                         field=".".join([where, *map(str, first["loc"])])) from None

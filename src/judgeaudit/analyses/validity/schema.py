"""A validity run's ``result.json`` as a typed, versioned record: what the run writes, and what the card, the
checklist and other readers read back through ``ValidityFile.read`` instead of by literal key, so that a key
renamed in the writer is a validation error at the reader, not an empty value on a card.

The shape follows Inspect AI's log types (``EvalResults`` holding ``EvalScore`` s, each a named metric with its
parameters): a run holds one block per judge; each headline quantity is read as an ``Estimate`` — its value,
its interval, and its ``Unit`` (what the interval resampled, how many of them, how many resamples, at which
level) — and each judge carries its ``JudgeIdentity`` as the run recorded it (model family, model, template,
scale). Every key a run writes is kept (``extra="allow"``): the typed fields are the ones readers use.

``schema_version``: 0 is a file written before the version was recorded (the same keys, read the same way);
1 adds ``schema_version`` and each judge's ``identity``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from judgeaudit.errors import invalid

SCHEMA_VERSION = 1
"""The version this code writes."""

ESTIMATES = ("S", "R", "R_scope", "R_strength", "gap", "control_flip_rate", "R_excess", "R_plus", "wrong_way_rate")
"""The quantities of a judge block that carry an interval (``<name>_ci``)."""


class Block(BaseModel):
    """A block of a result file: its typed fields, and every other key the run wrote kept as written."""

    model_config = ConfigDict(extra="allow")


class Unit(BaseModel):
    """What an interval resampled: ``resampled`` (the unit, ``base_id``), ``n`` of them (None: a result written
    before the count was recorded), ``resamples`` draws, at confidence ``level``."""

    model_config = ConfigDict(frozen=True)
    resampled: str
    n: int | None
    resamples: int
    level: float


class Estimate(BaseModel):
    """One quantity with its interval (None where the run could not measure it) and its unit."""

    model_config = ConfigDict(frozen=True)
    name: str
    value: float | None
    ci: tuple[float | None, float | None] | None
    unit: Unit


class JudgeIdentity(BaseModel):
    """The judge as the run recorded it: its model family and model (None where the backend names none), the
    template it answered and the scale its grades were read on."""

    model_config = ConfigDict(frozen=True)
    family: str | None = None
    model: str | None = None
    template: dict[str, Any] | None = None
    scale: dict[str, Any] | None = None


class Directional(Block):
    """R⁺ and the wrong-way rate on one axis (or over the construct arm)."""
    R_plus: float | None = None
    R_plus_ci: tuple[float | None, float | None] | None = None
    wrong_way_rate: float | None = None
    wrong_way_rate_ci: tuple[float | None, float | None] | None = None


class ValidityJudge(Block):
    """One judge's block (``judges.<id>``): its profile at the matched-invariance operating point."""
    S: float | None
    R: float | None
    R_scope: float | None
    R_strength: float | None
    gap: float | None
    control_flip_rate: float | None
    R_excess: float | None
    R_plus: float | None
    wrong_way_rate: float | None
    S_ci: tuple[float | None, float | None] | None = None
    R_ci: tuple[float | None, float | None] | None = None
    R_scope_ci: tuple[float | None, float | None] | None = None
    R_strength_ci: tuple[float | None, float | None] | None = None
    gap_ci: tuple[float | None, float | None] | None = None
    control_flip_rate_ci: tuple[float | None, float | None] | None = None
    R_excess_ci: tuple[float | None, float | None] | None = None
    R_plus_ci: tuple[float | None, float | None] | None = None
    wrong_way_rate_ci: tuple[float | None, float | None] | None = None
    gap_perm_p: float | None
    tau: float | None
    interpretable: bool
    single_point: bool
    n_construct: int
    n_control: int
    notes: list[str]
    directional: dict[str, Any] | None = None
    """Counts over the construct arm (``n_flips``, ``n_toward``, ``n_wrong_way``) and one block per axis."""
    template: dict[str, Any] | None = None
    scale: dict[str, Any] | None = None
    family: str | None = None
    identity: JudgeIdentity | None = None


class ResultReader(BaseModel):
    """A typed ``result.json``: written back as the run wrote it, read with one error line naming the first key
    that is not as written (``WHAT`` names the analysis in that line)."""

    WHAT: ClassVar[str] = "run"

    def to_json(self) -> dict[str, Any]:
        """The ``result.json`` object: every key read or written, typed fields as the run wrote them."""
        return self.model_dump(mode="json", exclude_unset=True)

    @classmethod
    def of(cls, data: dict[str, Any], *, path: Path | str | None = None) -> Self:
        """The typed record of a ``result.json`` object already read (``path`` names it in an error)."""
        from pydantic import ValidationError

        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise invalid(e, f"not a {cls.WHAT} result this judgeaudit reads", path=path) from None

    @classmethod
    def read(cls, path: Path | str) -> Self:
        """A run's ``result.json`` (a file or its run folder)."""
        p = Path(path)
        p = p / "result.json" if p.is_dir() else p
        return cls.of(json.loads(p.read_text(encoding="utf-8")), path=p)


class ValidityFile(ResultReader):
    """A validity run's ``result.json``."""

    WHAT: ClassVar[str] = "validity"

    model_config = ConfigDict(extra="allow")
    schema_version: int = 0
    s_floor: float
    bar: float
    n_base: int
    n_probes: int
    direction_source: str | None
    level: float
    n_boot: int
    n_perm: int
    seed: int
    bootstrap_unit: str
    tau_in_bootstrap: str
    judges: dict[str, ValidityJudge]
    slots: dict[str, dict[str, Any]]
    axes: dict[str, dict[str, Any]]
    notes: list[str] = Field(default_factory=list)
    probe_set: str | None = None
    """``bundled`` or the probe file's path as given (None: a file written before runs recorded it)."""
    inputs: dict[str, Any] | None = None
    """What the run read, with hashes (``runinfo``)."""
    run_id: str | None = None
    created_at: str | None = None

    @property
    def unit(self) -> Unit:
        """What every interval of the run resampled (one bootstrap over base items, shared by all judges)."""
        return Unit(resampled=self.bootstrap_unit, n=self.n_base, resamples=self.n_boot, level=self.level)

    def estimate(self, judge: str, name: str) -> Estimate:
        """Judge ``judge``'s ``name`` (one of ``ESTIMATES``) with its interval and unit."""
        if name not in ESTIMATES:
            raise KeyError(f"{name!r} is not an estimate of a validity run ({', '.join(ESTIMATES)})")
        b = self.judges[judge]
        return Estimate(name=name, value=getattr(b, name), ci=getattr(b, f"{name}_ci"), unit=self.unit)

    def directional(self, judge: str, axis: str, name: str) -> Estimate:
        """R⁺ or the wrong-way rate (``name``) of ``judge`` on ``axis`` (scope, strength)."""
        d = Directional.model_validate((self.judges[judge].directional or {}).get(axis) or {})
        return Estimate(name=f"{axis}.{name}", value=getattr(d, name), ci=getattr(d, f"{name}_ci"), unit=self.unit)

    def identity(self, judge: str) -> JudgeIdentity:
        """The judge as the run recorded it (a file of schema 0 records template and scale, and a family only
        where the backend named one)."""
        b = self.judges[judge]
        if b.identity is not None:
            return b.identity
        return JudgeIdentity(family=b.family, template=b.template, scale=b.scale)


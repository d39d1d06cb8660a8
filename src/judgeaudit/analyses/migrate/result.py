"""The typed result of a migration: every quantity with its interval, margin, test and unit, the verdict, and
the link; it writes and reads its own ``result.json`` (``{"migrate": …}``, schema-versioned)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from judgeaudit.analyses.validity.schema import ResultReader

SCHEMA_VERSION = 1
Verdict = Literal["EQUIVALENT", "LINKABLE", "NOT_COMPARABLE", "BLIND"]
Status = Literal["equivalent", "not_equivalent", "blind", "descriptive", "not_computable"]


def _finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


class Quantity(BaseModel):
    """One migration quantity: its estimate and 95% interval over the resampled unit, and — where it has a
    margin — the equivalence test (``tost_interval``: the 1 − 2α interval, or the one-sided bound) and its
    status. ``anchors_needed``: for a blind quantity, the anchors at which no difference would pass; ``decisive``: the
    test's interval lies wholly outside the margin (not equivalent at any number of anchors)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    label: str
    estimate: float | None
    ci: list[float | None]
    test: Literal["two_sided", "non_inferiority", "descriptive"]
    margin: float | None = None
    tost_interval: list[float | None] | None = None
    p: float | None = None
    method: str | None = None
    status: Status = "descriptive"
    anchors_needed: int | None = None
    decisive: bool = False
    unit: str
    n_units: int
    definition: str
    extra: dict[str, Any] = {}

    @field_validator("estimate", "p", mode="before")
    @classmethod
    def _no_nan(cls, v: Any) -> Any:
        return _finite(v)

    @field_validator("ci", "tost_interval", mode="before")
    @classmethod
    def _no_nan_list(cls, v: Any) -> Any:
        return _finite(list(v)) if v is not None else None


class MigrateResult(BaseModel):
    """What ``judgeaudit migrate`` decided, and from what."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    form: Literal["graded", "pairwise"]
    old_judge: str
    new_judge: str
    old_scale: dict[str, Any] | None
    new_scale: dict[str, Any] | None
    threshold: float | None
    n_anchors: int
    n_clusters: int
    unit: str
    level: float
    alpha: float
    n_boot: int
    seed: int
    margins: dict[str, float]
    verdict: Verdict
    reasons: list[str]
    raw: list[Quantity]
    linked: list[Quantity] = []
    audits: list[Quantity] = []
    audit_sources: list[dict[str, Any]] = []
    link_hash: str | None = None
    notes: list[str] = []
    definitions: dict[str, str] = {}

    def quantity(self, name: str, *, linked: bool = False) -> Quantity | None:
        for q in (self.linked if linked else self.raw) + ([] if linked else self.audits):
            if q.name == name:
                return q
        return None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def write(self, path: str | Path, **inputs: Any) -> dict[str, Any]:
        """Write ``{"migrate": …}`` to ``path`` with the run stamp and inputs (``runinfo.write_result``)."""
        from judgeaudit.runinfo import write_result

        return write_result(Path(path), {"migrate": self.to_dict()}, inputs=inputs or None)

    @classmethod
    def read(cls, path: str | Path) -> MigrateResult:
        """The result in a migrate run's ``result.json`` (ValueError naming what is wrong)."""
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        body = d.get("migrate") if isinstance(d, dict) else None
        if not isinstance(body, dict):
            raise ValueError("not a migrate result (no 'migrate' object)")
        if body.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"migrate result schema {body.get('schema_version')!r}; this judgeaudit reads "
                             f"{SCHEMA_VERSION}")
        return cls.model_validate(body)


class MigrateFile(ResultReader):
    """A migrate run's ``result.json``: the result (``migrate``) beside the run's stamp and inputs, read with one
    error line naming the first key that is not as written (``MigrateFile.read``)."""

    WHAT: ClassVar[str] = "migrate"

    model_config = ConfigDict(extra="allow")
    migrate: MigrateResult
    inputs: dict[str, Any] | None = None
    """What the run read, with hashes (``runinfo``)."""
    run_id: str | None = None
    created_at: str | None = None

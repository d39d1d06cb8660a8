"""A validation-power audit's ``result.json`` as a typed, versioned record: what ``judgeaudit vp audit`` writes, and
what the card reads back through ``VpFile`` (a file this code wrote) or ``VpRows`` (the part a card reads, for a
file that predates the version) instead of by literal key, so that a key renamed in the writer is an error at the
reader, not an empty row on a card.

The shape is the validity result's (``analyses.validity.schema``): each applicable (set, mode) row's a_imp and a_hum
are read as an ``Estimate`` — value, interval and ``Unit`` (the groups the bootstrap resampled, how many, how many
resamples, at which level). Every key a run writes is kept (``extra="allow"``). An audit calls no judge: there is
no judge identity to record.

``schema_version``: 0 is a file written before the version was recorded (the same keys; its unit is read from
``n_groups`` and ``config.n_boot``); 1 adds ``schema_version`` and each applicable row's ``unit``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from judgeaudit.analyses.validity.schema import Estimate, Unit
from judgeaudit.errors import invalid

_NOT_READ = "not a validation-power result this judgeaudit reads"

SCHEMA_VERSION = 1
"""The version this code writes."""

LEVEL = 0.95
"""The level of the a_imp and a_hum intervals (``scoring.bootstrap_kappa_ci``' default)."""

RESAMPLED = "group"
"""What the a_imp and a_hum intervals resample: the set's groups (an item's answers, a prompt's pairs)."""

Interval = tuple[float | None, float | None] | None

WRITTEN = ("n", "n_groups", "folds", "label_space", "members", "a_imp", "a_imp_member", "a_imp_ci", "a_imp_null",
           "a_hum", "a_hum_ci", "a_hum_source", "a_hum_detail", "vp", "resolvable", "broken_harness",
           "broken_members", "n_permutations", "n_ties_dropped", "between_group_label_share")
"""The keys an applicable row of a run has (``results.ModeResult.to_dict``)."""


class Null(BaseModel):
    """a_imp against its label-permutation null."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    p_value: float | None = None
    clears_null: bool | None = None
    n: int | None = None
    p95: float | None = None
    mean: float | None = None
    p_value_bh: float | None = None


class Member(BaseModel):
    """One impoverished predictor's score on a row (``members.<name>``): its κ against the labels."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    kappa: float | None


class SetMeta(BaseModel):
    """A set's ``meta``: how its labels were obtained (``label_origin``; None where the set says nothing)."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    label_origin: str | None = None


class Row(BaseModel):
    """What a card reads of one (set, mode): whether the mode applies, and a_imp, its null, a_hum and VP."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    applicable: bool
    reason: str | None = None
    n: int | None = None
    n_groups: int | None = None
    a_imp: float | None = None
    a_imp_ci: Interval = None
    a_imp_member: str | None = None
    a_imp_null: Null | None = None
    a_hum: float | None = None
    a_hum_ci: Interval = None
    vp: float | None = None
    resolvable: bool | None = None
    members: dict[str, Member] | None = None
    unit: Unit | None = None

    @model_validator(mode="before")
    @classmethod
    def _applicable_rows_have_their_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("applicable"):
            missing = [k for k in ("n", "a_imp") if k not in data]   # an earlier file: the rest may be absent
            if missing:
                raise ValueError(f"an applicable row has no {missing[0]!r}")
        return data


class FullRow(Row):
    """One (set, mode) as a run writes it: every key of ``WRITTEN`` on an applicable row."""

    @model_validator(mode="before")
    @classmethod
    def _every_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("applicable"):
            missing = [k for k in WRITTEN if k not in data]
            if missing:
                raise ValueError(f"an applicable row has no {missing[0]!r}")
        return data


class VpRows(BaseModel):
    """The part of a validation-power result a card reads: each set's rows and its ``meta``."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    schema_version: int = 0
    config: dict[str, Any] = {}
    sets: dict[str, dict[str, Any]]
    """Each set's ``meta`` and its rows by mode, as written (read typed by ``rows``; checked by ``of``)."""

    ROW: ClassVar[type[Row]] = Row

    @model_validator(mode="before")
    @classmethod
    def _read_rows(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("sets"), dict):
            for name, block in data["sets"].items():
                if not isinstance(block, dict):
                    raise ValueError(f"set {name!r} is not a JSON object")
                for k, v in block.items():
                    if k != "meta" and not isinstance(v, dict):
                        raise ValueError(f"set {name!r} mode {k!r} is not a JSON object")
        return data

    def meta(self, set_name: str) -> SetMeta:
        """The set's ``meta`` (empty where the file records none)."""
        meta = self.sets[set_name].get("meta")
        return SetMeta.model_validate(meta if isinstance(meta, dict) else {})

    def applicable(self) -> list[tuple[str, str, Row, SetMeta]]:
        """Every (set, mode, row, the set's meta) of a mode that applies, in the file's order."""
        return [(name, mode, row, self.meta(name)) for name, mode, row, _ in self.rows() if row.applicable]

    def rows(self) -> list[tuple[str, str, Row, dict[str, Any]]]:
        """Every (set, mode, row, the set's meta), in the file's order."""
        out = []
        for name, block in self.sets.items():
            meta = block.get("meta") if isinstance(block.get("meta"), dict) else {}
            for mode, v in block.items():
                if mode != "meta":
                    out.append((name, mode, self.ROW.model_validate(v) if isinstance(v, dict) else v, meta))
        return out

    def unit(self, row: Row) -> Unit | None:
        """What the row's intervals resampled (None: a file that recorded neither its unit nor its groups)."""
        if row.unit is not None:
            return row.unit
        n_boot = self.config.get("n_boot")
        if row.n_groups is None or not isinstance(n_boot, int):
            return None
        return Unit(resampled=RESAMPLED, n=row.n_groups, resamples=n_boot, level=LEVEL)

    def a_imp(self, set_name: str, mode: str) -> Estimate:
        """a_imp of ``set_name`` in ``mode`` with its interval and unit."""
        row = self.ROW.model_validate(self.sets[set_name][mode])
        return Estimate(name=f"{set_name}.{mode}.a_imp", value=row.a_imp, ci=row.a_imp_ci, unit=self.unit(row))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)

    @classmethod
    def of(cls, data: dict[str, Any], *, path: Path | str | None = None) -> Any:
        """The typed record of a ``result.json`` object already read (``path`` names it in an error)."""
        from pydantic import ValidationError

        try:
            out = cls.model_validate(data)
            for name, block in out.sets.items():
                for mode, v in block.items():
                    if mode != "meta":
                        try:
                            cls.ROW.model_validate(v)
                        except ValidationError as e:
                            raise invalid(e, _NOT_READ, path=path, at=("sets", name, mode)) from None
            return out
        except ValidationError as e:
            raise invalid(e, _NOT_READ, path=path) from None

    @classmethod
    def read(cls, path: Path | str) -> Any:
        """A validation-power run's ``result.json`` (a file or its run folder)."""
        p = Path(path)
        p = p / "result.json" if p.is_dir() else p
        return cls.of(json.loads(p.read_text(encoding="utf-8")), path=p)


class VpFile(VpRows):
    """A validation-power run's ``result.json``: every key a run writes."""

    config: dict[str, Any]
    transfer: list[dict[str, Any]]
    inputs: dict[str, Any] | None = None
    run_id: str | None = None
    created_at: str | None = None

    ROW: ClassVar[type[Row]] = FullRow


def reader(data: dict[str, Any], *, path: Path | str | None = None) -> VpRows:
    """The typed reader of a result: a file this code versioned is read whole (``VpFile``), an unversioned one
    for the part a card reads (``VpRows``)."""
    return (VpFile if "schema_version" in data else VpRows).of(data, path=path)


def with_units(payload: dict[str, Any]) -> dict[str, Any]:
    """The run's ``result.json`` object (``ValidationPowerResult.to_dict``) with its version and each applicable
    row's ``unit``: the groups its intervals resampled."""
    n_boot = payload.get("config", {}).get("n_boot")
    for block in payload.get("sets", {}).values():
        for mode, row in block.items():
            if mode != "meta" and row.get("applicable"):
                row["unit"] = {"resampled": RESAMPLED, "n": row["n_groups"], "resamples": n_boot, "level": LEVEL}
    return {"schema_version": SCHEMA_VERSION, **payload}

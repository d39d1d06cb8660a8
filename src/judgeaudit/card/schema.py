"""A validity card (``card.json``) as a typed, versioned record: what ``build_card`` produces and writes, and what
the gate, ``card diff`` and the card's pages read back through ``CardFile.read`` instead of by literal key, so
that a key renamed in the writer is an error naming it at the reader, not an empty value on a gate or a diff.

A card holds the judge, when it was made, the folders it read, one section per measurement and what it opens
on (``lead``, ``verdict``). Each section is either measured — its own typed block, with the ``source`` run it
read — or not (``Unmeasured``: the "not measured — run: …" line, ``failed`` when the judge was asked and gave
no usable verdict). Every key a card writes is kept (``extra="allow"``): the typed fields are the ones readers
use. Numbers keep the type they were written with (an integer stays an integer), so a card read and written
back is the same file.

``schema_version``: 0 is a card written before the version was recorded (the same keys, read the same way);
1 adds ``schema_version``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, PlainSerializer, PlainValidator,
                      Tag, ValidationError)

from judgeaudit.analyses.cap.schema import CellSummary
from judgeaudit.analyses.validity.schema import Block
from judgeaudit.errors import InputError

SCHEMA_VERSION = 1
"""The version this code writes."""


def _number(x: Any) -> int | float | None:
    if x is None or (isinstance(x, int | float) and not isinstance(x, bool)):
        return x
    raise ValueError(f"a number or null, got {str(x)[:40]!r}")


def _interval(x: Any) -> tuple[int | float | None, int | float | None] | None:
    if x is None:
        return None
    if isinstance(x, list | tuple) and len(x) == 2:
        try:
            return _number(x[0]), _number(x[1])
        except ValueError:
            pass
    raise ValueError(f"an interval is [low, high] or null, got {str(x)[:40]!r}")


Num = Annotated[int | float | None, PlainValidator(_number)]
"""A number as the card wrote it (an integer stays an integer; None: not measured or undefined; NaN is read, and
a reader treats it as no value)."""

Interval = Annotated[tuple[int | float | None, int | float | None] | None, PlainValidator(_interval),
                     PlainSerializer(lambda v: None if v is None else [v[0], v[1]])]
"""An interval ``[lo, hi]`` (None: the run gave none), read as a pair and written as the list it was."""


def _count(x: Any) -> int | None:
    """A recorded unit count: a whole number ≥ 0 (7.0 is 7); None for null or NaN (the count is then unknown)."""
    if x is None or (isinstance(x, float) and x != x):
        return None
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 and x == int(x):
        return x if isinstance(x, int) else int(x)
    raise ValueError(f"a unit count is a whole number ≥ 0, got {str(x)[:40]!r}")


Count = Annotated[int | None, BeforeValidator(_count)]
"""How many units an interval resampled (or a section counted), as the run recorded it."""



class Source(Block):
    """The run a section read (``build._src``): its ``result.json``, run id and time; the judge's model family as
    the run recorded it and where it was read; the files the run read (``inputs``) and which of them changed
    since (``inputs_changed``)."""

    path: str
    run_id: str | None
    created_at: str | None
    judge: str | None = None
    family: str | None = None
    family_from: str | None = None
    inputs: dict[str, Any] | None = None
    inputs_changed: list[str] | None = None


class Value(Block):
    """A quantity's value and its interval."""

    value: Num
    ci: Interval


class Unmeasured(Block):
    """A section no run measured (``not_measured``: the line saying what to run, or why it was not run), or one
    whose run the judge gave no usable verdict in (``failed``)."""

    measured: Literal[False]
    failed: bool | None = None
    not_measured: str


class Measured(Block):
    measured: Literal[True]


class ValidityN(Block):
    base_items: Count
    construct_edits: Count
    control_edits: Count


class Bootstrap(Block):
    """What the validity intervals resampled: the run's ``bootstrap_unit``, ``n`` of them."""

    unit: str | None
    n: Count


class ValiditySection(Measured):
    """The validity profile at matched invariance (``build.validity_section``)."""

    source: Source
    s_floor: Num
    direction_source: str | None
    n: ValidityN
    bootstrap: Bootstrap
    interpretable: bool | None
    single_point: bool | None
    tau: Num
    tau_in_bootstrap: str | None
    metrics: dict[str, Value | None]
    """``S``, ``R``, ``R_scope``, ``R_strength``, ``gap``, ``R_plus``, ``wrong_way_rate``, ``control_flip_rate``."""
    gap_perm_p: Num
    per_axis: dict[str, dict[str, Value]]
    """Per axis (scope, strength): its ``R``, ``R_plus`` and ``wrong_way_rate``."""
    notes: list[str]
    template: dict[str, Any] | None
    scale: dict[str, Any] | None


class CapSet(Block):
    """One label set of the CAP profile: its run, the overall cell and one cell per condition."""

    source: Source
    overall: CellSummary
    conditions: dict[str, CellSummary]


class CapSection(Measured):
    sets: dict[str, CapSet]


class VpRow(Block):
    """One label set (and mode) of the ruler (``build.vp_section``)."""

    set: str
    mode: str
    n: Count
    label_origin: str | None
    a_imp: Num
    a_imp_ci: Interval
    a_imp_member: str | None
    null_p: Num
    null_p_bh: Num
    null_p95: Num
    clears_null: bool | None
    a_hum: Num
    a_hum_ci: Interval
    vp: Num
    resolvable: bool | None
    source: Source
    unit: dict[str, Any] | None = None

    def quantity(self, key: str) -> tuple[Any, Any] | None:
        """``key``'s value and its interval (``<key>_ci``, None where it has none); None: the row has no ``key``."""
        keys = {*type(self).model_fields, *(self.model_extra or {})}
        if key not in keys:
            return None
        return getattr(self, key), getattr(self, f"{key}_ci", None)


class VpSection(Measured):
    """The ruler: one row per label set and mode."""

    rows: list[VpRow]


class Rate(Block):
    """A world arm's recall or specificity with its interval and the units it resampled."""

    value: Num
    ci: Interval
    n: Count
    unit: str | None


class PairedGain(Block):
    """One arm's rate minus another's on the units both scored (b − a), with its paired interval."""

    a: str
    b: str
    metric: str
    a_value: Num
    b_value: Num
    gain: Num
    ci: Interval
    n_pairs: Count
    pair_unit: str | None
    mcnemar_p: Num
    n: Count
    unit: str | None


class WorldSection(Measured):
    """A world run of the judge: its numbers (by path), each arm's rates and the arms' paired gains."""

    source: Source
    numbers: dict[str, Any]
    arms: dict[str, dict[str, Rate]]
    paired: list[PairedGain]


class Regulator(Block):
    """A loop arm's net effect (fixed − broken) with its interval; ``status`` when it took no action."""

    net: Num
    ci: Interval
    status: str | None = None


class LoopSection(Measured):
    """A loop run of the judge: its numbers (by path) and each regulator's net."""

    source: Source
    numbers: dict[str, Any]
    judge2: str | None
    regulators: dict[str, Regulator]
    unit: dict[str, Any] | None = None
    identity: dict[str, Any] | None = None
    judge_unusable: str | None = None

    def n_units(self) -> tuple[str | None, Any]:
        """The loop's recorded unit count (its ``…n_units`` number) and its path in ``numbers``."""
        return next(((k, v) for k, v in self.numbers.items() if k.split(".")[-1] == "n_units"), (None, None))


class ChecklistItem(Block):
    """One §6.1 item: met or not, with its evidence (``short``: the line the card shows)."""

    number: int
    item: str
    ok: bool
    evidence: str
    short: str


class ChecklistSection(Measured):
    items: list[ChecklistItem]


class LedgerUnit(Block):
    """One registered prediction scored: its unit and bar, the verdict and direction, the observed value."""

    unit: str
    bar: str
    verdict: str
    direction: str | None
    value: Num
    ci: Interval


class LedgerSection(Measured):
    """The judge's registered predictions scored against the runs (``build.ledger_section``)."""

    ledger: str
    n_units: int
    n_predictions: int
    verdicts: dict[str, Any]
    directions: dict[str, Any]
    sentence: str
    units: list[LedgerUnit]


class CalibrateN(Block):
    labelled: Count
    unlabelled: Count = None
    positives: Count = None
    negatives: Count = None


class CalibrateSection(Measured):
    """A calibrate run of the judge (``card.calibrate``)."""

    source: Source
    target: str | None
    level: Num
    n: CalibrateN
    estimate: Value
    """The calibrated estimate (PPI++) with its interval (and ``interval``: how it was made)."""
    human: Value
    agreement: dict[str, Value] | None
    tpr: Value | None
    tnr: Value | None
    notes: list[str]


class MigrateQuantity(Block):
    name: str
    label: str
    value: Num
    ci: Interval
    margin: Num
    test: str | None
    status: str
    n: Count
    unit: str | None
    anchors_needed: Any


class MigrateN(Block):
    anchors: Count
    units: Count
    unit: str | None


class MigrateSection(Measured):
    """A migrate run naming the judge (``card.migrate``)."""

    source: Source
    verdict: Literal["EQUIVALENT", "LINKABLE", "NOT_COMPARABLE", "BLIND"]
    reasons: list[str]
    role: Literal["old", "new"]
    old_judge: str
    new_judge: str
    n: MigrateN
    quantities: list[MigrateQuantity]
    linked: list[MigrateQuantity]
    link_hash: str | None


SECTIONS = ("validity", "cap", "vp", "world", "loop", "checklist", "ledger")
"""The sections every card holds, in the order it shows them (calibrate and migrate follow when present)."""

_MEASURED, _UNMEASURED = "measured", "not measured"


def _which(v: Any) -> str | None:
    m = v.get("measured") if isinstance(v, dict) else getattr(v, "measured", None)
    return {True: _MEASURED, False: _UNMEASURED}.get(m) if isinstance(m, bool) else None


def _section(measured: type[BaseModel]) -> Any:
    return Annotated[Annotated[measured, Tag(_MEASURED)] | Annotated[Unmeasured, Tag(_UNMEASURED)],
                     Discriminator(_which, custom_error_type="section",
                                   custom_error_message="a section is a JSON object with 'measured' true or false")]


class Sections(Block):
    """The card's sections, in the order it shows them (calibrate and migrate only when such a run was given)."""

    validity: _section(ValiditySection)
    cap: _section(CapSection)
    vp: _section(VpSection)
    world: _section(WorldSection)
    loop: _section(LoopSection)
    checklist: ChecklistSection
    ledger: _section(LedgerSection)
    calibrate: _section(CalibrateSection) | None = None
    migrate: _section(MigrateSection) | None = None


class Lead(Block):
    """What the card opens on (``build.lead``): per judge section its sentences, the label sets' sentences and the
    status lines."""

    judge: list[tuple[str, list[str]]] | list[str]
    """Per section, its sentences (a card made before they were kept per section: the sentences alone)."""
    label_sets: list[str] = Field(default_factory=list)
    status: list[str] = Field(default_factory=list)

    def findings(self) -> list[tuple[str, list[str]]] | None:
        """Per section of the judge, its sentences (None: a card made before they were kept per section)."""
        return [tuple(x) for x in self.judge] if self.judge and isinstance(self.judge[0], tuple) else None


_TAGS = {_MEASURED, _UNMEASURED}


class CardFile(Block):
    """A validity card: written as ``card.json`` (``to_json``, ``write``), read with one error line naming the file
    and the first key that is not as a card writes it (``of``, ``read``)."""

    schema_version: int = 0
    judge: str
    generated_at: str
    from_: list[str] = Field(alias="from")
    sections: Sections
    retirement: str | None = None
    chosen: list[str] | None = None
    lead: Lead | None = None
    """None: a card made before its lead was recorded (its ``verdict`` is what it opens on)."""
    verdict: list[str]

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The ``card.json`` object: every key read or written, as the card wrote it."""
        return json.loads(json.dumps(self.model_dump(mode="python", by_alias=True, exclude_unset=True)))

    def sections_json(self) -> dict[str, Any]:
        """The sections as ``card.json`` holds them, for a reader by path (a gate quantity no section model names,
        read with the ledger's rules)."""
        return self.to_json()["sections"]

    def write(self, path: Path | str) -> Path:
        from judgeaudit.io import write_json

        write_json(path, self.to_json())
        return Path(path)

    def sources(self, kind: str) -> list[Source]:
        """The runs measured section ``kind`` read (its own, each CAP set's, each ruler row's), each once."""
        sec = self.measured(kind)
        if sec is None:
            return []
        if isinstance(sec, CapSection):
            srcs = [sb.source for sb in sec.sets.values()]
        elif isinstance(sec, VpSection):
            srcs = [r.source for r in sec.rows]
        elif isinstance(sec, ChecklistSection | LedgerSection):
            srcs = []
        else:
            srcs = [sec.source]
        return list({x.path: x for x in srcs}.values())

    def families(self) -> list[str]:
        """The model families the card's runs recorded for its judge (each once, in section order)."""
        return list(dict.fromkeys(src.family for k in SECTIONS for src in self.sources(k) if src.family))

    def measured(self, kind: str) -> Any:
        """Section ``kind`` when it was measured, else None."""
        s = getattr(self.sections, kind, None) if kind in Sections.model_fields else None
        return s if s is not None and s.measured else None

    @classmethod
    def of(cls, data: Any, *, path: Path | str | None = None) -> Self:
        """The typed card of a ``card.json`` object already read (``path`` names it in an error)."""
        if isinstance(data, cls):
            return data
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            loc = [str(p) for p in first["loc"] if p not in _TAGS]
            loc = ["from" if p == "from_" else p for p in loc]
            msg = first["msg"].removeprefix("Value error, ")
            raise InputError(f"malformed card: {msg[0].lower()}{msg[1:]}", path=path,
                             field=".".join(loc) or None) from None

    @classmethod
    def read(cls, path: Path | str) -> Self:
        """A card's ``card.json`` (the file or its folder), its paths as written (``share.localize`` reads them
        against its folder)."""
        p = Path(path)
        p = p / "card.json" if p.is_dir() else p
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("file not found", path=p) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputError(f"cannot read this card ({e})", path=p) from None
        return cls.of(data, path=p)

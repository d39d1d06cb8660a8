"""A calibrate run's ``result.json`` as a typed, versioned record: what ``judgeaudit calibrate`` writes, and what
its report and the card read back through ``CalibrateFile`` instead of by literal key, so that a key renamed in
the writer is a validation error at the reader, not an empty value on a card.

The shape follows the other analyses' (``analyses.validity.schema``): the file holds the run's block
(``calibrate``) and the judge it calibrated. The block holds each interval (PPI++, PPI, human-only, judge-only,
and with ``--strata`` the stratified PPI++) as a ``CalibrateEstimate``, the Rogan–Gladen correction and the
agreement with the humans where the run computed them, and what the run read (verdicts, labels, the verdict
value, the threshold). Every key a run writes is kept (``extra="allow"``): the typed fields are the ones
readers use.

``schema_version``: 0 is a file written before the version was recorded (the same keys, read the same way);
1 adds ``schema_version``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from judgeaudit.analyses.validity.schema import ResultReader

SCHEMA_VERSION = 1
"""The version this code writes."""

Interval = tuple[float | None, float | None] | None

_KEEP = ConfigDict(extra="allow", ser_json_inf_nan="constants", populate_by_name=True, serialize_by_alias=True)


class CalibrateEstimate(BaseModel):
    """One row of the estimates (``ppi``, ``ppi_plain``, ``human``, ``naive``): the estimate, its interval and
    width, the items it used; for the PPI rows λ (``lambda``), and for the rows a normal interval may be widened
    how the interval was formed (``interval``) and the normal one (``normal_ci``)."""

    model_config = _KEEP
    estimate: float | None
    ci: Interval
    width: float | None
    n: int
    lam: float | None = Field(default=None, alias="lambda")
    engine: str | None = None
    interval: str | None = None
    normal_ci: Interval = None


class Stratum(BaseModel):
    """One stratum of the stratified PPI++ (``stratified.strata[i]``)."""

    model_config = _KEEP
    stratum: str
    weight: float
    n_labelled: int
    n_unlabelled: int
    estimate: float | None
    se: float | None
    support: float | None
    ci_bonferroni: Interval
    random_subset_p: float | None


class Stratified(BaseModel):
    """The stratified PPI++ (``--strata``): Σ_k w_k·θ̂_k with its interval, over ``strata``."""

    model_config = _KEEP
    method: str
    estimate: float | None
    ci: Interval
    width: float | None
    interval: str
    n: int
    strata: list[Stratum]
    random_subset_flagged: bool


class RoganGladenBlock(BaseModel):
    """The Rogan–Gladen correction of a binary judge, TPR and TNR with their exact intervals and the labelled
    items' 2×2 table (``tp``, ``fn``, ``tn``, ``fp``)."""

    model_config = _KEEP
    method: str
    estimate: float | None
    ci: Interval
    width: float | None
    q: float | None
    tpr: float | None
    tnr: float | None
    tpr_ci: Interval
    tnr_ci: Interval
    rates_interval: str
    table: dict[str, int]
    n_labelled: int
    n_unlabelled: int
    n_boot: int
    undefined_resamples: int
    note: str | None

    @property
    def positives(self) -> int:
        """The labelled positives (TPR's denominator)."""
        return self.table["tp"] + self.table["fn"]

    @property
    def negatives(self) -> int:
        """The labelled negatives (TNR's denominator)."""
        return self.table["tn"] + self.table["fp"]


class ConstantPredictor(BaseModel):
    """The predictor that always gives the humans' most common label (κ = 0)."""

    model_config = _KEEP
    label: str
    raw_agreement: float
    cohen_kappa: float


class AgreementBlock(BaseModel):
    """The judge's agreement with the humans on the labelled items: Cohen's κ (None where undefined) and raw
    agreement with their intervals, against the constant predictor."""

    model_config = _KEEP
    cohen_kappa: float | None
    cohen_kappa_ci: Interval
    cohen_kappa_note: str | None
    raw_agreement: float
    raw_agreement_ci: Interval
    base_rate: dict[str, float]
    constant_predictor: ConstantPredictor
    beats_constant: bool
    n: int


class NEff(BaseModel):
    """``n_eff``: the human labels the judge is worth (None where the intervals were widened)."""

    model_config = _KEEP
    value: float | None
    own: bool
    per_label: float | None


class Support(BaseModel):
    """The labels' support on the scale, its minimum and the interval the normal ones were widened to (None)."""

    model_config = _KEEP
    value: float
    min: float
    widened_to: str | None


class RandomSubset(BaseModel):
    """The check that the labels are a uniformly random subset of the judged items."""

    model_config = _KEEP
    test: str
    p: float | None
    alpha: float
    flagged: bool


class CalibrateRun(BaseModel):
    """The run's block (``calibrate``): every estimate of the target and what the run read."""

    model_config = _KEEP
    target: str
    definition: str
    level: float
    n_labelled: int
    n_unlabelled: int
    ppi: CalibrateEstimate
    ppi_plain: CalibrateEstimate
    human: CalibrateEstimate
    naive: CalibrateEstimate
    n_eff: NEff
    scale: tuple[float, float]
    support: Support
    ppi_width_bound: float | None
    rogan_gladen: RoganGladenBlock | None
    agreement: AgreementBlock | None
    random_subset: RandomSubset | None
    definitions: dict[str, str]
    notes: list[str]
    stratified: Stratified | None = None
    """Written by a run with ``--strata`` only."""
    judge: str
    verdicts: str
    labels: str
    verdict_value: str
    threshold: float | None
    seed: int
    n_boot: int
    unusable_verdicts: int
    labelled_without_verdict: list[str]

    ROWS: ClassVar[tuple[str, ...]] = ("stratified", "ppi", "ppi_plain", "human", "naive", "rogan_gladen")
    """The rows of the estimates table, in the report's order."""


class CalibrateFile(ResultReader):
    """A calibrate run's ``result.json``."""

    WHAT: ClassVar[str] = "calibrate"

    model_config = _KEEP
    schema_version: int = 0
    calibrate: CalibrateRun
    judge: str
    inputs: dict[str, Any] | None = None
    """What the run read, with hashes (``runinfo``)."""
    run_id: str | None = None
    created_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``result.json`` object: every key read or written, under the names the run wrote them."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

"""A world run's ``result.json`` as a typed, versioned record: what the run writes, and what the card, the report
and other readers read back through ``WorldFile`` instead of by literal key, so that a key renamed in the writer is
a validation error at the reader, not an empty value on a card.

The shape follows validity's (``analyses.validity.schema``) and Inspect AI's log types: per judge and arm the rates
(``WorldArm``), the paired gains of one arm over another (``WorldPaired``, with the exact McNemar test of its
stratum), the Spearman rows, and each judge's ``JudgeIdentity`` as the run recorded it. A quantity is read as an
``Estimate`` whose ``WorldUnit`` says what its interval resampled: the source items (``group``) holding a unit
of the quantity's denominator, and which answers those are — the defective ones for recall, the clean ones for
specificity and false alarms, both for balanced accuracy, the flagged ones for precision — and how many. Every
key a run writes is kept (``extra="allow"``): the typed fields are the ones readers use.

``schema_version``: 0 is a file written before the version was recorded (the same keys, read the same way);
1 adds ``schema_version`` and ``identities`` (each judge's identity, by judge id).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, model_validator

from judgeaudit.analyses.validity.schema import Block, Estimate, JudgeIdentity, ResultReader, Unit

SCHEMA_VERSION = 1
"""The version this code writes."""

RATES = ("recall", "specificity", "false_alarms_per_clean", "precision", "balanced_accuracy")
"""The rates of an arm that carry an interval (``ci.<name>``)."""

ANSWERS = {"recall": "defective", "specificity": "clean", "false_alarms_per_clean": "clean",
           "precision": "flagged", "balanced_accuracy": "defective and clean"}
"""Which answers (units) a rate's denominator counts: what its interval's resampled source items hold."""

LEVEL = 0.95
"""The confidence level of every world interval (percentile bootstrap, ``stats.paired``)."""

Interval = tuple[float | None, float | None]


class WorldUnit(Unit):
    """What a world interval resampled: ``resampled`` (the source item, ``group``), ``n`` of them holding a unit
    of the quantity's denominator, ``resamples`` draws at ``level``; ``answers`` which units the denominator
    counts (``defective``, ``clean``, …) and ``n_answers`` how many of them were scored (None where the run
    records no such count: precision's flagged units)."""

    answers: str
    n_answers: int | None


class Bootstrap(Block):
    """The unit a block's intervals resampled and, per rate (or for the one rate of a paired row), how many."""

    unit: str
    n: dict[str, int] | int | None


class McNemar(Block):
    """The exact McNemar test on a paired row's stratum (``b``, ``c``: the discordant units, ``b_is``/``c_is``)."""

    b: int
    c: int
    p: float | None
    stratum: str
    units: int
    b_is: str
    c_is: str
    log10_p: float | None = None


class KindRecall(Block):
    """Recall of the defective units of one kind (``recall_by_kind.<kind>``), found of ``n``."""

    n: int
    found: int
    recall: float | None
    ci: Interval | None = None


class Found(Block):
    """The defective units with no kind the corpus places (``kind_unplaced``): found of ``n``."""

    n: int
    found: int


class SpanScores(Block):
    """Marked segments found and complaints on target through one matcher (``spans.strict``, ``.generous``)."""

    segments: int
    found: int
    complaints: int
    on_target: int
    undecided_segments: int
    undecided_complaints: int
    recall: float | None
    precision: float | None


class MatcherAudit(Block):
    """The permuted control: complaints paired with another answer's segment, and how many the matcher
    credited (``false_match_rate``)."""

    complaints: int
    false_matches: int
    undecided: int
    false_match_rate: float | None


class CharOverlap(Block):
    """RAGTruth's character-level precision, recall and F1 of the located quotes, and the quotes not found."""

    precision: float | None
    recall: float | None
    f1: float | None
    unlocated_quotes: int


class CharSpecificity(Block):
    """The share of the error-free answers' characters no located quote covers, with its interval."""

    answers: int
    specificity: float | None
    ci: Interval | None


class Disagreement(Block):
    """Of the pairs both matchers judged, how many they credited differently."""

    pairs: int
    differ: int


class MatcherAgreement(Block):
    """Two matchers on the same pairs: agreement, Cohen's κ and the share each credited."""

    pairs: int
    agreement: float | None
    kappa: float | None
    first_credits: float | None
    second_credits: float | None


class Spans(Block):
    """Complaints against marked segments (``arms.<arm>.spans``): through the strict matcher (at
    ``strict_threshold``), its permuted control, character overlap and specificity; with a generous matcher its
    scores, control and disagreement with the strict one; with a second matcher its agreement with the first."""

    strict: SpanScores
    strict_threshold: float
    permuted_audit_strict: MatcherAudit
    char_overlap: CharOverlap
    char_specificity: CharSpecificity
    generous: SpanScores | None = None
    disagreement: Disagreement | None = None
    permuted_audit_generous: MatcherAudit | None = None
    second_matcher_agreement: MatcherAgreement | None = None

    @model_validator(mode="after")
    def _generous_blocks(self) -> Spans:
        if self.generous is not None:
            for name in ("disagreement", "permuted_audit_generous"):
                if getattr(self, name) is None:
                    raise ValueError(f"spans through a generous matcher have no {name!r}")
        return self


class Matched(Block):
    """The rates of one unit through one matcher (``matched["<unit>:<matcher>"]``), its undecided units apart."""

    n: int
    undecided: int
    recall: float | None = None
    specificity: float | None = None
    balanced_accuracy: float | None = None
    false_alarms_per_clean: float | None = None
    ci: dict[str, Interval | None]


class WorldArm(Block):
    """One judge's rates under one arm (``judges.<id>.arms.<arm>``)."""

    n: int
    n_defective: int
    n_clean: int
    no_verdict: int
    answers: int
    ties: int
    parse_failures: int
    recall: float | None = None
    specificity: float | None = None
    false_alarms_per_clean: float | None = None
    precision: float | None = None
    balanced_accuracy: float | None = None
    ci: dict[str, Interval | None] = Field(default_factory=dict)
    bootstrap: Bootstrap | None = None
    """Absent when the arm scored no unit."""
    unit: str
    scored: str
    recall_by_kind: dict[str, KindRecall] | None = None
    kind_unplaced: Found | None = None
    spans: Spans | None = None
    matched: dict[str, Matched] | None = None


class WorldJudge(Block):
    """One judge's block (``judges.<id>``)."""

    arms: dict[str, WorldArm]
    template: dict[str, Any] | None = None


class WorldPaired(Block):
    """The gain ``b − a`` of one metric on the units both arms scored (``paired[i]``)."""

    judge: str
    a: str
    b: str
    metric: str
    unit: str | None
    matcher: str | None
    n: int
    bootstrap: Bootstrap
    a_value: float | None
    b_value: float | None
    gain: float | None
    ci: Interval | None
    mcnemar: McNemar | None


class SpearmanRow(Block):
    """One rank correlation over answers (``spearman[i]``): a per-answer quantity (``gain`` of ``b`` over ``a``,
    or ``false_alarms`` in arm ``a``) against a covariate, with its permutation p."""

    judge: str
    quantity: str
    a: str
    b: str | None
    covariate: str
    answers: int
    missing_covariate: int
    rho: float | None
    p: float | None
    n_perm: int
    exact: bool
    alternative: str


class Factorial(Block):
    """A factorial run's cells and each factor's exact Shapley value per metric (``factorial``)."""

    factors: list[str]
    cells: list[dict[str, Any]]
    shapley: dict[str, dict[str, float | None]]


class PairedEstimate(Estimate):
    """A paired gain ``b − a`` of ``metric`` with its interval, its unit, the units it pairs and its McNemar
    test."""

    a: str
    b: str
    metric: str
    n_pairs: int
    pair_unit: str | None
    a_value: float | None
    b_value: float | None
    mcnemar: McNemar | None


class WorldAnalysis(ResultReader):
    """What the world analysis computes (``analyses.world.analysis.analyse``): the rates per judge and arm, the
    paired gains and the Spearman rows (a factorial adds ``factorial`` and ``shapley``)."""

    WHAT: ClassVar[str] = "world"

    model_config = ConfigDict(extra="allow")
    form: str
    arms: list[str]
    tie_rule: str
    n_boot: int
    seed: int
    judges: dict[str, WorldJudge]
    paired: list[WorldPaired]
    spearman: list[SpearmanRow]
    factorial: Factorial | None = None
    shapley: dict[str, Any] | None = None
    identities: dict[str, JudgeIdentity] | None = None
    """Each judge as the run recorded it (schema 1)."""

    def arm(self, judge: str, arm: str) -> WorldArm:
        return self.judges[judge].arms[arm]

    def unit(self, judge: str, arm: str, name: str) -> WorldUnit:
        """What ``judge``'s interval of ``name`` under ``arm`` resampled, and which answers, how many."""
        a = self.arm(judge, arm)
        n = a.bootstrap.n if a.bootstrap is not None and isinstance(a.bootstrap.n, dict) else {}
        answers = ANSWERS[name]
        n_answers = {"defective": a.n_defective, "clean": a.n_clean, "defective and clean": a.n}.get(answers)
        return WorldUnit(resampled=a.bootstrap.unit if a.bootstrap is not None else "group", n=n.get(name, 0),
                         resamples=self.n_boot, level=LEVEL, answers=answers, n_answers=n_answers)

    def estimate(self, judge: str, arm: str, name: str) -> Estimate:
        """``judge``'s ``name`` (one of ``RATES``) under ``arm``, with its interval and unit."""
        if name not in RATES:
            raise KeyError(f"{name!r} is not a rate of a world run ({', '.join(RATES)})")
        a = self.arm(judge, arm)
        return Estimate(name=f"{arm}.{name}", value=getattr(a, name), ci=a.ci.get(name),
                        unit=self.unit(judge, arm, name))

    def gains(self, judge: str, *, matcher: str | None = None) -> list[PairedEstimate]:
        """Every paired gain of ``judge`` (those of the answer-level table, or of one ``matcher``'s levels)."""
        return [self._gain(p) for p in self.paired if p.judge == judge and p.matcher == matcher]

    def gain(self, judge: str, a: str, b: str, name: str) -> PairedEstimate:
        """The gain ``b − a`` of ``name`` on the units both arms scored (no matcher)."""
        for p in self.paired:
            if (p.judge, p.a, p.b, p.metric, p.matcher) == (judge, a, b, name, None):
                return self._gain(p)
        raise KeyError(f"the world run has no paired {b} − {a} {name} of {judge}")

    def _gain(self, p: WorldPaired) -> PairedEstimate:
        answers = ANSWERS.get(p.metric, "all")
        stratum = p.mcnemar.units if p.mcnemar is not None else None
        n = p.bootstrap.n if isinstance(p.bootstrap.n, int) else 0
        unit = WorldUnit(resampled=p.bootstrap.unit, n=n, resamples=self.n_boot, level=LEVEL, answers=answers,
                         n_answers=stratum)
        return PairedEstimate(name=f"{p.b}-{p.a}.{p.metric}", value=p.gain, ci=p.ci, unit=unit, a=p.a, b=p.b,
                              metric=p.metric, n_pairs=p.n,
                              pair_unit=p.unit, a_value=p.a_value, b_value=p.b_value, mcnemar=p.mcnemar)

    def identity(self, judge: str) -> JudgeIdentity:
        """The judge as the run recorded it (a file of schema 0 records only its template)."""
        if self.identities is not None and judge in self.identities:
            return self.identities[judge]
        return JudgeIdentity(template=self.judges[judge].template)


class Thresholds(Block):
    """A structural judge's thresholds (``tau_s``, ``tau_c``; ``top_k`` where it ran with one)."""

    tau_s: float
    tau_c: float
    top_k: int | None = None


class DevSplit(Block):
    """The development split the structural defaults were chosen on (``structural.graph.DEV_SPLIT``)."""

    corpus: str
    share: float
    seed: int
    backend: str
    weak_backend: bool | None = None


class DevResult(Block):
    """How the defaults did on the development split, and along each threshold (``structural.graph.DEV_RESULT``)."""

    n_groups: int
    balanced_accuracy: float | None
    grid_range: tuple[float, float]
    along_tau_s: dict[str, float | None]
    along_tau_c: dict[str, float | None]


class StructuralCalibration(Block):
    """What a run records of a structural judge's thresholds (``calibration.<judge>``,
    ``structural.calibrate.calibration_record``): the values used, the defaults, whether they are the defaults,
    whether its backend is weak, and where and how well the defaults were chosen."""

    parameters: Thresholds
    weak_backend: bool
    defaults: Thresholds
    at_defaults: bool
    dev_split: DevSplit
    dev_result: DevResult


class Split(Block):
    """Which items of the structural judge's development split the run kept (``split``)."""

    split: str
    dev_items_in_run: int
    dev_items_left_out: int


class CallCounts(Block):
    """One judge's calls in one arm (``calls_by_arm.<judge>.<arm>``)."""

    calls: int
    failed_calls: int
    parse_failures: int
    usable: int
    reasons: list[str]


class SetProvenance(Block):
    """Where a loaded world set came from (``datasets.world.WorldSet.provenance``): the files read and the source
    records left out, by reason."""

    files: list[str]
    excluded: dict[str, int]


class Provenance(Block):
    """What a world run judged (``provenance``): the set as given, its items and the judges; ``set_provenance``
    is None where the items were passed in rather than loaded from a set."""

    set: str | None
    items: int
    answers_defective: int
    judges: list[str]
    set_provenance: SetProvenance | None

    def set_files(self) -> dict[str, str]:
        """The data files the set read, by input name (``data:0``, ``data:1``, … as a run records them)."""
        files = self.set_provenance.files if self.set_provenance is not None else []
        return {f"data:{i}": f for i, f in enumerate(files)}


class WorldFile(WorldAnalysis):
    """A world run's ``result.json``: the analysis and what the run recorded beside it (``world run``; ``world
    factorial`` adds ``factorial`` and ``shapley``)."""

    schema_version: int = 0
    votes: int
    temperature: float
    matcher_judge: str | None
    matcher_undecided: int | None
    matcher_pairs: int | None
    second_matcher_judge: str | None
    second_matcher_undecided: int | None
    provenance: Provenance
    split: Split
    calibration: dict[str, StructuralCalibration]
    calls: dict[str, dict[str, Any]]
    calls_by_arm: dict[str, dict[str, CallCounts]]
    inputs: dict[str, Any] | None = None
    """What the run read, with hashes (``runinfo``)."""
    run_id: str | None = None
    created_at: str | None = None

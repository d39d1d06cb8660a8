"""Records: the typed rows that flow between data sets, judges, the call store and analyses (the world
items of blind-spot §3.1 among them).

Every analysis takes and returns pandas tables whose columns are the fields of these models
(see the ``*_COLUMNS`` tuples). Pydantic models validate single rows at the edges (file
readers, the judge backends); analyses work on the table forms.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:   # pandas is imported by the table forms only: the command line starts without it
    import pandas as pd

VerdictForm = Literal["graded", "pairwise", "defects", "generate", "label", "sentences", "typed", "score"]
"""graded: a score on a fixed scale; pairwise: A/B/tie with a rationale; defects: quoted spans;
generate: free text (``prompt`` is sent as is, the completion is ``Verdict.raw``) for generators
and verifiers that build probes. The world forms (blind-spot §3): label: is the output defective
(``Verdict.label``); sentences: one defective/clean label per unit (``Verdict.unit_labels``);
typed: the ids of the defect types present (``Verdict.defect_ids``); score: a 1–5 score."""
Choice = Literal["A", "B", "tie"]
Direction = Literal["edited", "original", "neither", "cannot_tell"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Item(_Record):
    """One text to be graded on its own (per-item mode)."""

    item_id: str
    text: str
    evidence: str | None = None
    criterion: str | None = None
    group: str | None = None
    domain: str | None = None
    label: Any = None
    meta: dict[str, Any] = Field(default_factory=dict)


class Probe(_Record):
    """A base item and one intervention of it (construct-validity.txt §2, Def. 1; App. B).

    The graded item for the original has ``item_id = base_id``; the edited text has
    ``item_id = probe_id``.
    """

    probe_id: str
    base_id: str
    group: str
    domain: str
    criterion: str
    evidence: str
    original: str
    edited: str
    slot: str
    labels: list[Direction] | None = None
    intended_direction: Direction | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class PairwiseItem(_Record):
    """Two responses to one prompt; ``label`` is the side the set prefers."""

    pair_id: str
    prompt: str
    response_a: str
    response_b: str
    label: Choice | None = None
    group: str | None = None
    source_set: str | None = None
    subset: str | None = None
    condition_a: str | None = None
    condition_b: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class JudgeRequest(_Record):
    """One call to a judge. ``epoch`` indexes repeated votes of the same request.

    For the world analyses ``text`` is the judged output and ``evidence`` its world (source
    passages, article, knowledge, instruction, problem), kept apart so that arms differ only in
    the world block; ``question`` and ``reference`` are optional context, ``units`` the segments
    (sentences, claims, constraint ids) a ``sentences``/``typed`` report labels.
    """

    request_id: str
    form: VerdictForm = "graded"
    text: str | None = None
    evidence: str | None = None
    criterion: str | None = None
    question: str | None = None
    reference: str | None = None
    units: list[str] | None = None
    prompt: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    epoch: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)


class Defect(_Record):
    """A reported defect: the quoted span, why, and optionally a citation, the unit it concerns and
    a certificate (the evidence that fired, for judges that can show it)."""

    span: str
    reason: str
    citation: str | None = None
    unit_id: str | None = None
    certificate: dict[str, Any] | None = None


class Verdict(_Record):
    """One judge call's outcome, as stored in the call store and in verdict tables."""

    call_key: str
    request_id: str
    judge_id: str
    model: str | None = None
    family: str | None = None
    form: VerdictForm = "graded"
    epoch: int = 0
    raw: str | None = None
    score: float | None = None
    score_dist: list[float] | None = None
    score_source: Literal["logprobs", "distribution", "parsed", "reference", "replay"] | None = None
    choice: Choice | None = None
    rationale: str | None = None
    defects: list[Defect] | None = None
    label: bool | None = None
    unit_labels: list[bool] | None = None
    defect_ids: list[str] | None = None
    parse_ok: bool = False
    error: str | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    provider: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    timestamp: str = Field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat())

    @property
    def ok(self) -> bool:
        """True when the call completed (a parse failure is still a completed call)."""
        return self.error is None


ITEM_COLUMNS = tuple(Item.model_fields)
PROBE_COLUMNS = tuple(Probe.model_fields)
PAIRWISE_COLUMNS = tuple(PairwiseItem.model_fields)
VERDICT_COLUMNS = tuple(Verdict.model_fields)


def to_frame(records: list[BaseModel], columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Table form of a list of records (one row per record, columns in field order)."""
    import pandas as pd

    rows = [r.model_dump(mode="json") for r in records]
    if columns is None and records:
        columns = tuple(type(records[0]).model_fields)
    return pd.DataFrame(rows, columns=list(columns or ()))


def verdicts_frame(verdicts: list[Verdict]) -> pd.DataFrame:
    """The verdict table: one row per call, columns ``VERDICT_COLUMNS``."""
    return to_frame(verdicts, VERDICT_COLUMNS)


def probes_frame(probes: list[Probe]) -> pd.DataFrame:
    """The probe table: one row per (base item, intervention), columns ``PROBE_COLUMNS``."""
    return to_frame(probes, PROBE_COLUMNS)


# ---- world items (blind-spot §3.1) ---------------------------------------------------------------
# World items: an output to be judged, kept apart from the world it must be judged against.
#
# A world item is one judged output (an answer, a summary, a response to an instruction, a worked
# solution) with its world (the knowledge, article, instruction or problem that decides whether the
# output is defective), an optional question and reference, and the gold defects: per item
# (``defective``), per unit (``units``: sentences, claims or constraints with their own gold label)
# and as character spans of the output (``spans``). Adapters in ``judgeaudit.datasets`` build these
# from each corpus's own files; the world analyses take their table form (``world_items_frame``).


class Span(_Record):
    """A gold error span of the output: characters ``[start, end)`` and the error type, if known."""

    start: int
    end: int
    label: str | None = None


class Unit(_Record):
    """A judged unit of the output: a sentence, a claim or a constraint.

    ``start``/``end`` locate a sentence or claim in the output (None for a constraint);
    ``defective`` is its gold label (None where the corpus does not determine it); ``kind`` is
    the defect or instruction type id (an IFEval instruction id, a FRANK error category).
    """

    unit_id: str
    text: str
    start: int | None = None
    end: int | None = None
    defective: bool | None = None
    kind: str | None = None


class WorldItem(_Record):
    """One judged output with its world (blind-spot §3.1).

    Attributes:
        item_id: unique id of this judged output.
        task: the task family (``qa``, ``summarization``, ``instruction``, ``math``, ``rag``,
            ``claim``), which the arms use to pick a placebo world of the same task.
        output: the text the judge evaluates.
        world: what the output must be judged against (None where the corpus has none).
        question: the user request or question, when separate from the world.
        reference: a reference answer or summary, when the corpus has one.
        defective: the gold per-item label (None when only unit labels are known).
        units: the judged units with their gold labels.
        spans: gold error spans in ``output``.
        group: the source item (e.g. the HaluEval question whose right and hallucinated answers
            are two world items), the unit of resampling for paired statistics.
        source_set: the corpus and part the item came from.
        meta: provenance details (e.g. which hallucinated variant was used).
    """

    item_id: str
    task: str
    output: str
    world: str | None = None
    question: str | None = None
    reference: str | None = None
    defective: bool | None = None
    units: list[Unit] = Field(default_factory=list)
    spans: list[Span] = Field(default_factory=list)
    group: str | None = None
    source_set: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


WORLD_ITEM_COLUMNS = tuple(WorldItem.model_fields)


def world_items_frame(items: list[WorldItem]) -> pd.DataFrame:
    """The world item table: one row per judged output, columns ``WORLD_ITEM_COLUMNS``."""
    return to_frame(items, WORLD_ITEM_COLUMNS)


def kind_ids(kind: str | None) -> list[str]:
    """The type ids a unit's ``kind`` names (a comma-separated kind names several)."""
    return [k.strip() for k in (kind or "").split(",") if k.strip()]

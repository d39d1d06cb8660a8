"""World items: an output to be judged, kept apart from the world it must be judged against.

A world item is one judged output (an answer, a summary, a response to an instruction, a worked
solution) with its world (the knowledge, article, instruction or problem that decides whether the
output is defective), an optional question and reference, and the gold defects: per item
(``defective``), per unit (``units``: sentences, claims or constraints with their own gold label)
and as character spans of the output (``spans``). Adapters in ``judgeaudit.datasets`` build these
from each corpus's own files; the world analyses take their table form (``world_items_frame``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import Field

from judgeaudit.records import _Record, to_frame


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

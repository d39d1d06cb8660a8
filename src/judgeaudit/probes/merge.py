"""Merge exported annotation answers into a probe file (construct-validity.txt §4.2, Appendix C).

``labels`` becomes the annotators' directions in a fixed annotator order (the study's ordinal
order a1, a2, a3, ... unless given), which is what the validity analysis consumes (majority of
three, no tie-break). ``meta`` keeps, in the same order, ``facts_differ`` (one bool per annotator),
``annotation_basis`` and ``annotation_note``, plus ``annotators`` and the recorded presentation
(``edited_side``: the side the edit was shown on). A probe missing an answer from any annotator
gets ``labels = None`` and ``meta["annotation_missing"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.records import Probe

_DIRECTIONS = ("edited", "original", "neither", "cannot_tell")
_REQUIRED = ("probe_id", "annotator_id", "direction", "same_facts")


@dataclass(frozen=True)
class MergeSummary:
    annotators: list[str]
    n_probes: int
    n_complete: int
    n_incomplete: int
    unknown_probe_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def merge_labels(probes: Sequence[Probe], answers: Sequence[dict[str, Any]],
                 annotators: Sequence[str] | None = None) -> tuple[list[Probe], MergeSummary]:
    """Write each probe's labels (fixed annotator order) and annotation meta from exported answers.

    Args:
        probes: the probe set the study was built from.
        answers: rows of ``judgeaudit probes annotate export`` (probe_id, annotator_id, ordinal,
            direction, basis, note, same_facts, edited_side).
        annotators: the fixed order; default: by the study ordinal, then by id.

    Raises ``InputError`` on a row missing a field or carrying an unknown direction, or when an
    answer names a probe absent from ``probes`` (a study built from another file).
    """
    for n, row in enumerate(answers, 1):
        for f in _REQUIRED:
            if f not in row:
                raise InputError("required field is missing", line=n, field=f)
        if row["direction"] not in _DIRECTIONS:
            raise InputError(f"unknown direction {row['direction']!r}", line=n, field="direction")
    if annotators is None:
        order = {}
        for row in answers:
            order.setdefault(row["annotator_id"], row.get("ordinal", 0))
        annotators = sorted(order, key=lambda a: (order[a] if order[a] is not None else 0, a))
    annotators = list(annotators)
    by_probe: dict[str, dict[str, dict[str, Any]]] = {}
    for row in answers:
        by_probe.setdefault(row["probe_id"], {})[row["annotator_id"]] = row
    known = {p.probe_id for p in probes}
    unknown = sorted(set(by_probe) - known)
    if unknown:
        raise InputError(f"{len(unknown)} answer(s) name probes not in this probe file, e.g. {unknown[0]!r}: "
                         "was the study built from another file?", field="probe_id")
    out: list[Probe] = []
    complete = 0
    for p in probes:
        got = by_probe.get(p.probe_id, {})
        meta = dict(p.meta)
        missing = [a for a in annotators if a not in got]
        rows = [got.get(a) for a in annotators]
        meta.update({
            "annotators": annotators,
            "facts_differ": [None if r is None else (not bool(r["same_facts"])) for r in rows],
            "annotation_basis": [None if r is None else r.get("basis", "") for r in rows],
            "annotation_note": [None if r is None else r.get("note", "") for r in rows],
        })
        sides = {r.get("edited_side") for r in rows if r is not None and r.get("edited_side")}
        if sides:
            meta["presentation"] = {"edited_side": sides.pop()}
        if missing or not got:
            meta["annotation_missing"] = missing
            out.append(p.model_copy(update={"labels": None, "meta": meta}))
            continue
        meta.pop("annotation_missing", None)
        complete += 1
        out.append(p.model_copy(update={"labels": [r["direction"] for r in rows], "meta": meta}))
    return out, MergeSummary(annotators=annotators, n_probes=len(probes), n_complete=complete,
                             n_incomplete=len(probes) - complete, unknown_probe_ids=unknown)

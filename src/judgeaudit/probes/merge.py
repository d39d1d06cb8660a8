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
from pathlib import Path
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


def check_answers(answers: Sequence[dict[str, Any]], *, path: str | Path | None = None,
                  lines: Sequence[int] | None = None) -> None:
    """Every answer row well-typed, and one answer per (probe, annotator).

    ``probe_id``, ``annotator_id`` and ``direction`` are strings (a direction from ``Direction``),
    ``same_facts`` a real boolean (``"no"`` is not false), ``basis``/``note`` strings or null,
    ``ordinal`` a whole number or null. Errors name the file (``path``), the line (``lines[i]``,
    default the row number) and the field; a repeated answer names both lines."""
    lines = list(lines) if lines is not None else list(range(1, len(answers) + 1))
    seen: dict[tuple[str, str], int] = {}
    for n, row in zip(lines, answers, strict=True):
        for f in _REQUIRED:
            if f not in row:
                raise InputError("required field is missing", path=path, line=n, field=f)
        for f in ("probe_id", "annotator_id"):
            if not isinstance(row[f], str) or not row[f]:
                raise InputError(f"must be a non-empty string, got {row[f]!r}", path=path, line=n, field=f)
        if row["direction"] not in _DIRECTIONS:
            raise InputError(f"unknown direction {row['direction']!r}", path=path, line=n, field="direction")
        if not isinstance(row["same_facts"], bool):
            raise InputError(f"must be true or false, got {row['same_facts']!r}", path=path, line=n,
                             field="same_facts")
        for f in ("basis", "note", "edited_side"):
            if row.get(f) is not None and not isinstance(row[f], str):
                raise InputError(f"must be a string, got {row[f]!r}", path=path, line=n, field=f)
        ordinal = row.get("ordinal")
        if ordinal is not None and (isinstance(ordinal, bool) or not isinstance(ordinal, int)):
            raise InputError(f"must be a whole number, got {ordinal!r}", path=path, line=n, field="ordinal")
        key = (row["probe_id"], row["annotator_id"])
        if key in seen:
            raise InputError(f"a second answer of {key[1]!r} to probe {key[0]!r} (first on line {seen[key]})",
                             path=path, line=n, field="annotator_id")
        seen[key] = n


def read_answers(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an answers file (``probes annotate export``), checked by ``check_answers``."""
    from judgeaudit.io import iter_jsonl

    numbered = list(iter_jsonl(path))
    rows = [obj for _, obj in numbered]
    check_answers(rows, path=path, lines=[n for n, _ in numbered])
    return rows


def merge_labels(probes: Sequence[Probe], answers: Sequence[dict[str, Any]],
                 annotators: Sequence[str] | None = None) -> tuple[list[Probe], MergeSummary]:
    """Write each probe's labels (fixed annotator order) and annotation meta from exported answers.

    Args:
        probes: the probe set the study was built from.
        answers: rows of ``judgeaudit probes annotate export`` (probe_id, annotator_id, ordinal,
            direction, basis, note, same_facts, edited_side).
        annotators: the fixed order; default: by the study ordinal, then by id. Each at most once.

    Raises ``InputError`` on a row that ``check_answers`` refuses, on an annotator named twice in
    ``annotators``, or when an answer names a probe absent from ``probes`` (a study built from
    another file).
    """
    check_answers(answers)
    if annotators is not None:
        twice = sorted({a for a in annotators if list(annotators).count(a) > 1})
        if twice:
            raise InputError(f"annotator {twice[0]!r} is listed twice (their vote would count twice)",
                             field="--annotators")
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

"""Reading probe files (construct-validity.txt §4.1–4.2, Appendix B–C).

A probe file is JSONL, one line per (base item, intervention)::

    {"probe_id": "geo-01-quantifier_strengthening", "base_id": "geo-01", "group": "doc-geo-01",
     "domain": "geoscience", "criterion": "...", "evidence": "...", "original": "...",
     "edited": "...", "slot": "quantifier_strengthening",
     "labels": ["edited", "edited", "neither"],          # optional: annotators' direction labels
     "intended_direction": "edited"}                      # optional: the slot's designed direction

Every line of one base item must carry the same ``original``, ``evidence``, ``criterion``,
``domain`` and ``group``. Errors name the file, the line and the field.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl, validation_message
from judgeaudit.probes.taxonomy import SLOT_BY_NAME, intended_direction
from judgeaudit.records import Probe

BUNDLED = "bundled"
"""The name that stands for the bundled probe set wherever a probe path is expected."""

_BASE_FIELDS = ("original", "evidence", "criterion", "domain", "group")


def bundled_probes_path() -> Path:
    """Path of the probe set shipped with the package (``judgeaudit/probes/data/bundled.jsonl``)."""
    return Path(str(resources.files("judgeaudit.probes").joinpath("data", "bundled.jsonl")))


def read_probes(path: str | Path) -> list[Probe]:
    """Read and validate a probe JSONL file.

    Checks, each raising ``InputError`` with file, line and field: malformed JSON; a record that
    does not fit ``records.Probe`` (missing field, unknown field, a label outside
    ``edited|original|neither|cannot_tell``); an unknown slot; an ``intended_direction`` that
    contradicts the frozen taxonomy; a duplicate ``probe_id``; a ``probe_id`` equal to some
    ``base_id`` (the two name graded requests, so they must not collide); a base item whose
    original, evidence, criterion, domain or group differs between its lines.

    Args:
        path: the JSONL file, or ``"bundled"`` for the bundled probe set.

    Returns:
        The probes in file order.
    """
    if str(path) == BUNDLED:
        path = bundled_probes_path()
    probes: list[Probe] = []
    first_line_of_probe: dict[str, int] = {}
    base_first: dict[str, tuple[int, Probe]] = {}
    for n, obj in iter_jsonl(path):
        try:
            probe = Probe.model_validate(obj)
        except ValidationError as e:
            field, msg = validation_message(e)
            raise InputError(msg, path=path, line=n, field=field) from None
        if probe.slot not in SLOT_BY_NAME:
            raise InputError(f"unknown slot {probe.slot!r} (known: {', '.join(SLOT_BY_NAME)})",
                             path=path, line=n, field="slot")
        want = intended_direction(probe.slot)
        if probe.intended_direction is not None and probe.intended_direction != want:
            raise InputError(f"intended_direction {probe.intended_direction!r} contradicts slot "
                             f"{probe.slot!r}, whose designed direction is {want!r}",
                             path=path, line=n, field="intended_direction")
        if probe.probe_id in first_line_of_probe:
            raise InputError(f"duplicate probe_id {probe.probe_id!r} (first on line "
                             f"{first_line_of_probe[probe.probe_id]})", path=path, line=n, field="probe_id")
        first_line_of_probe[probe.probe_id] = n
        if probe.base_id in base_first:
            first_n, first = base_first[probe.base_id]
            for f in _BASE_FIELDS:
                if getattr(probe, f) != getattr(first, f):
                    raise InputError(f"base item {probe.base_id!r} has a different {f} than on line "
                                     f"{first_n}; every line of a base item must repeat it exactly",
                                     path=path, line=n, field=f)
        else:
            base_first[probe.base_id] = (n, probe)
        probes.append(probe)
    if not probes:
        raise InputError("file holds no probes", path=path)
    for probe_id, n in first_line_of_probe.items():  # file order
        if probe_id in base_first:
            raise InputError(f"probe_id {probe_id!r} is also a base_id; graded requests are "
                             "named by both, so they must differ", path=path, line=n, field="probe_id")
    return probes

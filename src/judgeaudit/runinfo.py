"""Every analysis's ``result.json`` records which run made it and when: ``run_id`` (a uuid4) and
``created_at`` (UTC, ISO 8601). One helper stamps and writes them, so every writer agrees; the
prediction ledger (``judgeaudit.ledger``) refuses to score a clause with a run made before the
clause was committed.

A run that called judges also records, under ``answers``, when the verdicts it used were answered
(``answer_record``): how many, the earliest and latest answer time (a verdict served from the call
store keeps the time it was first answered), and how many were read from a file (``replay:``, or a
CAP run's published judge outputs), whose answer time nobody recorded. The ledger reads these so that
a rerun answered from the store after a commit cannot pass for a run made after it.

Each ``result.json`` also records its inputs (``inputs``): the judgeaudit version, the elicitation
template version, and per input file (the probe file, the data set files) its absolute path and SHA-256,
so that a reader of the run (the card, ``card diff``) can refuse a file that changed after the run.

``RunStamp`` reads these back from any result (``run_id``, ``created_at``, ``inputs``, ``answers``; every other
key is the analysis's own, read through its schema): a reader of the stamp reads it there, not by key, so a key
renamed here is one error naming the file and field.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

RUN_KEYS = ("run_id", "created_at")


def utc_now() -> str:
    """The current time, UTC, ISO 8601 with offset (``2026-11-30T22:40:00.123456+00:00``)."""
    return datetime.now(UTC).isoformat()


def stamp(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with a fresh ``run_id`` and ``created_at`` added."""
    return {**payload, "run_id": str(uuid.uuid4()), "created_at": utc_now()}


def answer_record(verdicts: Any) -> dict[str, Any]:
    """When the verdicts of a run were answered: ``{"calls", "earliest", "latest", "replayed",
    "untimed"}`` over the rows of a verdict table (or a list of ``Verdict``). ``replayed`` counts
    the verdicts of ``replay:`` judges (provider ``replay``): their time is when the file was read,
    not when they were answered, so they are left out of earliest/latest. ``untimed`` counts rows
    without a readable, zoned time."""
    import pandas as pd

    from judgeaudit.records import verdicts_frame

    df = verdicts if isinstance(verdicts, pd.DataFrame) else verdicts_frame(list(verdicts))
    replayed = (df["provider"] == "replay") if "provider" in df else pd.Series(False, index=df.index)
    times = pd.to_datetime(df.loc[~replayed, "timestamp"], utc=True, errors="coerce", format="ISO8601") \
        if "timestamp" in df else pd.Series([], dtype="datetime64[ns, UTC]")
    timed = times.dropna()
    return {"calls": int(len(df)), "replayed": int(replayed.sum()), "untimed": int(len(times) - len(timed)),
            "earliest": timed.min().isoformat() if len(timed) else None,
            "latest": timed.max().isoformat() if len(timed) else None}


def file_sha256(path: str | Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_sha256(folder: Path) -> dict[str, str]:
    """The SHA-256 of every file under ``folder``, by its path relative to it."""
    return {str(f.relative_to(folder)): file_sha256(f) for f in sorted(folder.rglob("*")) if f.is_file()}


def input_record(files: Mapping[str, str | Path | None] | None = None) -> dict[str, Any]:
    """The ``inputs`` block of a result: versions, and each existing input file's absolute path and
    SHA-256 (a folder: every file under it, by relative path). The elicitation template version is
    the loaded one (None when the run rendered no judge prompt: the judges package is not imported
    here, which would cost a run that calls no judge its import time)."""
    import sys

    from judgeaudit import __version__

    elicit = sys.modules.get("judgeaudit.judges.elicit")
    rec: dict[str, Any] = {"judgeaudit": __version__, "template_version": getattr(elicit, "TEMPLATE_VERSION", None),
                           "files": {}}
    for name, p in (files or {}).items():
        if p is None:
            continue
        p = Path(p).resolve()
        if p.is_file():
            rec["files"][name] = {"path": str(p), "sha256": file_sha256(p)}
        elif p.is_dir():
            rec["files"][name] = {"path": str(p), "sha256": tree_sha256(p)}
    return rec


def changed_inputs(stamped: RunStamp | Mapping[str, Any], only: Sequence[str] | None = None) -> list[str]:
    """One line per recorded input file of a result (its ``RunStamp``, or the result's object) that is gone or
    whose SHA-256 differs from the run's."""
    s = stamped if isinstance(stamped, RunStamp) else RunStamp.of(stamped)
    out = []
    for name, f in (s.inputs.files if s.inputs is not None else {}).items():
        if only is not None and name not in only:
            continue
        p = Path(f.path)
        if isinstance(f.sha256, dict):
            now = tree_sha256(p) if p.is_dir() else None
        else:
            now = file_sha256(p) if p.is_file() else None
        if now is None:
            out.append(f"its {name} input {p} is gone")
        elif now != f.sha256:
            out.append(f"its {name} input {p} changed after the run (SHA-256 differs from the one recorded)")
    return out


def write_result(path: str | Path, payload: dict[str, Any], verdicts: Any = None, *,
                 inputs: Mapping[str, str | Path | None] | None = None) -> dict[str, Any]:
    """Write ``payload`` stamped with its run id and creation time, and its ``inputs`` record
    (``input_record(inputs)``), to ``path``; the stamped dict. ``verdicts`` (the verdict table the
    run used) adds its ``answers`` record."""
    from judgeaudit.io import write_json

    if verdicts is not None:
        payload = {**payload, "answers": answer_record(verdicts)}
    stamped = stamp({**payload, "inputs": input_record(inputs)})
    write_json(path, stamped)
    return stamped


def result_kind(d: dict[str, Any]) -> str | None:
    """The analysis that wrote a ``result.json``, detected by its keys: ``validity``, ``cap``, ``vp``,
    ``world``, ``loop``, ``loop worlds``, ``check``; None when unrecognised."""
    keys = set(d)
    if {"judges", "s_floor"} <= keys:
        return "validity"
    if {"sets", "conditions"} <= keys:
        return "cap"
    if {"sets", "transfer"} <= keys:
        return "vp"
    if "world_gap" in keys or {"blind", "informed"} <= keys or {"arms", "tie_rule", "judges"} <= keys:
        return "world"
    if "calibrate" in keys:
        return "calibrate"
    if "migrate" in keys:
        return "migrate"
    if {"worlds", "agent"} <= keys:
        return "loop worlds"
    if "regulators" in keys or "loop" in keys:
        return "loop"
    if any(k.startswith(("prompt_level", "instruction_level")) for k in keys) or "accuracy" in keys:
        return "check"
    return None


class _Record(BaseModel):
    """A record of the stamp: its typed fields, every other key kept as written."""

    model_config = ConfigDict(extra="allow", frozen=True)


class InputFile(_Record):
    """One input file (or folder) of a run: its absolute path and SHA-256 (a folder: every file's, by relative
    path)."""

    path: str
    sha256: str | dict[str, str]


class Inputs(_Record):
    """A result's ``inputs`` (``input_record``)."""

    judgeaudit: str | None = None
    template_version: str | None = None
    files: dict[str, InputFile] = {}


class Answers(_Record):
    """A result's ``answers`` (``answer_record``): when its verdicts were answered. Every field may be absent (a
    result whose own ``answers`` is another record — a HaluEval check's per-answer counts — records no answer
    times, and is read as one)."""

    calls: int | None = None
    replayed: int | None = None
    untimed: int | None = None
    earliest: str | None = None
    latest: str | None = None


class RunStamp(BaseModel):
    """What every ``result.json`` records of its run, whatever the analysis: ``run_id``, ``created_at``, the
    ``inputs`` it read and when its verdicts were answered (``answers``); None where the result records none."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    run_id: str | None = None
    created_at: str | None = None
    inputs: Inputs | None = None
    answers: Answers | None = None

    @classmethod
    def of(cls, data: Any, *, path: str | Path | None = None) -> Self:
        """The stamp of a result's object (``path`` names it in an error)."""
        from judgeaudit.errors import InputError, invalid

        if not isinstance(data, Mapping):
            raise InputError("a result.json is an object", path=path, line=1)
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise invalid(e, "not a run stamp this judgeaudit reads", path=path) from None

    @classmethod
    def read(cls, path: str | Path) -> Self:
        """The stamp of a ``result.json`` (a file or its run folder)."""
        return cls.of(_load(path), path=path)

    def recorded(self, path: str | Path | None = None) -> Self:
        """This stamp, if it records its run (``run_id``; ``created_at`` in zoned ISO 8601): ``InputError``
        naming the file and field otherwise."""
        from judgeaudit.errors import InputError

        for k in RUN_KEYS:
            if not getattr(self, k):
                raise InputError(f"this result does not record its run ({k!r} missing); rerun the analysis with "
                                 "this version of judgeaudit", path=path, field=k)
        self.when(path)
        return self

    def when(self, path: str | Path | None = None) -> datetime:
        """``created_at`` as a zoned time (``InputError`` naming the file and field when it is not one)."""
        from judgeaudit.errors import InputError

        try:
            t = datetime.fromisoformat(str(self.created_at))
        except ValueError:
            raise InputError(f"created_at {self.created_at!r} is not ISO 8601", path=path,
                             field="created_at") from None
        if t.tzinfo is None:
            raise InputError("created_at has no time zone (it is written in UTC)", path=path, field="created_at")
        return t


def _load(path: str | Path) -> Any:
    import json

    from judgeaudit.errors import InputError

    p = Path(path)
    p = p / "result.json" if p.is_dir() else p
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read this result ({e})", path=p) from None


def read_stamped(path: str | Path) -> tuple[RunStamp, dict[str, Any]]:
    """A ``result.json`` that records its run (``RunStamp.recorded``): its stamp and its object; ``InputError``
    naming the file and field otherwise."""
    d = _load(path)
    return RunStamp.of(d, path=path).recorded(path), d


def read_result(path: str | Path) -> dict[str, Any]:
    """A ``result.json`` that records its run (``run_id``, ``created_at`` in ISO 8601): ``InputError``
    naming the file and field otherwise."""
    return read_stamped(path)[1]

"""Every analysis's ``result.json`` records which run made it and when: ``run_id`` (a uuid4) and
``created_at`` (UTC, ISO 8601). One helper stamps and writes them, so every writer agrees; the
prediction ledger (``judgeaudit.ledger``) refuses to score a clause with a run made before the
clause was committed.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RUN_KEYS = ("run_id", "created_at")


def utc_now() -> str:
    """The current time, UTC, ISO 8601 with offset (``2026-11-30T22:40:00.123456+00:00``)."""
    return datetime.now(UTC).isoformat()


def stamp(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with a fresh ``run_id`` and ``created_at`` added."""
    return {**payload, "run_id": str(uuid.uuid4()), "created_at": utc_now()}


def write_result(path: str | Path, payload: dict[str, Any]) -> dict[str, Any]:
    """Write ``payload`` stamped with its run id and creation time to ``path``; the stamped dict."""
    from judgeaudit.io import write_json

    stamped = stamp(payload)
    write_json(path, stamped)
    return stamped


def result_kind(d: dict[str, Any]) -> str | None:
    """The analysis that wrote a ``result.json``, detected by its keys: ``validity``, ``cap``, ``vp``,
    ``world``, ``loop``, ``check``; None when unrecognised."""
    keys = set(d)
    if {"judges", "s_floor"} <= keys:
        return "validity"
    if {"sets", "conditions"} <= keys:
        return "cap"
    if {"sets", "transfer"} <= keys:
        return "vp"
    if "world_gap" in keys or {"blind", "informed"} <= keys or {"arms", "tie_rule", "judges"} <= keys:
        return "world"
    if "regulators" in keys or "loop" in keys:
        return "loop"
    if any(k.startswith(("prompt_level", "instruction_level")) for k in keys) or "accuracy" in keys:
        return "check"
    return None


def read_result(path: str | Path) -> dict[str, Any]:
    """A ``result.json`` that records its run (``run_id``, ``created_at`` in ISO 8601): ``InputError``
    naming the file and field otherwise."""
    import json

    from judgeaudit.errors import InputError

    p = Path(path)
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read this result ({e})", path=p) from None
    if not isinstance(d, dict):
        raise InputError("a result.json is an object", path=p, line=1)
    for k in RUN_KEYS:
        if not isinstance(d.get(k), str) or not d[k]:
            raise InputError(f"this result does not record its run ({k!r} missing); rerun the analysis with "
                             "this version of judgeaudit", path=p, field=k)
    try:
        t = datetime.fromisoformat(d["created_at"])
    except ValueError:
        raise InputError(f"created_at {d['created_at']!r} is not ISO 8601", path=p, field="created_at") from None
    if t.tzinfo is None:
        raise InputError("created_at has no time zone (it is written in UTC)", path=p, field="created_at")
    return d

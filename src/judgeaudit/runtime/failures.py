"""Failed calls and parse failures per judge.

A failed call (``Verdict.error`` set: the backend could not be loaded, the server refused the
request, the prompt did not fit the context, every retry ran out) and a parse failure (the call
completed but its answer could not be read) both leave a request without a usable verdict.
``summarise`` counts them per judge with the first distinct reasons; every command that calls
judges prints that summary, stores it in its result and fails the run when a judge produced no
usable verdict (``unusable``).

``recording()`` collects every verdict the executor returns while it is open, so a command whose
calls happen deep inside a pipeline (probe building, testbed building) can summarise them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgeaudit.records import Verdict, verdicts_frame

MAX_REASONS = 3
"""Distinct reasons kept per judge (in order of first occurrence)."""
_REASON_CHARS = 300


@dataclass(frozen=True)
class JudgeCalls:
    """One judge's calls in a run: how many, how many failed, how many did not parse, and why."""

    judge_id: str
    calls: int
    failed_calls: int
    parse_failures: int
    reasons: tuple[str, ...]

    @property
    def usable(self) -> int:
        return self.calls - self.failed_calls - self.parse_failures

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failed_calls": self.failed_calls, "parse_failures": self.parse_failures,
                "usable": self.usable, "reasons": list(self.reasons)}

    def line(self) -> str:
        text = (f"{self.judge_id}: {self.calls} calls, {self.failed_calls} failed, "
                f"{self.parse_failures} parse failures")
        return text + (f"; first reasons: {' | '.join(self.reasons)}" if self.reasons else "")


@dataclass(frozen=True)
class CallSummary:
    """Per judge (in order of first appearance) the counts of ``JudgeCalls``."""

    judges: tuple[JudgeCalls, ...]

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {j.judge_id: j.to_dict() for j in self.judges}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"judge": j.judge_id, "calls": j.calls, "failed calls": j.failed_calls,
                              "parse failures": j.parse_failures, "usable": j.usable,
                              "first reasons": " | ".join(j.reasons)} for j in self.judges],
                            columns=["judge", "calls", "failed calls", "parse failures", "usable", "first reasons"])

    def unusable(self) -> list[JudgeCalls]:
        """Judges that were asked at least once and produced no usable verdict."""
        return [j for j in self.judges if j.calls and not j.usable]

    def failure_line(self) -> str | None:
        """One line naming the first judge without a usable verdict and its first reason (None: none)."""
        bad = self.unusable()
        if not bad:
            return None
        j = bad[0]
        more = f" (and {len(bad) - 1} more judge{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
        why = j.reasons[0] if j.reasons else "no reason recorded"
        return (f"judge {j.judge_id!r} produced no usable verdict{more}: {j.failed_calls} of {j.calls} calls "
                f"failed, {j.parse_failures} unparseable; first error: {why}")


def _reason(row: Any) -> str:
    if isinstance(row.error, str) and row.error:
        text = row.error
    else:
        meta = row.meta if isinstance(row.meta, dict) else {}
        why = meta.get("parse_error") or (f"answer {str(row.raw)[:80]!r}" if row.raw is not None else "no answer")
        text = f"unparseable: {why}"
    text = " ".join(str(text).split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def summarise(verdicts: pd.DataFrame | Iterable[Verdict]) -> CallSummary:
    """Count failed calls (``error`` set) and parse failures (no error, ``parse_ok`` false) per judge
    of a verdict table, one row per request; keep the first ``MAX_REASONS`` distinct reasons."""
    df = verdicts if isinstance(verdicts, pd.DataFrame) else verdicts_frame(list(verdicts))
    out = []
    for jid, rows in df.groupby("judge_id", sort=False):
        err = rows["error"].notna() & (rows["error"].astype(str) != "")
        parse = ~err & ~rows["parse_ok"].fillna(False).astype(bool)
        reasons: dict[str, None] = {}
        for row in rows[err | parse].itertuples(index=False):
            if len(reasons) == MAX_REASONS:
                break
            reasons.setdefault(_reason(row))
        out.append(JudgeCalls(str(jid), int(len(rows)), int(err.sum()), int(parse.sum()), tuple(reasons)))
    return CallSummary(tuple(out))


class Recorder:
    """Every verdict the executor returned while ``recording()`` was open."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []

    def summary(self) -> CallSummary:
        return summarise(self.verdicts)


_ACTIVE: ContextVar[Recorder | None] = ContextVar("judgeaudit_call_recorder", default=None)


@contextmanager
def recording() -> Iterator[Recorder]:
    """Collect every executor result inside the block (nested blocks each see their own calls)."""
    rec = Recorder()
    parent = _ACTIVE.get()
    token = _ACTIVE.set(rec)
    try:
        yield rec
    finally:
        _ACTIVE.reset(token)
        if parent is not None:
            parent.verdicts.extend(rec.verdicts)


def active() -> Recorder | None:
    """The innermost open ``recording()`` (None outside one)."""
    return _ACTIVE.get()


def record(verdicts: list[Verdict]) -> None:
    """Called by the executor with the verdicts of each run."""
    rec = _ACTIVE.get()
    if rec is not None:
        rec.verdicts.extend(verdicts)

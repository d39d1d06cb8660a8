"""Failed calls and parse failures per judge.

A failed call (``Verdict.error`` set: the backend could not be loaded, the server refused the
request, the prompt did not fit the context, every retry ran out) and a parse failure (the call
completed but its answer could not be read) both leave a request without a usable verdict.
``summarise`` counts them per judge with the first distinct reasons; every command that calls
judges prints that summary, stores it in its result and fails the run when a judge produced no
usable verdict (``unusable``).

``recording()`` collects every verdict the executor returns while it is open, so a command whose
calls happen deep inside a pipeline (probe building, testbed building) can summarise them too.

A judge can also fail in one part of a run only (the informed arm of a world run, whose every call
failed, beside a blind arm that succeeded): ``summarise(verdicts, part=…, part_name="arm")`` counts
per (judge, part), and ``record_parts`` hands such a summary to the open recording, so the command's
check names the judge and the part that produced no usable verdict.

Why a ``ContextVar`` (``_ACTIVE``, the innermost open recording): it is no configuration but an accumulator of
the verdicts returned while a ``recording()`` block is open; blocks nest (each sees its own calls and hands
them to the enclosing one when it closes), which is a dynamic scope by design.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgeaudit.records import Verdict, verdicts_frame

if TYPE_CHECKING:   # imported where a table is made: a command starts without pandas
    import pandas as pd

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
    part: str | None = None
    """The part of the run these calls belong to (an arm), when counted per part."""

    @property
    def usable(self) -> int:
        return self.calls - self.failed_calls - self.parse_failures

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failed_calls": self.failed_calls, "parse_failures": self.parse_failures,
                "usable": self.usable, "reasons": list(self.reasons)}

    def line(self) -> str:
        who = self.judge_id if self.part is None else f"{self.judge_id} [{self.part}]"
        text = (f"{who}: {self.calls} calls, {self.failed_calls} failed, "
                f"{self.parse_failures} parse failures")
        return text + (f"; first reasons: {' | '.join(self.reasons)}" if self.reasons else "")


@dataclass(frozen=True)
class CallSummary:
    """Per judge (in order of first appearance) the counts of ``JudgeCalls``."""

    judges: tuple[JudgeCalls, ...]
    part_name: str | None = None
    """What the parts are (``"arm"``) when counted per (judge, part); None: per judge."""

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Per judge its counts; counted per part, per judge and part (``{judge: {part: counts}}``)."""
        if self.part_name is None:
            return {j.judge_id: j.to_dict() for j in self.judges}
        out: dict[str, dict[str, Any]] = {}
        for j in self.judges:
            out.setdefault(j.judge_id, {})[str(j.part)] = j.to_dict()
        return out

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        part = [] if self.part_name is None else [self.part_name]
        return pd.DataFrame([{"judge": j.judge_id, **({self.part_name: j.part} if part else {}), "calls": j.calls,
                              "failed calls": j.failed_calls, "parse failures": j.parse_failures,
                              "usable": j.usable, "first reasons": " | ".join(j.reasons)} for j in self.judges],
                            columns=["judge", *part, "calls", "failed calls", "parse failures", "usable",
                                     "first reasons"])

    def unusable(self) -> list[JudgeCalls]:
        """Judges that were asked at least once and produced no usable verdict."""
        return [j for j in self.judges if j.calls and not j.usable]

    def failure_line(self) -> str | None:
        """One line naming the first judge without a usable verdict and its first reason (None: none)."""
        bad = self.unusable()
        if not bad:
            return None
        j = bad[0]
        what = "judge" if self.part_name is None else self.part_name
        more = f" (and {len(bad) - 1} more {what}{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
        where = "" if j.part is None else f" in its {j.part} {self.part_name or 'part'}"
        why = j.reasons[0] if j.reasons else "no reason recorded"
        return (f"judge {j.judge_id!r} produced no usable verdict{where}{more}: {j.failed_calls} of {j.calls} "
                f"calls failed, {j.parse_failures} unparseable; first error: {why}")

    def without(self, judge_ids: Iterable[str]) -> CallSummary:
        """This summary without the rows of ``judge_ids``."""
        drop = set(judge_ids)
        return CallSummary(tuple(j for j in self.judges if j.judge_id not in drop), self.part_name)


def failure_reason(row: Any) -> str:
    """The one line a failed call or an unparseable reply is reported by (a verdict or a verdict table's row:
    ``error``, ``meta``, ``raw``): its error, else ``unparseable: `` and the parser's error (or the start of the
    reply); whitespace collapsed, at most ``_REASON_CHARS`` characters. ``summarise`` and every other count of
    failed calls (the loop's report votes) keep their reasons in this form."""
    if isinstance(row.error, str) and row.error:
        text = row.error
    else:
        meta = row.meta if isinstance(row.meta, dict) else {}
        why = meta.get("parse_error") or (f"answer {str(row.raw)[:80]!r}" if row.raw is not None else "no answer")
        text = f"unparseable: {why}"
    text = " ".join(str(text).split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def summarise(verdicts: pd.DataFrame | Iterable[Verdict], *,
              part: Mapping[str, str] | Callable[[str], str] | None = None,
              part_name: str = "part") -> CallSummary:
    """Count failed calls (``error`` set) and parse failures (no error, ``parse_ok`` false) per judge
    of a verdict table, one row per request; keep the first ``MAX_REASONS`` distinct reasons. With
    ``part`` (a request id → the part of the run it belongs to, e.g. its arm: a mapping, as the layer that
    made the requests reads them, or a function), count per (judge, part) and name the parts ``part_name``."""
    import pandas as pd

    df = verdicts if isinstance(verdicts, pd.DataFrame) else verdicts_frame(list(verdicts))
    keys = ["judge_id"]
    if part is not None:
        df = df.assign(_part=df["request_id"].astype(str).map(part))
        keys.append("_part")
    out = []
    for key, rows in df.groupby(keys, sort=False, dropna=False):
        jid, prt = (key[0], key[1] if part is not None else None) if isinstance(key, tuple) else (key, None)
        err = rows["error"].notna() & (rows["error"].astype(str) != "")
        parse = ~err & ~rows["parse_ok"].fillna(False).astype(bool)
        reasons: dict[str, None] = {}
        for row in rows[err | parse].itertuples(index=False):
            if len(reasons) == MAX_REASONS:
                break
            reasons.setdefault(failure_reason(row))
        out.append(JudgeCalls(str(jid), int(len(rows)), int(err.sum()), int(parse.sum()), tuple(reasons),
                              None if prt is None else str(prt)))
    return CallSummary(tuple(out), None if part is None else part_name)


class Recorder:
    """Every verdict the executor returned while ``recording()`` was open."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []
        self.parts: list[CallSummary] = []

    def summary(self) -> CallSummary:
        return summarise(self.verdicts)

    def part_failure_line(self) -> str | None:
        """One line naming the first (judge, part) without a usable verdict among the ``record_parts``
        summaries, for a judge that has usable verdicts elsewhere (a judge with none anywhere is named
        by ``summary().failure_line()``); None: none."""
        whole = {j.judge_id for j in self.summary().unusable()}
        for s in self.parts:
            line = s.without(whole).failure_line()
            if line is not None:
                return line
        return None


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
            parent.parts.extend(rec.parts)


def active() -> Recorder | None:
    """The innermost open ``recording()`` (None outside one)."""
    return _ACTIVE.get()


def record(verdicts: list[Verdict]) -> None:
    """Called by the executor with the verdicts of each run."""
    rec = _ACTIVE.get()
    if rec is not None:
        rec.verdicts.extend(verdicts)


def record_parts(summary: CallSummary) -> None:
    """Hand a per-part summary (``summarise(…, part=…)``) to the open recording, whose command then
    checks each (judge, part) as it checks each judge."""
    rec = _ACTIVE.get()
    if rec is not None:
        rec.parts.append(summary)

"""Deferring calls to a provider's batch file instead of making them.

In a run whose context has a sink (``runtime.context.RunContext.sink``) the executor makes no call for a judge
the sink takes (``BatchSink.takes``): it hands the calls not yet in the store to the sink and raises
``Deferred``. The sink (the provider formats live in ``judgeaudit.interop.batch``, which fills this hook)
writes them to the provider's request file and
records each call's request in the store (``CallStore.defer``), so that the provider's results file can
later be read into the store (``judgeaudit batch ingest``) and the same command rerun from the store.
Judges the sink does not take (reference, replay, local models) run as usual.
"""

from __future__ import annotations

from typing import Protocol

from judgeaudit.judges.base import Judge
from judgeaudit.records import JudgeRequest


class Deferred(Exception):  # noqa: N818 - not an error: the run stops by design
    """A run's missing calls were handed to a batch sink instead of being made."""

    def __init__(self, judge_id: str, n: int):
        super().__init__(f"{n} calls of {judge_id} deferred to a batch file")
        self.judge_id = judge_id
        self.n = n


class BatchSink(Protocol):
    """Where deferred calls go (``judgeaudit.interop.batch.BatchWriter``)."""

    def takes(self, judge: Judge) -> bool:
        """Whether this judge's calls go to the batch file (else it runs as usual)."""

    def defer(self, judge: Judge, calls: dict[str, JudgeRequest], store: object) -> None:
        """Take ``key -> request`` for the calls of ``judge`` that are not in ``store``."""

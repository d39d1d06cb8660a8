"""The runs a card or a checklist reads: every ``result.json`` under the given folders, with the
analysis that wrote it detected by its keys (``judgeaudit.runinfo.result_kind``).

Each run is read through a type, never by key: its stamp (``Run.stamp``, ``runinfo.RunStamp``), a validity run
through its analysis's (``Run.validity``), and what a card reads of any run that asked judges, whatever its analysis
(``Run.judged``, ``Judged``: each judge's block and recorded family, a loop's audited judge, each judge's calls)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from judgeaudit.analyses.validity.schema import Block, ResultReader, ValidityFile
from judgeaudit.errors import InputError
from judgeaudit.runfolder import result_files
from judgeaudit.runinfo import RunStamp, result_kind


class JudgeCalls(Block):
    """One judge's calls as a run recorded them (``calls.<judge>``, ``runtime.failures.JudgeCalls.to_dict``)."""

    calls: int | None = None
    failed_calls: int | None = None
    parse_failures: int | None = None
    usable: int | None = None
    reasons: list[str] = []


class JudgeBlock(Block):
    """A judge's block of a run (``judges.<judge>``): the model family the run recorded for it, where it did."""

    family: str | None = None


class Judged(ResultReader):
    """What a card reads of any run that asked judges, whatever its analysis: each judge's block (``judges``), the
    judge a loop audits (``judge``) and each judge's calls (``calls``); None where the run records none."""

    model_config = ConfigDict(extra="ignore")
    judges: dict[str, JudgeBlock] | None = None
    judge: str | None = None
    calls: dict[str, JudgeCalls] | None = None

    def block(self, judge: str) -> JudgeBlock | None:
        return (self.judges or {}).get(judge)

    def calls_of(self, judge: str) -> JudgeCalls | None:
        return (self.calls or {}).get(judge)


@dataclass(frozen=True)
class Run:
    path: Path
    kind: str | None
    data: dict[str, Any]

    @cached_property
    def stamp(self) -> RunStamp:
        """What the result records of its run (a key of it not as written: an error naming the file and field)."""
        return RunStamp.of(self.data, path=self.path)

    @cached_property
    def judged(self) -> Judged:
        """Its judges, their recorded families and calls (a key not as written: an error naming it)."""
        return Judged.of(self.data, path=self.path)

    @cached_property
    def validity(self) -> ValidityFile:
        """The run read as a validity run (a key renamed or missing: an error naming it)."""
        return ValidityFile.of(self.data, path=self.path)

    @property
    def run_id(self) -> str | None:
        return self.stamp.run_id

    @property
    def created_at(self) -> str | None:
        return self.stamp.created_at


def collect(dirs: Iterable[str | Path]) -> list[Run]:
    """Every ``result.json`` at or under ``dirs``, oldest first by ``created_at`` where recorded."""
    runs, seen = [], set()
    for d in map(Path, dirs):
        if not d.exists():
            raise InputError("no such folder", path=d, field="--from")
        for f in ([d] if d.is_file() else result_files(d)):
            if f.resolve() in seen:   # a folder given twice, or inside another given folder: one run
                continue
            seen.add(f.resolve())
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputError(f"cannot read this result ({e})", path=f) from None
            if isinstance(data, dict):
                runs.append(Run(f, result_kind(data), data))
    return sorted(runs, key=lambda r: r.created_at or "")


def of_kind(runs: Iterable[Run], kind: str) -> list[Run]:
    return [r for r in runs if r.kind == kind]


def _describe(r: Run) -> str:
    d = r.data
    what = [f"made {r.created_at[:19]}" if r.created_at else "time unrecorded"]
    what += [f"{k} {d[k]}" for k in ("s_floor", "bar", "n_base") if d.get(k) is not None]
    return f"{r.path.parent} ({', '.join(what)})"


def one_run(hits: Sequence[Run], what: str, chosen: Sequence[str | Path] = ()) -> Run:
    """The one run a section reads among ``hits`` (the runs that measured it; ``what`` names them,
    e.g. "validity runs of local"). Several: those ``chosen`` (``--run PATH``: a run folder or its result.json) are kept;
    if still more than one, ``InputError`` listing them — a card never picks the newest silently, so
    re-running until a verdict suits cannot pass unseen."""
    if len(hits) > 1 and chosen:
        picked = {Path(c).resolve() for c in chosen}
        mine = [r for r in hits if r.path.resolve() in picked or r.path.parent.resolve() in picked]
        hits = mine or hits
    if len(hits) > 1:
        raise InputError(f"{len(hits)} {what} under the folders given: "
                         + "; ".join(_describe(r) for r in hits)
                         + ". A card reads one: name it with --run PATH (or give --from that run's folder)",
                         field="--run")
    return hits[0]

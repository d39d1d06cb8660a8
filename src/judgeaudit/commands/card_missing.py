"""``card --run-missing``: the default runs (``judgeaudit.commands.default_runs``) a card lacks — planned,
estimated before anything runs (calls to make against calls stored, time, money), then run under
OUT/runs so the card reads them.

A section is planned when no run folder given measured it. A run whose verdict form the judge does
not have (a fixed reference instrument without a world form, say) is not run: the card says so.

A plug-in of ``judgeaudit.card_missing``: importing it registers this module as the card's planner
(``judgeaudit.card.make.register_missing``), so the card layer runs it without importing it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgeaudit.card.make import register_missing
from judgeaudit.commands.default_runs import DEFAULT_RUNS, WORLD_REFERENCES, DefaultRun
from judgeaudit.runtime.estimate import Estimate, duration


@dataclass(frozen=True)
class Planned:
    run: DefaultRun
    folder: Path
    skip: str | None = None          # why it is not run (None: it runs)
    estimate: Estimate | None = None
    upper_bound: bool = False         # the calls depend on the replies (the loop): an upper bound

    def line(self, judge: str) -> str:
        name = f"{self.run.section} ({self.run.folder})"
        if self.skip:
            return f"{name}: not run — {self.skip}"
        if self.estimate is None:
            return f"{name}: no judge calls"
        e = self.estimate
        bound = "at most " if self.upper_bound else ""
        return (f"{name}: {bound}{e.calls + e.cached} calls of {judge}, {e.cached} in the store, {bound}{e.calls} "
                f"to make; {e.describe()}")


def runs_dir(out: Path) -> Path:
    return Path(out) / "runs"


def plan(judge_spec: str, absent: Sequence[str], out: Path) -> list[Planned]:
    """The default runs of the ``absent`` sections, each with its estimate for ``judge_spec``."""
    from judgeaudit.commands.common import build_judges
    from judgeaudit.runtime.estimate import estimate
    from judgeaudit.runtime.store import CallStore

    (judge,) = build_judges([judge_spec])
    store = runs_dir(out) / "calls.sqlite"
    planned = []
    for section in absent:
        dr = DEFAULT_RUNS.get(section)
        if dr is None:
            continue
        folder = runs_dir(out) / dr.folder
        if dr.form is not None and not judge.answers(dr.form):
            planned.append(Planned(dr, folder, skip=f"{judge.id} has no {dr.form} verdict form"))
            continue
        if dr.form is None:
            planned.append(Planned(dr, folder))
            continue
        reqs = dr.requests(judge)
        keys = list(dict.fromkeys(judge.key(r) for r in reqs))
        cached = {}
        if judge.cacheable and store.is_file():
            with CallStore(store, readonly=True) as cs:
                cached = cs.completed(keys)
        todo = {judge.key(r): r for r in reqs if judge.key(r) not in cached}
        est = estimate(judge, list(todo.values()), cached=cached, concurrency=judge.max_concurrency)
        planned.append(Planned(dr, folder, estimate=est, upper_bound=section == "loop"))
    return planned


def total_line(planned: Sequence[Planned]) -> str:
    ests = [p.estimate for p in planned if p.estimate is not None and not p.skip]
    calls = sum(e.calls for e in ests)
    secs = [e.seconds for e in ests]
    costs = [e.cost_usd for e in ests]
    time_text = "unknown" if any(s is None for s in secs) else f"~{duration(sum(secs))}"  # type: ignore[arg-type]
    cost_text = "unknown" if any(c is None for c in costs) else f"${sum(costs):.4f}"  # type: ignore[arg-type]
    n = sum(not p.skip for p in planned)
    return f"total: {n} run{'s' * (n != 1)}, {calls} judge calls to make, time {time_text}, cost {cost_text}"


def run_planned(judge_spec: str, planned: Sequence[Planned], out: Path, *, n_boot: int = 2000) -> list[Path]:
    """Run every planned run that is not skipped; the folders written."""
    store = runs_dir(out) / "calls.sqlite"
    done = []
    for p in planned:
        if p.skip:
            continue
        judges = [judge_spec] if p.run.form is not None else []
        if p.run.section == "world":
            judges += [r for r in WORLD_REFERENCES if r != judge_spec]
        p.run.run(judges, p.folder, store, n_boot)
        done.append(p.folder)
    return done


register_missing(sys.modules[__name__])  # type: ignore[arg-type]

"""``card --run-missing``: the default runs (``judgeaudit.commands.default_runs``) a card lacks — planned,
estimated before anything runs (calls to make against calls stored, time, money), then run under
OUT/runs so the card reads them.

A section is planned when no run folder given measured it. A run whose verdict form the judge does
not have (a fixed reference instrument without a world form, say) is not run: the card says so.

``card_with_missing_runs`` does the whole of ``card --run-missing`` from this layer down: the card layer
tells which sections are unmeasured and writes the card (``card.make.unmeasured``, ``write_card``); the runs
are planned and made here. Importing this module registers it into ``card.make.MAKERS`` (``default_runs``),
where the library's ``judgeaudit.card(..., run_missing=True)`` finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgeaudit.card.make import MAKERS, check_output, console, unmeasured, write_card
from judgeaudit.commands.default_runs import DEFAULT_RUNS, WORLD_REFERENCES, DefaultRun
from judgeaudit.runtime.context import RunContext
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


def plan(judge_spec: str, absent: Sequence[str], out: Path, *, api_base: str | None = None) -> list[Planned]:
    """The default runs of the ``absent`` sections, each with its estimate for ``judge_spec`` (built with
    ``api_base``)."""
    from judgeaudit.commands.common import build_judges
    from judgeaudit.runtime.estimate import estimate
    from judgeaudit.runtime.store import CallStore

    (judge,) = build_judges([judge_spec], api_base=api_base)
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


def run_planned(judge_spec: str, planned: Sequence[Planned], out: Path, *, n_boot: int = 2000,
                context: RunContext | None = None) -> list[Path]:
    """Run every planned run that is not skipped (in ``context``, the command's ``RunContext``); the folders
    written."""
    store = runs_dir(out) / "calls.sqlite"
    done = []
    for p in planned:
        if p.skip:
            continue
        judges = [judge_spec] if p.run.form is not None else []
        if p.run.section == "world":
            judges += [r for r in WORLD_REFERENCES if r != judge_spec]
        p.run.run(judges, p.folder, store, n_boot, context=context)
        done.append(p.folder)
    return done


def card_with_missing_runs(judge: str, from_dirs: Sequence[Path] = (), out: Path = Path("card"),
                           ledger: Path | None = None, *, yes: bool = False,
                           confirm: Callable[[], bool] | None = None, n_boot: int = 2000,
                           chosen: Sequence[Path] = (), context: RunContext | None = None) -> dict:
    """``judgeaudit.card(..., run_missing=True)``: the default runs of the sections no folder in ``from_dirs``
    (nor OUT/runs, from an earlier call) measured, estimated on stderr before any call, run under OUT/runs
    when ``yes`` or ``confirm()`` says so (neither: ``InputError``, nothing run), then the card. The judge is built
    and the runs made in ``context`` (the command's ``RunContext``; None: the defaults)."""
    from judgeaudit.card.sources import collect
    from judgeaudit.errors import InputError

    out, from_dirs = Path(out), [Path(d) for d in from_dirs]
    check_output(out, from_dirs, ledger, n_boot)
    if runs_dir(out).is_dir() and runs_dir(out) not in from_dirs:
        from_dirs.append(runs_dir(out))   # runs an earlier --run-missing made here
    runs = collect(from_dirs)
    planned = plan(judge, unmeasured(judge, runs, from_dirs, chosen), out,
                   api_base=None if context is None else context.api_base)
    console.print(f"card --run-missing for {judge}: the runs the card lacks", highlight=False)
    for p in planned:
        console.print(f"  {p.line(judge)}", highlight=False, markup=False)
    console.print(f"  {total_line(planned)}", highlight=False, markup=False)
    if any(not p.skip for p in planned):
        if not yes and (confirm is None or not confirm()):
            raise InputError("--run-missing runs the judge: confirm at the prompt, or pass --yes "
                             "(yes=True) to run without asking; nothing was run", field="--yes")
        from_dirs += run_planned(judge, planned, out, n_boot=n_boot, context=context)
        runs = collect(from_dirs)
    notes = {p.run.section: f"not measured — {p.skip}" for p in planned if p.skip}
    return write_card(judge, runs, from_dirs, out, ledger, notes=notes, chosen=chosen)


MAKERS.register("default_runs", card_with_missing_runs)

"""The default runs on the data the package carries: what ``judgeaudit demo`` runs, and what
``judgeaudit card --run-missing`` runs for one judge when a card section has no run folder.

One table, ``DEFAULT_RUNS`` (card section → ``DefaultRun``). Each entry knows

* the folder it writes under OUT, and the equivalent command (``judgeaudit.card.defaults``, the table
  the card names them from, with the bundled data they read);
* the verdict form the judge must answer (``None``: the run calls no judge);
* the judge's requests (to estimate calls, time and money before anything runs; the loop's depend on
  the replies, so its list is the upper bound: a report per output and regulator, and a revision of
  each);
* how to run it for a list of judge specs: through its command's one ``run_command`` (``commands.validity``,
  ``vp``, ``cap``, ``world``, ``loop``), so a default run's folder holds every file the command writes (its
  result, its report, its tables), and the command's ``RunContext`` is passed to it as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeaudit.card.defaults import (CAP_SETS, DATA, DEFAULT_COMMANDS, LOOP_REGULATORS, WORLD_ARMS,
                                     WORLD_REFERENCES, WORLD_ROWS, WORLD_RUN, WORLD_SET, WORLD_SPLIT,
                                     world_set)
from judgeaudit.judges.base import Judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.context import RunContext


@dataclass(frozen=True)
class DefaultRun:
    section: str
    folder: str
    form: str | None
    command: str
    requests: Callable[[Judge], list[JudgeRequest]]
    run: Callable[..., Any]
    """``run(judge_specs, out, store, n_boot, context=None, **options)``: the command's own ``run_command`` (the run,
    its report and every other file the command writes into OUT), on the default run's options with ``options``
    (declared names, e.g. the demo's smaller slices) over them; returns what ``run_command`` returns. ``context``:
    the command's ``RunContext`` (its ``api_base`` for the judges built, its call options and backend for the work
    done)."""


def _api_base(context: RunContext | None) -> str | None:
    return None if context is None else context.api_base


# --- validity: the bundled probe set ------------------------------------------------------------------------


def _validity_requests(_: Judge) -> list[JudgeRequest]:
    from judgeaudit.commands.requests import validity_requests

    return validity_requests()   # the declared defaults: the bundled probes, the default regrade count


def _validity(judges: list, out: Path, store: Path, n_boot: int, context: RunContext | None = None,
              **options: Any) -> Any:
    from judgeaudit.analyses.validity.options import DEFAULTS
    from judgeaudit.commands.validity import run_command

    return run_command({"probes": DEFAULTS["probes"], "judges": judges, "out": out, "store": store,
                        "bootstrap": n_boot, "api_base": _api_base(context), **options}, context=context)


# --- validation power: the public-set slices (no judge calls) -------------------------------------------------


def _vp(_: list, out: Path, store: Path, n_boot: int, context: RunContext | None = None, **options: Any) -> Any:
    from judgeaudit.commands.vp import run_command
    from judgeaudit.datasets.demo import vp_demo_sets

    # the audit's own bootstrap and permutation counts (its intervals are not the judge runs', n_boot); one
    # process, as it runs beside the judge's calls (the demo) and its sets are small (the same result as --jobs)
    return run_command({"sets": vp_demo_sets(), "out": out, "jobs": 1, **options}, context=context)


# --- CAP: the JudgeBench-format fixture and the LLMBar slice, both orders ------------------------------------


def _cap_requests(_: Judge) -> list[JudgeRequest]:
    import pandas as pd

    from judgeaudit.analyses.cap_design import pairwise_requests
    from judgeaudit.commands.cap import load_cap_set

    return pairwise_requests(pd.concat([load_cap_set(s)[0] for s in CAP_SETS], ignore_index=True))


def _cap(judges: list, out: Path, store: Path, n_boot: int, context: RunContext | None = None,
         **options: Any) -> Any:
    from judgeaudit.analyses.cap.options import DEFAULTS
    from judgeaudit.commands.cap import run_command

    return run_command({"sets": list(CAP_SETS), "judges": judges, "bootstrap": min(n_boot, DEFAULTS["bootstrap"]),
                        "store": store, "out": out, "api_base": _api_base(context), **options}, context=context)


# --- world: a HaluEval QA slice, blind / informed / placebo ---------------------------------------------------


def _world_items(spec: str = WORLD_SET) -> list:
    from judgeaudit.commands.world import load_items, split_items

    return split_items(load_items(spec, WORLD_RUN["max_items"]), WORLD_RUN["split"])[0]


def world_requests(spec: str = WORLD_SET) -> list[JudgeRequest]:
    """The judge's requests of the world run on ``spec`` (one vote per item and arm)."""
    from judgeaudit.world.requests import build_requests
    from judgeaudit.world.run import context_for

    items = _world_items(spec)
    return build_requests(items, list(WORLD_RUN["arms"]), context_for(items, WORLD_RUN["seed"]),
                          form=WORLD_RUN["form"], votes=WORLD_RUN["votes"])


def _world(judges: list, out: Path, store: Path, n_boot: int, context: RunContext | None = None,
           **options: Any) -> Any:
    from judgeaudit.commands.world import run_command

    return run_command({**WORLD_RUN, "arms": list(WORLD_RUN["arms"]), "judges": judges, "out": out, "store": store,
                        "bootstrap": n_boot, "api_base": _api_base(context), **options}, context=context)


# --- loop: an IFEval slice, the judge as judge and responder --------------------------------------------------


def _loop_task(max_items: int | None = None) -> Any:
    from judgeaudit.loop.tasks import load_task

    from judgeaudit.loop.options import DEFAULT_RUN

    return load_task(DEFAULT_RUN["task"], DEFAULT_RUN["data"], max_items=max_items)


def loop_requests(max_items: int | None = None) -> list[JudgeRequest]:
    """The loop run's judge and responder calls on the first ``max_items`` IFEval items (an upper bound:
    a report per item and judging regulator, a revision per item and regulator)."""
    from judgeaudit.loop.regulators import get_regulator

    task = _loop_task(max_items)
    regs = [get_regulator(r) for r in LOOP_REGULATORS]
    asks = [(r.name, it, what) for r in regs for it in task.items
            for what in (("report", "revise") if r.calls_judge else ("revise",))]
    # each its own call (own epoch): the real prompts differ by regulator and report from their first
    # line, so none reuses another's evaluated prompt
    return [JudgeRequest(form="generate", request_id=f"{name}|{it.item_id}|{what}", epoch=i,
                         prompt=f"[{name} {what}]\n{it.request}\n\n{it.shipped or ''}")
            for i, (name, it, what) in enumerate(asks)]


def _loop(judges: list, out: Path, store: Path, n_boot: int, context: RunContext | None = None,
          **options: Any) -> Any:
    from judgeaudit.commands.loop import run_command
    from judgeaudit.loop.options import DEFAULT_RUN

    # allow_failures: a regulator with no usable report is a row of the run, not the end of the card or demo
    # that made it (their own call summary decides their exit, after the card or report is written)
    return run_command({**DEFAULT_RUN, "responder": judges[0], "judge": judges[0], "out": out, "store": store,
                        "bootstrap": n_boot, "api_base": _api_base(context), "allow_failures": True, **options},
                       context=context, kept_going="a default run: the card or demo records it")


_HOW: dict[str, tuple[str, str | None, Callable[[Judge], list[JudgeRequest]], Callable[..., Any]]] = {
    "validity": ("validity", "graded", _validity_requests, _validity),
    "vp": ("validation_power", None, lambda _: [], _vp),
    "cap": ("cap", "pairwise", _cap_requests, _cap),
    "world": ("world", WORLD_RUN["form"], lambda _: world_requests(), _world),
    "loop": ("loop", "generate", lambda _: loop_requests(), _loop),
}
DEFAULT_RUNS: dict[str, DefaultRun] = {k: DefaultRun(k, folder, form, DEFAULT_COMMANDS[k], requests, run)
                                       for k, (folder, form, requests, run) in _HOW.items()}
__all__ = ["CAP_SETS", "DATA", "DEFAULT_RUNS", "LOOP_REGULATORS", "WORLD_ARMS", "WORLD_REFERENCES", "WORLD_SET",
           "WORLD_ROWS", "WORLD_RUN", "WORLD_SPLIT", "DefaultRun", "loop_requests", "world_requests", "world_set"]

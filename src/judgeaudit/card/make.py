"""Build and write one validity card: ``card(judge, from_dirs, out, ledger=None, ...)`` (what the package
``judgeaudit.card`` calls, and ``judgeaudit card``).

``run_missing``: the default runs the card lacks are planned, estimated and run by a planner this
module does not import — the command edge's ``judgeaudit.commands.card_missing``, a plug-in of the
group ``judgeaudit.card_missing`` that registers itself here (``register_missing``) when imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from judgeaudit.errors import InputError

PLUGIN_GROUP = "judgeaudit.card_missing"
console = Console(stderr=True, soft_wrap=True)


class MissingRuns(Protocol):
    """What ``run_missing`` needs: where the runs go, their plan with estimates, and running it."""

    def runs_dir(self, out: Path) -> Path: ...
    def plan(self, judge_spec: str, absent: Sequence[str], out: Path) -> list[Any]: ...
    def total_line(self, planned: Sequence[Any]) -> str: ...
    def run_planned(self, judge_spec: str, planned: Sequence[Any], out: Path, *, n_boot: int = ...) -> list[Path]: ...


_MISSING: list[MissingRuns] = []


def register_missing(planner: MissingRuns) -> MissingRuns:
    """Make ``planner`` the one ``run_missing`` uses (the last registered wins)."""
    _MISSING.append(planner)
    return planner


def missing_runs() -> MissingRuns:
    from judgeaudit.plugins import load

    load(PLUGIN_GROUP)
    if not _MISSING:
        raise LookupError(f"no planner of the card's missing runs is registered (plug-in group {PLUGIN_GROUP})")
    return _MISSING[-1]


def judges_held(runs: list) -> list[str]:
    """Every judge id the runs name (their ``judges`` blocks, CAP sets' judges, a loop's judge)."""

    out: dict[str, None] = {}
    for r in runs:
        d = r.data
        for j in d.get("judges") or {}:
            out.setdefault(str(j))
        if r.kind == "cap":
            from judgeaudit.analyses.cap.schema import CapFile

            for j in CapFile.of(d, path=r.path).judges():
                out.setdefault(str(j))
        if isinstance(d.get("judge"), str):
            out.setdefault(d["judge"])
    return list(out)


def _known(judge: str, runs: list, from_dirs: list[Path]) -> None:
    """``InputError`` when the folders hold judges and ``judge`` is none of them (a typo would give an
    empty card); folders that hold no judge at all give the card of "not measured" lines."""
    held = judges_held(runs)
    if held and judge not in held:
        raise InputError(f"no run in {', '.join(map(str, from_dirs))} has judge {judge!r}; the folders hold: "
                         + ", ".join(held), field="--judge")


def card(judge: str, from_dirs: list[Path] | tuple = (), out: Path = Path("card"), ledger: Path | None = None, *,
         run_missing: bool = False, yes: bool = False, confirm: Callable[[], bool] | None = None,
         n_boot: int = 2000, chosen: Sequence[Path] = ()) -> dict:
    """Build and write OUT/card.json, OUT/card.html, OUT/card.md and OUT/checklist.md; the card (its
    paths, written relative to OUT, read back as paths on this machine: ``card.share``).

    ``run_missing``: the default runs of the sections no folder in ``from_dirs`` (nor OUT/runs, from an
    earlier ``run_missing``) measured are estimated (printed on stderr before any call), then run under
    OUT/runs when ``yes`` or when ``confirm()`` (asked once) says so; neither: ``InputError``, nothing
    is run. ``chosen`` (``--run``): the run a section reads where the folders hold several (else
    ``InputError`` listing them)."""
    from judgeaudit.card.build import SECTIONS, build_card
    from judgeaudit.card.checklist import checklist, checklist_md
    from judgeaudit.card.render import write_card_html, write_card_md
    from judgeaudit.card.share import localize, shareable
    from judgeaudit.card.sources import collect
    from judgeaudit.io import write_json
    from judgeaudit.validate import check_options, output_dir

    check_options(bootstrap=n_boot)
    out, from_dirs = Path(out), [Path(d) for d in from_dirs]
    output_dir(out, writes=("card.json", "card.html", "card.md", "checklist.md"), inputs=[*from_dirs, ledger],
               kind="card", quiet=True)
    notes: dict[str, str] = {}
    if run_missing:
        missing = missing_runs()
        if missing.runs_dir(out).is_dir() and missing.runs_dir(out) not in from_dirs:
            from_dirs.append(missing.runs_dir(out))   # runs an earlier --run-missing made here
    runs = collect(from_dirs)
    if not run_missing:
        _known(judge, runs, from_dirs)
    if run_missing:

        first = build_card(judge, runs, from_dirs=from_dirs, chosen=chosen)
        planned = missing.plan(judge, [k for k in SECTIONS if not first["sections"][k].get("measured", True)], out)
        console.print(f"card --run-missing for {judge}: the runs the card lacks", highlight=False)
        for p in planned:
            console.print(f"  {p.line(judge)}", highlight=False, markup=False)
        console.print(f"  {missing.total_line(planned)}", highlight=False, markup=False)
        if any(not p.skip for p in planned):
            if not yes and (confirm is None or not confirm()):
                raise InputError("--run-missing runs the judge: confirm at the prompt, or pass --yes "
                                 "(yes=True) to run without asking; nothing was run", field="--yes")
            from_dirs += missing.run_planned(judge, planned, out, n_boot=n_boot)
            runs = collect(from_dirs)
        notes = {p.run.section: f"not measured — {p.skip}" for p in planned if p.skip}
    c = build_card(judge, runs, from_dirs=[Path(d).resolve() for d in from_dirs], ledger=ledger, notes=notes,
                   chosen=chosen)
    c = shareable(c, out)     # paths relative to the card's folder (or DATA/… for the bundled data)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "card.json", c)
    write_card_html(c, out / "card.html")
    write_card_md(c, out / "card.md")
    (out / "checklist.md").write_text(shareable(checklist_md(checklist(runs, judge), f"§6.1 checklist — {judge}"), out),
                                      encoding="utf-8")
    return localize(c, out)

"""Build and write one validity card: ``card(judge, from_dirs, out, ledger=None, ...)`` (what the package
``judgeaudit.card`` calls, and ``judgeaudit card``).

``run_missing``: the default runs the card lacks are planned, estimated and run above this layer, by the
command edge's ``judgeaudit.commands.card_missing.card_with_missing_runs``, which then writes the card with
``write_card``. The command line calls it directly; ``card(..., run_missing=True)`` (the library's call) finds
it in ``MAKERS``, the registry it registers into when imported (declared by the top package), so this module
never imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from judgeaudit.errors import InputError
from judgeaudit.registry import Registry

if TYPE_CHECKING:
    from judgeaudit.runtime.context import RunContext

PLUGIN_GROUP = "judgeaudit.card_missing"
console = Console(stderr=True, soft_wrap=True)

MAKERS: Registry[Callable[..., dict]] = Registry("maker of a card's missing runs", PLUGIN_GROUP)
"""``default_runs``: ``maker(judge, from_dirs, out, ledger, *, yes, confirm, n_boot, chosen) -> card`` — what
``card(..., run_missing=True)`` hands the whole call to."""


def judges_held(runs: list) -> list[str]:
    """Every judge id the runs name (their ``judges`` blocks, CAP sets' judges, a loop's judge)."""

    out: dict[str, None] = {}
    for r in runs:
        for j in r.judged.judges or {}:
            out.setdefault(str(j))
        if r.kind == "cap":
            from judgeaudit.analyses.cap.schema import CapFile

            for j in CapFile.of(r.data, path=r.path).judges():
                out.setdefault(str(j))
        if r.judged.judge is not None:
            out.setdefault(r.judged.judge)
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
         n_boot: int = 2000, chosen: Sequence[Path] = (), context: RunContext | None = None) -> dict:
    """Build and write OUT/card.json, OUT/card.html, OUT/card.md and OUT/checklist.md; the card (its
    paths, written relative to OUT, read back as paths on this machine: ``card.share``).

    ``run_missing``: the default runs of the sections no folder in ``from_dirs`` (nor OUT/runs, from an
    earlier ``run_missing``) measured are estimated (printed on stderr before any call), then run under
    OUT/runs when ``yes`` or when ``confirm()`` (asked once) says so; neither: ``InputError``, nothing
    is run (``MAKERS['default_runs']``). ``chosen`` (``--run``): the run a section reads where the folders
    hold several (else ``InputError`` listing them). ``context``: the ``runtime.context.RunContext`` the missing
    runs are made in (a command's ``--api-base`` and call options; None: the defaults)."""
    if run_missing:
        return MAKERS.get("default_runs")(judge, from_dirs, out, ledger, yes=yes, confirm=confirm, n_boot=n_boot,
                                          chosen=chosen, **({} if context is None else {"context": context}))
    from judgeaudit.card.sources import collect

    out, from_dirs = Path(out), [Path(d) for d in from_dirs]
    check_output(out, from_dirs, ledger, n_boot)
    runs = collect(from_dirs)
    _known(judge, runs, from_dirs)
    return write_card(judge, runs, from_dirs, out, ledger, chosen=chosen)


def check_output(out: Path, from_dirs: Sequence[Path], ledger: Path | None, n_boot: int) -> None:
    """Refuse, before anything runs, a bootstrap count out of range or an OUT the card may not write into."""
    from judgeaudit.validate import check_options, output_dir

    check_options(bootstrap=n_boot)
    output_dir(Path(out), writes=("card.json", "card.html", "card.md", "checklist.md"),
               inputs=[*from_dirs, ledger], kind="card", quiet=True)


def unmeasured(judge: str, runs: list, from_dirs: Sequence[Path], chosen: Sequence[Path] = ()) -> list[str]:
    """The card's sections no run in ``runs`` measured for ``judge``, in the card's order."""
    from judgeaudit.card.build import SECTIONS, build_card

    first = build_card(judge, runs, from_dirs=list(from_dirs), chosen=chosen)
    return [k for k in SECTIONS if first.measured(k) is None]


def write_card(judge: str, runs: list, from_dirs: Sequence[Path], out: Path, ledger: Path | None = None, *,
               notes: dict[str, str] | None = None, chosen: Sequence[Path] = ()) -> dict:
    """Build the card of ``judge`` from ``runs`` (read from ``from_dirs``) and write its four files into OUT;
    ``notes``: a section's "not measured" line where a run was not made. The card, its paths local."""
    from judgeaudit.card.build import build_card
    from judgeaudit.card.checklist import checklist, checklist_md
    from judgeaudit.card.render import write_card_html, write_card_md
    from judgeaudit.card.schema import CardFile
    from judgeaudit.card.share import localize, shareable

    out = Path(out)
    built = build_card(judge, runs, from_dirs=[Path(d).resolve() for d in from_dirs], ledger=ledger,
                       notes=notes or {}, chosen=chosen)
    card = CardFile.of(shareable(built.to_json(), out))   # paths relative to the card's folder (or DATA/…)
    out.mkdir(parents=True, exist_ok=True)
    card.write(out / "card.json")
    write_card_html(card, out / "card.html")
    write_card_md(card, out / "card.md")
    (out / "checklist.md").write_text(shareable(checklist_md(checklist(runs, judge), f"§6.1 checklist — {judge}"), out),
                                      encoding="utf-8")
    return localize(card.to_json(), out)

"""``judgeaudit card``: one validity card per judge from existing run folders (card.html, card.json,
checklist.md). Nothing is recomputed: each section reads the result.json files it finds; with
``--run-missing`` the default runs of the sections no folder measured are estimated, confirmed and
run under OUT/runs first (``commands.card_missing.card_with_missing_runs``, which this command calls itself).
``card`` itself is ``judgeaudit.card.make.card``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.card.make import card, console, judges_held
from judgeaudit.card.schema import CardFile
from judgeaudit.commands.card_missing import card_with_missing_runs
from judgeaudit.commands.common import ApiBaseOpt, RetriesOpt, RpmOpt, TimeoutOpt, run_context
from judgeaudit.errors import InputError

app = typer.Typer(help=HELP["card"])
__all__ = ["app", "card", "card_with_missing_runs", "judges_held", "run_command"]


@app.callback(invoke_without_command=True)
def card_cmd(
    ctx: typer.Context,
    judge: Annotated[str | None, typer.Option("--judge", help="judge id as it appears in the results (its spec)")]
    = None,
    from_: Annotated[list[Path] | None, typer.Option("--from", help="a run folder or a folder of runs (repeatable)")]
    = None,
    out: Annotated[Path | None, out_option("--out", what="folder", help="output folder")] = None,
    run: Annotated[list[Path] | None, typer.Option("--run", help="the run folder a section reads where the "
                                                   "--from folders hold several of it (repeatable)")] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger", help="prediction ledger to score")] = None,
    run_missing: Annotated[bool, typer.Option("--run-missing", help="run the default runs (bundled data) of the "
                                              "sections no --from folder measured, after a cost estimate")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="with --run-missing: run without asking")] = False,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="bootstrap resamples of the runs --run-missing "
                                           "makes")] = 2000,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help="with --run-missing: exit 0 even when "
                                                 "the judge produced no usable verdict in a run")] = False,
    api_base: ApiBaseOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
) -> None:
    """Writes OUT/card.html, OUT/card.md, OUT/card.json and OUT/checklist.md (``card diff A B`` compares two cards)."""
    import sys

    if ctx.invoked_subcommand is not None:
        return
    for name, v in (("--judge", judge), ("--out", out)):
        if not v:
            raise InputError(f"{name} is required", field=name)
    from judgeaudit.commands.common import checked_calls

    ask = (lambda: typer.confirm("Run them?", default=False, err=True)) if sys.stdin.isatty() else None
    context = run_context(api_base=api_base, timeout=call_timeout, retries=call_retries, rpm=call_rpm)
    with checked_calls(allow_failures, echo=console):
        # a run the judge failed (--run-missing): its summary, then exit 1
        run_command(judge, from_, out, ledger, run_missing=run_missing, yes=yes, confirm=ask, n_boot=bootstrap,
                    chosen=run, context=context)


def run_command(judge: str, from_: Sequence[Path] | None, out: Path, ledger: Path | None = None, *,
                run_missing: bool = False, yes: bool = False, confirm: Callable[[], bool] | None = None,
                n_boot: int = 2000, chosen: Sequence[Path] | None = None, echo: Console = console,
                context: RunContext | None = None) -> dict:
    """A card from its options (what the command's flags or an experiment file's keys give): the run folders
    ``from_`` required unless ``run_missing``; the card built and written (``card``; with ``run_missing``,
    ``card_with_missing_runs``: the default runs no folder measured, estimated and confirmed first), its verdict
    lines on stdout and the files written on the terminal. The card."""
    if not from_ and not run_missing:
        raise InputError("--from is required (or --run-missing)", field="--from")
    make = card_with_missing_runs if run_missing else card
    kw = dict(yes=yes, confirm=confirm, context=context) if run_missing else {}
    c = make(judge, list(from_ or []), out, ledger, n_boot=n_boot, chosen=list(chosen or []), **kw)
    for line in CardFile.of(c).verdict:
        print(line)
    echo.print(f"→ {out}/card.html, {out}/card.md, {out}/card.json, {out}/checklist.md")
    return c


def _read_card(p: Path):  # noqa: ANN202 - card.schema.CardFile
    from judgeaudit.card.schema import CardFile
    from judgeaudit.card.share import localize

    f = p / "card.json" if p.is_dir() else p
    return CardFile.of(localize(CardFile.read(f).to_json(), f.parent), path=f)   # its paths: relative to its folder


@app.command("diff")
def diff_cmd(
    a: Annotated[Path, typer.Argument(help="card A: a card.json or its folder")],
    b: Annotated[Path, typer.Argument(help="card B")],
    out: Annotated[Path | None, out_option("--out", what="file", help="write the comparison as Markdown")] = None,
    html: Annotated[Path | None, out_option("--html", what="file", help="write the comparison as an HTML page: "
                                            "the two cards side by side, each difference with its interval and "
                                            "flag")] = None,
) -> None:
    """Every quantity the two cards share: B − A with an interval; changes whose interval excludes zero flagged."""
    from judgeaudit.card.diff import diff_cards, diff_md
    from judgeaudit.validate import output_file

    inputs = [a, b, a / "card.json", b / "card.json"]
    if out and html and out.resolve() == html.resolve():
        raise InputError("--out and --html name the same file; give each its own", path=html, field="--html")
    for path, field in ((out, "--out"), (html, "--html")):
        if path:
            output_file(path, inputs=inputs, field=field)
    ca, cb = _read_card(a), _read_card(b)
    changes = diff_cards(ca, cb)
    md = diff_md(ca, cb, changes)
    print(md)
    if out:
        out.write_text(md, encoding="utf-8")
    if html:
        from judgeaudit.card.diffpage import write_diff_html

        write_diff_html(ca, cb, changes, html)

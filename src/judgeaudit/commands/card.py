"""``judgeaudit card``: one validity card per judge from existing run folders (card.html, card.json,
checklist.md). Nothing is recomputed: each section reads the result.json files it finds; with
``--run-missing`` the default runs of the sections no folder measured are estimated, confirmed and
run under OUT/runs first (``commands.card_missing``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.common import ApiBaseOpt, RetriesOpt, RpmOpt, TimeoutOpt, call_context
from judgeaudit.errors import InputError

app = typer.Typer(help="The validity card of one judge, gathered from run folders.")
console = Console(stderr=True, soft_wrap=True)


def judges_held(runs: list) -> list[str]:
    """Every judge id the runs name (their ``judges`` blocks, CAP sets' judges, a loop's judge)."""

    out: dict[str, None] = {}
    for r in runs:
        d = r.data
        for j in d.get("judges") or {}:
            out.setdefault(str(j))
        for sb in (d.get("sets") or {}).values() if r.kind == "cap" else ():
            for j in sb.get("judges") or {}:
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
         n_boot: int = 2000) -> dict:
    """Build and write OUT/card.json, OUT/card.html, OUT/card.md and OUT/checklist.md; the card.

    ``run_missing``: the default runs of the sections no folder in ``from_dirs`` (nor OUT/runs, from an
    earlier ``run_missing``) measured are estimated (printed on stderr before any call), then run under
    OUT/runs when ``yes`` or when ``confirm()`` (asked once) says so; neither: ``InputError``, nothing
    is run."""
    from judgeaudit.card.build import SECTIONS, build_card
    from judgeaudit.card.checklist import checklist, checklist_md
    from judgeaudit.card.render import write_card_html, write_card_md
    from judgeaudit.card.sources import collect
    from judgeaudit.io import write_json
    from judgeaudit.validate import check_options, output_dir

    check_options(bootstrap=n_boot)
    out, from_dirs = Path(out), [Path(d) for d in from_dirs]
    output_dir(out, writes=("card.json", "card.html", "card.md", "checklist.md"), inputs=[*from_dirs, ledger])
    notes: dict[str, str] = {}
    if run_missing:
        from judgeaudit.commands import card_missing as missing

        if missing.runs_dir(out).is_dir() and missing.runs_dir(out) not in from_dirs:
            from_dirs.append(missing.runs_dir(out))   # runs an earlier --run-missing made here
    runs = collect(from_dirs)
    if not run_missing:
        _known(judge, runs, from_dirs)
    if run_missing:

        first = build_card(judge, runs, from_dirs=from_dirs)
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
    c = build_card(judge, runs, from_dirs=from_dirs, ledger=ledger, notes=notes)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "card.json", c)
    write_card_html(c, out / "card.html")
    write_card_md(c, out / "card.md")
    (out / "checklist.md").write_text(checklist_md(checklist(runs, judge), f"§6.1 checklist — {judge}"),
                                      encoding="utf-8")
    return c


@app.callback(invoke_without_command=True)
def card_cmd(
    ctx: typer.Context,
    judge: Annotated[str | None, typer.Option("--judge", help="judge id as it appears in the results (its spec)")]
    = None,
    from_: Annotated[list[Path] | None, typer.Option("--from", help="a run folder or a folder of runs (repeatable)")]
    = None,
    out: Annotated[Path | None, typer.Option("--out", help="output folder")] = None,
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
    for name, v in (("--judge", judge), ("--from", from_ or run_missing), ("--out", out)):
        if not v:
            raise InputError(f"{name} is required" + (" (or --run-missing)" if name == "--from" else ""), field=name)
    from judgeaudit.commands.common import checked_calls

    ask = (lambda: typer.confirm("Run them?", default=False, err=True)) if sys.stdin.isatty() else None
    with checked_calls(allow_failures, echo=console), \
            call_context(api_base=api_base, timeout=call_timeout, retries=call_retries, rpm=call_rpm):
        # a run the judge failed (--run-missing): its summary, then exit 1
        c = card(judge, list(from_ or []), out, ledger, run_missing=run_missing, yes=yes, confirm=ask,
                 n_boot=bootstrap)
        for line in c["verdict"]:
            print(line)
        console.print(f"→ {out}/card.html, {out}/card.md, {out}/card.json, {out}/checklist.md")


def _read_card(p: Path) -> dict:
    import json

    f = p / "card.json" if p.is_dir() else p
    try:
        d = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read this card ({e})", path=f) from None
    if not isinstance(d, dict) or "sections" not in d:
        raise InputError("not a card.json (no 'sections')", path=f, field="sections")
    return d


@app.command("diff")
def diff_cmd(
    a: Annotated[Path, typer.Argument(help="card A: a card.json or its folder")],
    b: Annotated[Path, typer.Argument(help="card B")],
    out: Annotated[Path | None, typer.Option("--out", help="write the comparison as Markdown")] = None,
) -> None:
    """Every quantity the two cards share: B − A with an interval; changes whose interval excludes zero flagged."""
    from judgeaudit.card.diff import diff_cards, diff_md

    ca, cb = _read_card(a), _read_card(b)
    md = diff_md(ca, cb, diff_cards(ca, cb))
    print(md)
    if out:
        out.write_text(md, encoding="utf-8")

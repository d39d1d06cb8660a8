"""``judgeaudit card``: one validity card per judge from existing run folders (card.html, card.json,
checklist.md). Nothing is recomputed: each section reads the result.json files it finds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.errors import InputError

app = typer.Typer(help="The validity card of one judge, gathered from run folders.")
console = Console(stderr=True, soft_wrap=True)


def card(judge: str, from_dirs: list[Path], out: Path, ledger: Path | None = None) -> dict:
    """Build and write OUT/card.json, OUT/card.html and OUT/checklist.md; the card."""
    from judgeaudit.card.build import build_card
    from judgeaudit.card.checklist import checklist, checklist_md
    from judgeaudit.card.render import write_card_html
    from judgeaudit.card.sources import collect
    from judgeaudit.io import write_json
    from judgeaudit.validate import output_dir

    output_dir(out, writes=("card.json", "card.html", "checklist.md"), inputs=[*from_dirs, ledger])
    runs = collect(from_dirs)
    c = build_card(judge, runs, from_dirs=from_dirs, ledger=ledger)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "card.json", c)
    write_card_html(c, out / "card.html")
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
) -> None:
    """Writes OUT/card.html, OUT/card.json and OUT/checklist.md (``card diff A B`` compares two cards)."""
    if ctx.invoked_subcommand is not None:
        return
    for name, v in (("--judge", judge), ("--from", from_), ("--out", out)):
        if not v:
            raise InputError(f"{name} is required", field=name)
    c = card(judge, list(from_), out, ledger)
    for line in c["verdict"]:
        print(line)
    console.print(f"→ {out}/card.html, {out}/card.json, {out}/checklist.md")


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

"""``judgeaudit card``: one validity card per judge from existing run folders (card.html, card.json,
checklist.md). Nothing is recomputed: each section reads the result.json files it finds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

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
    judge: Annotated[str, typer.Option("--judge", help="judge id as it appears in the results (its spec)")],
    from_: Annotated[list[Path], typer.Option("--from", help="a run folder or a folder of runs (repeatable)")],
    out: Annotated[Path, typer.Option("--out", help="output folder")],
    ledger: Annotated[Path | None, typer.Option("--ledger", help="prediction ledger to score")] = None,
) -> None:
    """Writes OUT/card.html, OUT/card.json and OUT/checklist.md."""
    c = card(judge, list(from_), out, ledger)
    for line in c["verdict"]:
        print(line)
    console.print(f"→ {out}/card.html, {out}/card.json, {out}/checklist.md")

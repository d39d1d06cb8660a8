"""``judgeaudit templates list|show``: the built-in judge templates, and any template file."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP

app = typer.Typer(help=HELP["templates"],
                  no_args_is_help=True)
out = Console(soft_wrap=True, highlight=False)


@app.command("list")
def list_cmd() -> None:
    """Every built-in template: name, version, form, scale, reply format and source."""
    from rich.markup import escape
    from rich.table import Table

    from judgeaudit.judges.templates import library

    table = Table("name", "version", "form", "scale", "reply format", "source", title="judge templates")
    for name, t in library().items():
        table.add_row(*(escape(x) for x in (name, t.version, t.form, t.scale.label() if t.scale else "—",
                                            t.parser.format + (" (default)" if t.default_for else ""),
                                            t.source or "—")))
    Console(width=240).print(table)


@app.command("show")
def show_cmd(name: Annotated[str, typer.Argument(help="a built-in name or a template file")]) -> None:
    """One template: its identity (the hash that enters call keys), scale, reply format, source and text."""
    from judgeaudit.judges.templates import get_template

    t = get_template(name)
    ref = t.ref()
    out.print(f"{t.name} {t.version}  sha256 {ref['sha256']}  form {t.form}", markup=False)
    if t.scale is not None:
        out.print(f"scale: {t.scale.label()} (a higher grade is {t.scale.higher})", markup=False)
    parser = t.parser.format + (f" {t.parser.path}" if t.parser.path else "") + \
        (f" {t.parser.pattern}" if t.parser.pattern else "")
    out.print(f"reply format: {parser}; score: {t.score}", markup=False)
    if t.source:
        out.print(f"source: {t.source}", markup=False)
    if t.description:
        out.print(f"about: {t.description}", markup=False)
    if t.system is not None:
        out.print("--- system\n" + t.system, markup=False)
    out.print("--- user\n" + t.user, markup=False)

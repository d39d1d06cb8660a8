"""``judgeaudit datasets list``: the registered data-set adapters and their spec syntax."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from judgeaudit.commands.verbs import HELP

app = typer.Typer(help=HELP["datasets"], no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Data-set adapters."""


@app.command("list")
def list_cmd() -> None:
    """List the data-set adapters: name, what it reads, input modes, label space and origin."""
    from judgeaudit.datasets.registry import list_adapters

    table = Table("name", "reads", "modes", "label space", "label origin")
    for row in list_adapters().to_dict("records"):
        table.add_row(row["name"], row["description"], row["modes"], row["label space"], row["label origin"])
    Console().print(table)

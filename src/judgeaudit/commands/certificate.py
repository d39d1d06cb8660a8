"""``judgeaudit certificate verify``: re-run the NLI pairs every structural certificate names."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.errors import InputError

app = typer.Typer(help=HELP["certificate"], no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)


@app.command("verify")
def verify(
    verdicts: Annotated[Path | None, typer.Option("--verdicts", help="verdicts.parquet or .jsonl")] = None,
    store: Annotated[Path | None, typer.Option("--store", help="or: a call store holding the verdicts")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base", help="server for api: NLI backends")] = None,
    atol: Annotated[float, typer.Option("--atol", help="tolerance on recorded probabilities")] = 1e-6,
) -> None:
    """Re-run the named NLI pairs of every certificate and confirm each; exit 1 naming each rejected one."""
    from judgeaudit.structural.nli import make_nli
    from judgeaudit.structural.verify import verify_frame

    if (verdicts is None) == (store is None):
        raise InputError("give exactly one of --verdicts or --store", field="verdicts")
    if verdicts is not None:
        from judgeaudit.io import read_table

        df = read_table(verdicts)
        if "defects" not in df.columns:
            raise InputError("verdict table has no 'defects' column", path=verdicts, field="defects")
    else:
        from judgeaudit.runtime.store import CallStore

        with CallStore(store, readonly=True) as cs:
            df = cs.frame(status="ok")
    checks = verify_frame(df, lambda spec: make_nli(spec, api_base=api_base), atol=atol,
                          path=verdicts if verdicts is not None else store)
    bad = [c for c in checks if not c.ok]
    for c in bad:
        console.print(f"REJECTED request {c.request_id} ({c.judge_id}) defect {c.defect} [{c.unit_id}, {c.type}]: "
                      f"{c.problem}", highlight=False, markup=False)
    console.print(f"{len(checks) - len(bad)} of {len(checks)} certificates verified", highlight=False)
    if bad:
        raise typer.Exit(1)

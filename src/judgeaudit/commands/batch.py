"""``--batch openai|anthropic`` on the commands that call judges, and ``judgeaudit batch ingest``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit import options
from judgeaudit.commands.declared import annotation

from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError

if TYPE_CHECKING:
    from judgeaudit.interop.batch import BatchWriter

app = typer.Typer(help=HELP["batch"], no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)

BatchOpt = annotation(options.BATCH)
BatchOutOpt = annotation(options.BATCH_OUT)


@contextmanager
def batching(provider: str | None, out: Path | None) -> Iterator[BatchWriter | None]:
    """Around a command: with ``provider``, it yields the batch sink of the command's ``RunContext``: the calls of
    api judges not in the store go to the provider's batch file instead of being made; the command stops at the
    first run that deferred calls (a run whose requests depend on earlier answers, such as a loop's next round,
    comes in a later batch). Without, it yields None (calls are made)."""
    from judgeaudit.interop.batch import BatchWriter
    from judgeaudit.runtime.batch import Deferred

    if provider is None:
        if out is not None:
            raise InputError("--batch-out needs --batch openai|anthropic", field="--batch-out")
        yield None
        return
    from judgeaudit.interop.batch import BATCH_FILE
    from judgeaudit.validate import output_file

    suffix = ".jsonl" if provider == "openai" else ".json"
    writer = BatchWriter(provider, output_file(out or Path(f"batch-{provider}{suffix}"), field="--batch-out",
                                               by=BATCH_FILE))
    try:
        yield writer
    except Deferred:
        files = writer.write()
        stores = ", ".join(writer.stores)
        for path, n in files:
            console.print(f"batch: {n} requests → {path} ({provider}); no call was made", highlight=False,
                          markup=False)
        console.print(f"batch: submit the file{'s' if len(files) > 1 else ''}, then `judgeaudit batch ingest "
                      f"RESULTS --store {stores}` and rerun this command (it reads the answers from the store)",
                      highlight=False, markup=False)
        return
    console.print("batch: no api: judge call is missing from the store; no batch file written", highlight=False,
                  markup=False)


@app.command("ingest")
def ingest_cmd(
    results: Annotated[list[Path], typer.Argument(help="the provider's results file(s): OpenAI's output/error JSONL "
                                                       "or Anthropic's results JSONL")],
    store: Annotated[Path, out_option("--store", what="store", help="the call store the batch file was written from")],
) -> None:
    """Read a provider's batch results into the call store: each succeeded answer is stored under its call key,
    so the next run of the same command is served from the store; errored, canceled and expired entries stay
    missing and are called (or batched) again by that run."""
    from judgeaudit.interop.batch import ingest
    if not store.is_file():
        raise InputError("call store not found (name the store the batch file was written from)", path=store,
                         field="--store")
    report = ingest(list(results), store)
    console.print(f"batch ingest: {report.line()} → {store}", highlight=False, markup=False)

"""``--ledger`` / ``--strict-register`` on an analysis run: mark each headline number of its result
registered or not (``OUT/register.json`` and a report section), and fail a strict run — after its
outputs are written — when a headline number was not registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from judgeaudit import options
from judgeaudit.commands.declared import annotation

LedgerOpt = annotation(options.LEDGER)
StrictOpt = annotation(options.STRICT_REGISTER)
console = Console(stderr=True, soft_wrap=True)


def load(ledger: Path | None, strict: bool):  # noqa: ANN201 - Ledger | None, imported lazily
    """The verified ledger (read before the run, so a bad ledger fails early), or None."""
    from judgeaudit.errors import InputError
    from judgeaudit.ledger.commit import verify
    from judgeaudit.ledger.store import read_ledger

    if ledger is None:
        if strict:
            raise InputError("--strict-register needs --ledger", field="--strict-register")
        return None
    if not ledger.is_file():
        raise InputError("no such ledger file", path=ledger, field="--ledger")
    led = read_ledger(ledger)
    verify(led, ledger)
    return led


def mark(led, ledger: Path, kind: str, result: dict[str, Any], out: Path) -> tuple[list, Any]:  # noqa: ANN001
    """The register entries of ``result`` (also written to ``OUT/register.json``) and their report section."""
    from judgeaudit.io import write_json
    from judgeaudit.ledger.register import register
    from judgeaudit.report.register import register_section

    from judgeaudit.runfolder import output_set

    entries = register(led, kind, result, out.name)
    with output_set(out, kind) as dest:   # part of the run's set when the command writes one
        write_json(dest / "register.json", {"ledger": str(ledger), "headlines": [
            {"path": e.path, "value": e.value, "registered": e.registered, "by": list(e.units),
             "own": e.own} for e in entries]})
    return entries, register_section(entries, str(ledger))


def sections(led, ledger: Path | None, kind: str, out: Path, entries: list):  # noqa: ANN001, ANN201
    """The report sections of a run with ``--ledger`` (None without one): a callable an analysis's ``extra``
    takes, which marks its result (``mark``) and adds the register entries to ``entries``."""
    if led is None:
        return None

    def register_section(result: Any) -> list:
        e, section = mark(led, ledger, kind, result.to_dict(), out)
        entries.extend(e)
        return [section]

    return register_section


def enforce(entries: list, strict: bool) -> None:
    missing = [e.path for e in entries if not e.registered]
    if missing:
        console.print(f"{len(missing)} of {len(entries)} headline numbers not registered: {', '.join(missing)}",
                      highlight=False)
    if strict and missing:
        console.print("error: --strict-register: a headline number was not registered (outputs were written)")
        raise typer.Exit(code=3)

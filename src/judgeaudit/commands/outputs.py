"""The declaration every command-line option that names a path the command writes carries: ``out_option``,
whose metavar says what it writes (``OUTDIR``: a run's output folder; ``OUTFILE``: one file; ``STORE``: a
call store, SQLite, that runs share and resume from), as ``--help`` shows. The tests walk the command tree
for these declarations (``output_kind``), so that every output option is checked against writing over what
it must not (``validate.output_file``/``output_dir``, the one guard every writer calls), a new one included,
and an option that looks like an output but is not declared fails."""

from __future__ import annotations

from typing import Any

import typer

METAVARS = {"folder": "OUTDIR", "file": "OUTFILE", "store": "STORE"}


def _store_checked(param: typer.CallbackParam, value: Any) -> Any:
    """A ``STORE`` option's value, checked as it is parsed (``validate.output_store``): before the command reads
    an input or makes a call."""
    from judgeaudit.validate import output_store

    return output_store(value, field=param.opts[0] if param.opts else "--store")


def out_option(*names: str, what: str, help: str | None = None, **kw: Any) -> Any:  # noqa: A002 - typer's name
    """``typer.Option(*names, …)`` declaring a path the command writes; ``what``: folder, file or store (a
    store is checked as it is parsed; folders and files by the command's ``validate.output_dir``/``output_file``,
    which know what it writes and reads)."""
    if what not in METAVARS:
        raise ValueError(f"what must be one of {', '.join(METAVARS)}, not {what!r}")
    if what == "store":
        kw.setdefault("callback", _store_checked)
    return typer.Option(*names, metavar=METAVARS[what], help=help, **kw)


INPUT_METAVAR = "INFILE"


def in_option(*names: str, help: str | None = None, **kw: Any) -> Any:  # noqa: A002 - typer's name
    """``typer.Option(*names, …)`` declaring a path the command only reads, where its name could pass for an
    output (``migrate apply --link``): the tests then know it is not an undeclared output."""
    return typer.Option(*names, metavar=INPUT_METAVAR, help=help, **kw)


def output_kind(param: Any) -> str | None:
    """What a command-line parameter (a click parameter) declares it writes: folder, file, store or None."""
    metavar = getattr(param, "metavar", None)
    return next((k for k, v in METAVARS.items() if v == metavar), None)

"""``judgeaudit gate POLICY.yaml --from RUNS… | --card card.json``: judge a policy of bars on a judge's
card quantities (``judgeaudit.gate``) and exit with its outcome — 0 PASS (every interval clears its
bar), 1 FAIL (an interval is on the wrong side), 2 BLIND (the runs could not have detected a failure).
A bad policy, card or run folder prints one ``error: FILE:LINE: field …`` line and exits 3 (2 is BLIND).

Writes the Markdown summary to ``--summary FILE`` and appends it to ``$GITHUB_STEP_SUMMARY`` when that
is set; JUnit XML to ``--junit FILE``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError

if TYPE_CHECKING:
    from judgeaudit.card.schema import CardFile

BAD_INPUT_EXIT = 3
"""Exit status of a bad policy, card or run folder (2 is BLIND)."""


def _card_from_file(path: Path) -> CardFile:
    from judgeaudit.card.schema import CardFile

    if not path.is_file() and not path.is_dir():
        raise InputError("file not found", path=path, field="--card")
    return CardFile.read(path)


def _card_from_runs(dirs: list[Path], judge: str | None, chosen: list[Path] | None = None) -> CardFile:
    from judgeaudit.card.build import build_card
    from judgeaudit.card.sources import collect
    from judgeaudit.commands.card import judges_held

    runs = collect(dirs)
    held = judges_held(runs)
    if judge is None:
        if len(held) != 1:
            raise InputError(f"the runs hold {len(held)} judges ({', '.join(held) or 'none'}); name one with --judge "
                             "or 'judge:' in the policy", field="--judge")
        judge = held[0]
    elif held and judge not in held:
        raise InputError(f"no run holds judge {judge!r}; the runs hold: {', '.join(held)}", field="--judge")
    from judgeaudit.card.schema import CardFile
    from judgeaudit.card.share import shared_hints

    return CardFile.of(shared_hints(build_card(judge, runs, from_dirs=dirs, chosen=chosen or ()).to_json()))


def run_gate(policy: Path, *, from_: list[Path] | None = None, card: Path | None = None, judge: str | None = None,
             summary: Path | None = None, junit: Path | None = None,
             run: list[Path] | None = None):  # noqa: ANN201 - GateResult
    """Load, build or read the card, evaluate, write the summaries; the ``GateResult``."""
    from judgeaudit.gate import evaluate, load_policy
    from judgeaudit.gate.render import write_summaries
    from judgeaudit.validate import output_file

    if bool(from_) == (card is not None):
        raise InputError("give run folders with --from or a card with --card (one of them)", field="--from")
    p = load_policy(policy)
    for f, name in ((summary, "--summary"), (junit, "--junit")):
        if f is not None:
            output_file(f, inputs=[policy, card, *(from_ or [])], field=name)
    c = _card_from_file(card) if card is not None else _card_from_runs(list(from_), judge or p.judge, run)
    try:
        r = evaluate(p, c)
    except InputError as e:   # a malformed card: the field of the card file that is not what a card holds
        if card is None or e.path is not None:
            raise
        raise InputError(e.message, path=card, field=e.field) from None
    write_summaries(r, summary=summary, junit=junit, step_summary=os.environ.get("GITHUB_STEP_SUMMARY"))
    return r


def gate_cmd(
    policy: Annotated[Path, typer.Argument(help="policy YAML: bars on card quantities")],
    from_: Annotated[list[Path] | None, typer.Option("--from", help="run folders to build the judge's card from "
                                                     "(repeatable)")] = None,
    card: Annotated[Path | None, typer.Option("--card", help="a card.json (judgeaudit card)")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="with --from: the judge (when the runs hold several)")]
    = None,
    summary: Annotated[Path | None, out_option("--summary", what="file", help="write the Markdown summary here")] = None,
    junit: Annotated[Path | None, out_option("--junit", what="file", help="write JUnit XML here")] = None,
    run: Annotated[list[Path] | None, typer.Option("--run", help="with --from: the run folder a section reads "
                                                   "where the folders hold several of it (repeatable)")] = None,
) -> None:
    """Judge POLICY's bars on the card: PASS (exit 0), FAIL (1), BLIND (2); bad input exits 3."""
    from judgeaudit.gate.render import markdown

    try:
        r = run_gate(policy, from_=from_, card=card, judge=judge, summary=summary, junit=junit, run=run)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        raise typer.Exit(BAD_INPUT_EXIT) from None
    print(markdown(r), end="")
    raise typer.Exit(r.exit_code)

"""``judgeaudit ledger add|commit|score|report``: predictions committed before the runs they govern
(the blind-spot paper, §3.8, Appendix A)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError

app = typer.Typer(help=HELP["ledger"], no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)
LedgerOpt = Annotated[Path, typer.Option("--ledger", help="the ledger file (.yaml or .json)")]
ResultsOpt = Annotated[list[Path], typer.Option("--results", help="a result.json or a folder of runs (repeatable)")]


def parse_clause(text: str, field: str = "--clause") -> dict:
    """``"[LETTER: ]METRIC BAR"`` → clause fields, e.g. ``"a: judges.x.gap >= 0.10"``."""
    m = re.fullmatch(r"\s*(?:([A-Za-z0-9][\w.-]*):\s+)?(\S+)\s+(.+?)\s*", text)
    if not m:
        raise InputError(f"{text!r} is not '[LETTER: ]METRIC BAR' (e.g. 'a: judges.x.gap >= 0.10')", field=field)
    letter, metric, bar = m.groups()
    return {"letter": letter or "", "metric": metric, "bar": bar}


def parse_fails(text: str) -> dict:
    """A FAILS condition: ``"BAR"`` (on the clause's metric) or ``"METRIC BAR"``."""
    from judgeaudit.ledger.model import parse_bar

    try:
        parse_bar(text)
        return {"bar": text.strip()}
    except InputError:
        c = parse_clause(text, "--fails")
        return {"metric": c["metric"], "bar": c["bar"]}


_OPTION_OF = {"id": "--id", "text": "--text", "run": "--run", "clauses": "--clause", "fails": "--fails"}
"""The ``ledger add`` option that gives each field of a ``Prediction``."""


@app.command("add")
def add_cmd(
    ledger: LedgerOpt,
    id: Annotated[str, typer.Option("--id", help="prediction id, e.g. P3")],
    clause: Annotated[list[str], typer.Option("--clause", help="'[LETTER: ]METRIC BAR' (repeatable)")],
    run: Annotated[str | None, typer.Option("--run", help="the run it governs: run id, folder or analysis")] = None,
    fails: Annotated[str | None, typer.Option("--fails", help="FAILS condition for every clause: '[METRIC] BAR'")] = None,
    text: Annotated[str, typer.Option("--text", help="the prediction as written")] = "",
) -> None:
    """Add an uncommitted prediction to the ledger (created if absent)."""
    from pydantic import ValidationError

    from judgeaudit.ledger.commit import verify
    from judgeaudit.ledger.model import Prediction
    from judgeaudit.ledger.store import read_ledger, write_ledger

    for name, given in (("--id", [id]), ("--clause", clause), ("--run", [run or ""]), ("--fails", [fails or ""]),
                        ("--text", [text])):
        for v in given:
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InputError(f"{name} is not valid UTF-8 (byte {v[e.start:e.end].encode('utf-8', 'surrogateescape')!r} "
                                 f"at character {e.start + 1}); nothing was added", field=name) from None
    led = read_ledger(ledger)
    verify(led, ledger)
    if any(p.id == id for p in led.predictions):
        raise InputError(f"prediction {id} is already in the ledger", path=ledger, field="--id")
    try:
        p = Prediction.model_validate({"id": id, "text": text, "run": run, "clauses": [parse_clause(c) for c in clause],
                                       "fails": parse_fails(fails) if fails else None})
    except ValidationError as e:
        err = e.errors()[0]
        where = str(err["loc"][0]) if err.get("loc") else "clauses"   # the Prediction field → its option
        raise InputError(str(err.get("ctx", {}).get("error") or err["msg"]).removeprefix("Value error, "),
                         field=_OPTION_OF.get(where, "--clause")) from None
    write_ledger(ledger, led.model_copy(update={"predictions": (*led.predictions, p)}))
    console.print(f"added {id} ({len(p.clauses)} clause(s), uncommitted) → {ledger}")


@app.command("commit")
def commit_cmd(ledger: LedgerOpt) -> None:
    """Freeze every uncommitted prediction by SHA-256 (and the git HEAD, when in a repository)."""
    from judgeaudit.ledger.commit import commit, head_path, record_head
    from judgeaudit.ledger.store import read_ledger, write_ledger

    led, entry = commit(read_ledger(ledger), path=ledger)
    if entry is None:
        console.print("nothing to commit: every prediction is committed")
        return
    write_ledger(ledger, led)
    names = ", ".join(entry.predictions)
    try:
        rev = record_head(led, ledger, f"judgeaudit ledger: commit {names} (sha256 {entry.sha256[:12]})")
    except InputError as e:   # committed and its head file written; only the git record is missing
        console.print(f"warning: {e}", highlight=False, markup=False)
        rev = None
    console.print(f"committed {names} at {entry.at} sha256 {entry.sha256}; head → {head_path(ledger)}"
                  + (f"; recorded in git commit {rev[:12]}" if rev else " (not in a git work tree)"))


def _scores(ledger: Path, results: list[Path]):  # noqa: ANN202
    from judgeaudit.ledger.score import load_results, score
    from judgeaudit.ledger.store import read_ledger

    led = read_ledger(ledger)
    uncommitted = [p.id for p in led.predictions if p.id not in led.committed_at()]
    if uncommitted:
        console.print(f"not scored (uncommitted): {', '.join(uncommitted)}")
    return score(led, load_results(results), path=ledger)


@app.command("score")
def score_cmd(ledger: LedgerOpt, results: ResultsOpt,
              out: Annotated[Path | None, out_option("--out", what="file", help="write the scores as JSON")] = None) -> None:
    """The verdict and direction of every committed unit against the runs' result.json files."""
    from dataclasses import asdict

    from judgeaudit.io import write_json

    from judgeaudit.ledger.report import score_lines
    from judgeaudit.validate import output_file

    if out:
        output_file(out, inputs=[ledger, *results])
    scores = _scores(ledger, results)
    for line in score_lines(scores):
        print(line)
    if out:
        write_json(out, [asdict(s) for s in scores])
        console.print(f"→ {out}")


@app.command("report")
def report_cmd(ledger: LedgerOpt, results: ResultsOpt,
               out: Annotated[Path | None, out_option("--out", what="file", help="write the table as Markdown")] = None) -> None:
    """The Table 6 shape: every unit, counts per verdict per prediction, totals, the counting rule."""
    from judgeaudit.ledger.report import table6
    from judgeaudit.validate import output_file

    if out:
        output_file(out, inputs=[ledger, *results])
    md = table6(_scores(ledger, results))
    print(md)
    if out:
        out.write_text(md, encoding="utf-8")

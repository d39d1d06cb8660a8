"""``judgeaudit calibrate``: the number a user may report — a judge's verdicts on a large set plus human
labels on a subset give the target (mean score, pass rate, accuracy, win rate) with an interval that
carries the judge's errors (PPI++; Rogan–Gladen for a binary judge), beside the naive judge-only and
the human-only intervals, the judge's agreement with the humans and the labels it is worth.

Writes OUT/result.json, OUT/report.md and OUT/report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError

app = typer.Typer(help="The target quantity with an interval that carries the judge's errors (PPI++, "
                       "Rogan–Gladen), from verdicts plus a few human labels.")
console = Console(stderr=True, soft_wrap=True)


def run_calibrate(verdicts: str, labels: Path, target: str, out: Path, *, judge: str | None = None,
                  threshold: float | None = None, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
                  engine: str = "builtin") -> dict:
    """Read, estimate, write; the result dict (as in result.json)."""
    from judgeaudit.analyses.calibrate import TARGETS, calibrate
    from judgeaudit.commands.calibrate_inputs import WIN_NAMES, join, read_labels, read_verdicts, verdict_values
    from judgeaudit.report.calibrate import calibrate_markdown, headline, write_calibrate_html
    from judgeaudit.runinfo import write_result
    from judgeaudit.validate import check_options, output_dir

    if target not in TARGETS:
        raise InputError(f"must be one of {', '.join(TARGETS)}, got {target!r}", field="--target")
    if not 0.5 <= level < 1:
        raise InputError(f"must lie in [0.5, 1), got {level}", field="--level")
    if engine not in ("builtin", "ppi-python"):
        raise InputError(f"must be builtin or ppi-python, got {engine!r}", field="--engine")
    check_options(bootstrap=n_boot)
    output_dir(out, writes=("result.json", "report.md", "report.html"), inputs=[labels])
    v = read_verdicts(verdicts, judge)
    values, all_ids, unusable, what = verdict_values(v, target, threshold)
    y = read_labels(labels, target)
    table, dropped = join(values, all_ids, y, labels)
    n_lab = int(table["y"].notna().sum())
    if n_lab < 2 or len(table) - n_lab < 2:
        raise InputError(f"needs at least 2 labelled and 2 unlabelled items with a usable verdict; got {n_lab} "
                         f"labelled and {len(table) - n_lab} unlabelled", path=labels, field="label")
    res = calibrate(table, target, level=level, n_boot=n_boot, seed=seed,
                    categories=WIN_NAMES if target == "win_rate" else None, engine=engine)
    d = res.to_dict()
    notes = list(d["notes"])
    if unusable:
        notes.insert(0, f"{unusable} verdict(s) unusable (failed call, parse failure or no value for the target): "
                        "their items enter no estimate")
    if dropped:
        notes.insert(0, f"{len(dropped)} labelled item(s) have no usable verdict and enter no estimate "
                        f"(first: {dropped[0]}); if the judge fails more on some kind of item, every estimate "
                        "here describes the items it answered")
    d |= {"judge": v.judge, "verdicts": v.source, "labels": str(labels), "verdict_value": what,
          "threshold": threshold, "seed": seed, "n_boot": n_boot, "unusable_verdicts": unusable,
          "labelled_without_verdict": dropped, "notes": notes}
    out.mkdir(parents=True, exist_ok=True)
    d = write_result(out / "result.json", {"calibrate": d}, inputs={"verdicts": v.path, "labels": labels})
    body = d["calibrate"]
    (out / "report.md").write_text(calibrate_markdown(body), encoding="utf-8")
    write_calibrate_html(body, out / "report.html")
    for line in headline(body):
        print(line)
    return body


@app.callback(invoke_without_command=True)
def calibrate_cmd(
    verdicts: Annotated[str, typer.Option("--verdicts", help="the judge's verdicts: replay:<file>[?…] (any replay "
                                          "format), a run folder, or a verdicts.parquet/.jsonl")],
    labels: Annotated[Path, typer.Option("--labels", help="human labels on a subset: CSV/JSONL/Parquet with id, "
                                         "label")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    target: Annotated[str, typer.Option("--target", help="mean | pass_rate | accuracy | win_rate")] = "pass_rate",
    judge: Annotated[str | None, typer.Option("--judge", help="the judge id, when the verdicts hold several")] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="pass_rate/accuracy on scored verdicts: a "
                                                    "score at or above this passes")] = None,
    level: Annotated[float, typer.Option("--level", help="interval level")] = 0.95,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="bootstrap resamples (Rogan–Gladen, κ)")] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    engine: Annotated[str, typer.Option("--engine", help="PPI++ estimator: builtin (numpy/scipy) or ppi-python (the "
                                        "calibrate extra)")] = "builtin",
) -> None:
    """Estimate the target with PPI++ (and Rogan–Gladen for a binary judge) from verdicts plus human labels."""
    run_calibrate(verdicts, labels, target, out, judge=judge, threshold=threshold, level=level, n_boot=bootstrap,
                  seed=seed, engine=engine)

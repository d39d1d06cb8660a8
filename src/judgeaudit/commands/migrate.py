"""``judgeaudit migrate``: can a new judge replace the one being retired? Both judges grade the user's anchors;
the paired quantities are tested for equivalence within margins, a monotone link is fitted and tested on held-out
anchors, and the verdict is EQUIVALENT, LINKABLE, NOT_COMPARABLE or BLIND (judgeaudit.analyses.migrate).

Writes OUT/result.json, OUT/link.json (graded form), OUT/verdicts.parquet and OUT/report.html.
``judgeaudit migrate apply --link OUT/link.json`` puts a new judge's verdicts on the old judge's scale."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.common import (ALLOW_FAILURES_HELP, DEFAULT_BACKEND, ApiBaseOpt, BackendOpt, RayAddressOpt,
                                        RetriesOpt, RpmOpt, TimeoutOpt, calls_checked)
from judgeaudit.commands.outputs import in_option, out_option
from judgeaudit.runtime.context import RunContext
from judgeaudit.errors import InputError

app = typer.Typer(help=HELP["migrate"])
console = Console(stderr=True, soft_wrap=True)
WRITES = ("result.json", "link.json", "verdicts.parquet", "report.html")
_CHOICE = {"A": 1.0, "tie": 0.5, "B": 0.0}


def parse_margins(values: list[str] | None) -> dict[str, float]:
    """``NAME=VALUE`` margins (``--margin``), names from ``analyses.migrate.MARGIN_NAMES``."""
    from judgeaudit.analyses.migrate import MARGIN_NAMES

    out: dict[str, float] = {}
    for text in values or []:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or name not in MARGIN_NAMES:
            raise InputError(f"must be NAME=VALUE with NAME one of {', '.join(MARGIN_NAMES)}; got {text!r}",
                             field="--margin")
        try:
            v = float(value)
        except ValueError:
            v = float("nan")
        if not (np.isfinite(v) and v > 0):
            raise InputError(f"{name}: the margin must be a positive number, got {value!r}", field="--margin")
        out[name] = v
    return out


def _anchor_fields(path: Path) -> pd.DataFrame:
    """Each anchor's optional ``system`` and ``group`` (its cluster), by item id."""
    from judgeaudit.io import iter_jsonl

    rows = []
    for n, obj in iter_jsonl(path):
        row = {"anchor_id": str(obj.get("item_id"))}
        for f, col in (("system", "system"), ("group", "cluster")):
            v = obj.get(f)
            if v is not None and not isinstance(v, (str, int)):
                raise InputError("must be a string", path=path, line=n, field=f)
            row[col] = None if v is None else str(v)
        rows.append(row)
    return pd.DataFrame(rows)


def _values(verdicts: pd.DataFrame, form: str) -> pd.Series:
    """Each usable verdict as a number: a graded score, or a choice A = 1, tie = ½, B = 0 (NaN otherwise)."""
    ok = verdicts["error"].isna() & verdicts["parse_ok"].astype(bool)
    v = pd.to_numeric(verdicts["score"], errors="coerce") if form == "graded" else verdicts["choice"].map(_CHOICE)
    return pd.to_numeric(v, errors="coerce").where(ok)


def _scale_record(judge) -> dict | None:  # noqa: ANN001 - judges.Judge
    from judgeaudit.judges.scale import OVERREACH_SCALE

    s = judge.scale
    return (s or OVERREACH_SCALE).to_dict()


def _one_judge(spec: str, field: str, api_base: str | None):  # noqa: ANN202 - judges.Judge
    from judgeaudit.commands.common import build_judges

    judges = build_judges([spec], api_base=api_base)
    if len(judges) != 1:
        raise InputError(f"names {len(judges)} judges ({', '.join(j.id for j in judges)}); add ?judge=ID to pick one",
                         field=field)
    return judges[0]


def anchor_table(requests: list, old_v: pd.DataFrame, new_v: pd.DataFrame, form: str,
                 fields: pd.DataFrame, labels: pd.Series | None) -> pd.DataFrame:
    """The analysis's table: one row per anchor, with ``old``, ``new``, ``old_regrade`` (NaN where none), the
    anchors' ``cluster`` and ``system`` where given, and ``label``."""
    ids = [r.request_id for r in requests]
    t = pd.DataFrame({"anchor_id": ids})

    def by_epoch(v: pd.DataFrame, epoch: int) -> pd.Series:
        rows = v[v["epoch"] == epoch]
        return pd.Series(_values(rows, form).to_numpy(), index=rows["request_id"].astype(str).to_numpy())

    t["old"] = t["anchor_id"].map(by_epoch(old_v, 0))
    t["new"] = t["anchor_id"].map(by_epoch(new_v, 0))
    regrade = by_epoch(old_v, 1)
    if len(regrade):
        t["old_regrade"] = t["anchor_id"].map(regrade)
    f = fields.set_index("anchor_id")
    for col in ("cluster", "system"):
        if col in f and f[col].notna().any():
            if f[col].isna().any():
                raise InputError(f"is given for some anchors and not others ({int(f[col].isna().sum())} without)",
                                 field="group" if col == "cluster" else col)
            t[col] = t["anchor_id"].map(f[col])
    if labels is not None:
        t["label"] = t["anchor_id"].map(labels)
    return t


def validity_audits(fa, fb, *, margin: float, n_boot: int, seed: int) -> list:  # noqa: ANN001 - card.paired.Frontier
    """S and R of two validity runs, new − old (``card.migrate_audits.validity_audits``)."""
    from judgeaudit.card import migrate_audits

    return migrate_audits.validity_audits(fa, fb, margin=margin, n_boot=n_boot, seed=seed)


def _audits(from_: list[Path] | None, old_card: Path | None, new_card: Path | None, old_id: str, new_id: str, *,
            margin: float, n_boot: int, seed: int) -> tuple[list, list[str], list[dict]]:
    """The audit quantities of both judges' own runs: those under ``--from`` (the judges by their ids), or those
    the cards ``--old-card``/``--new-card`` were built from (each card's judge as its runs name it)."""
    from judgeaudit.card.migrate_audits import audits, card_runs, runs_of
    from judgeaudit.card.sources import collect

    if old_card and new_card:
        old_runs, old_judge = card_runs(old_card, "--old-card")
        new_runs, new_judge = card_runs(new_card, "--new-card")
        ro, rn = runs_of(old_runs, old_judge, "--old-card"), runs_of(new_runs, new_judge, "--new-card")
    elif from_:
        runs = collect(from_)
        ro, rn = runs_of(runs, old_id, "--from"), runs_of(runs, new_id, "--from")
        if ro.validity is None and not ro.cap and ro.world is None:
            raise InputError(f"no validity, CAP or world run of judge {old_id!r} under the folders given",
                             field="--from")
        if rn.validity is None and not rn.cap and rn.world is None:
            raise InputError(f"no validity, CAP or world run of judge {new_id!r} under the folders given",
                             field="--from")
    else:
        return [], [], []
    qs, notes = audits(ro, rn, margin=margin, n_boot=n_boot, seed=seed)
    sources = [s | {"judge_role": "old"} for s in ro.sources] + [s | {"judge_role": "new"} for s in rn.sources]
    return qs, notes, sources


def run_migrate(old: str, new: str, items: Path, out: Path, *, form: str = "graded", labels: Path | None = None,
                threshold: float | None = None, margins: dict[str, float] | None = None, regrade: int = 0,
                link_method: str = "equipercentile", from_: list[Path] | None = None,
                old_card: Path | None = None, new_card: Path | None = None, audit_margin: float | None = None,
                n_boot: int = 2000, seed: int = 0, store: Path | None = None, concurrency: int | None = None,
                api_base: str | None = None,
                context: RunContext | None = None):  # noqa: ANN201 - analyses.migrate.MigrateResult
    """Grade the anchors with both judges (and ``regrade`` anchors again with the old one; the calls made in
    ``context``, the command's ``RunContext``), decide, write."""
    from judgeaudit.analyses.migrate import AUDIT_MARGIN, migrate
    from judgeaudit.commands.calibrate_inputs import read_labels
    from judgeaudit.io import write_json, write_parquet
    from judgeaudit.probes.design import regrade_requests
    from judgeaudit.report.migrate import write_migrate_html
    from judgeaudit.runfolder import output_set
    from judgeaudit.runtime.executor import judge_all
    from judgeaudit.runtime.requests import read_requests
    from judgeaudit.validate import check_options, output_dir, spec_inputs

    if form not in ("graded", "pairwise"):
        raise InputError(f"must be graded or pairwise, got {form!r}", field="--form")
    check_options(bootstrap=n_boot, concurrency=concurrency)
    if link_method not in ("equipercentile", "isotonic"):
        raise InputError(f"must be equipercentile or isotonic, got {link_method!r}", field="--link-method")
    if regrade < 0:
        raise InputError(f"must be 0 or more, got {regrade}", field="--regrade")
    if from_ and (old_card or new_card):
        raise InputError("give the audited runs either as --from folders or as --old-card/--new-card, not both",
                         field="--from")
    if bool(old_card) != bool(new_card):
        raise InputError("is needed with " + ("--old-card" if old_card else "--new-card"),
                         field="--new-card" if old_card else "--old-card")
    if audit_margin is not None and not (np.isfinite(audit_margin) and audit_margin > 0):
        raise InputError(f"must be a positive number, got {audit_margin}", field="--audit-margin")
    output_dir(out, writes=WRITES, inputs=[items, labels, store, *spec_inputs([old, new]), *(from_ or []),
                                           old_card, new_card],
               kind="migrate")
    requests = read_requests(items, form)
    fields = _anchor_fields(items)
    y = read_labels(labels, "win_rate" if form == "pairwise" else "mean") if labels is not None else None
    if y is not None:
        unknown = sorted(set(y.index) - {r.request_id for r in requests})
        if unknown:
            raise InputError(f"id {unknown[0]!r} is not an anchor of --items", path=labels, field="id")
    j_old = _one_judge(old, "--old", api_base)
    j_new = _one_judge(new, "--new", api_base)
    store_path = store or out / "calls.sqlite"
    audits, audit_notes, audit_sources = _audits(from_, old_card, new_card, j_old.id, j_new.id,
                                                 margin=audit_margin or AUDIT_MARGIN, n_boot=n_boot, seed=seed)
    old_v = judge_all([j_old], requests + regrade_requests(requests, regrade), store_path=store_path,
                      concurrency=concurrency, context=context)
    new_v = judge_all([j_new], requests, store_path=store_path, concurrency=concurrency, context=context) \
        if j_new.id != j_old.id else old_v[old_v["epoch"] == 0]
    table = anchor_table(requests, old_v, new_v, form, fields, y)
    result, link = migrate(table, form=form, old_judge=j_old.id, new_judge=j_new.id,
                           old_scale=_scale_record(j_old) if form == "graded" else None,
                           new_scale=_scale_record(j_new) if form == "graded" else None, threshold=threshold,
                           margins=margins, n_boot=n_boot, seed=seed, link_method=link_method, audits=audits,
                           audit_notes=audit_notes, audit_sources=audit_sources, with_link=True)
    with output_set(out, "migrate") as dest:
        result.write(dest / "result.json", items=items, labels=labels)
        if link is not None:
            write_json(dest / "link.json", link.to_dict())
        write_parquet(dest / "verdicts.parquet", pd.concat([old_v, new_v], ignore_index=True)
                      if j_new.id != j_old.id else old_v)
        write_migrate_html(result, link, table, dest / "report.html")
    return result


def headline(result) -> list[str]:  # noqa: ANN001 - MigrateResult
    """The terminal lines: the verdict, its reasons, each quantity with its interval and margin."""
    units = "" if result.unit == "anchor" else f", resampled as {result.n_clusters} clusters"
    lines = [f"migrate {result.old_judge} → {result.new_judge}: {result.verdict} ({result.n_anchors} anchors{units})"]
    lines += [f"  {r}" for r in result.reasons]
    for part, qs in (("raw", result.raw), ("linked", result.linked), ("audit", result.audits)):
        for q in qs:
            est = "—" if q.estimate is None else f"{q.estimate:+.3f}"
            ci = "" if None in q.ci else f" [{q.ci[0]:+.3f}, {q.ci[1]:+.3f}]"
            margin = f"  margin {q.margin:g}, {q.status}" if q.margin is not None else ""
            lines.append(f"  {part:<6} {q.name:<16} {est}{ci}{margin}")
    return lines


@app.callback(invoke_without_command=True)
@calls_checked
def migrate_cmd(
    ctx: typer.Context,
    old: Annotated[str | None, typer.Option("--old", help="the judge being retired (any judge spec; "
                                            "replay:FILE for verdicts you already hold)")] = None,
    new: Annotated[str | None, typer.Option("--new", help="the judge to replace it (any judge spec)")] = None,
    items: Annotated[Path | None, typer.Option("--items", help="anchors both judges grade: JSONL in judge "
                                               "--input's forms (item_id, text | prompt, response_a, "
                                               "response_b), optional system and group")] = None,
    out: Annotated[Path | None, out_option("--out", what="folder", help="output folder")] = None,
    form: Annotated[str, typer.Option("--form", help="graded | pairwise")] = "graded",
    labels: Annotated[Path | None, typer.Option("--labels", help="human labels on some anchors: CSV/JSONL/Parquet "
                                                "with id, label (a grade, 0/1, or A/B/tie)")] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="a grade that passes (adds the pass-rate "
                                                    "difference)")] = None,
    margin: Annotated[list[str] | None, typer.Option("--margin", help="NAME=VALUE, repeatable: mean (a fraction "
                                                     "of the old scale's range), pass_rate, win_rate, agreement, "
                                                     "human_accuracy, human_kappa, bland_altman, system_tau")] = None,
    regrade: Annotated[int, typer.Option("--regrade", help="anchors the old judge grades a second time (its "
                                         "re-grade agreement is the ceiling; 0: taken as 1)")] = 0,
    link_method: Annotated[str, typer.Option("--link-method", help="equipercentile (keeps the old grades' mean and "
                                             "distribution) or isotonic (least squares per anchor)")] = "equipercentile",
    from_: Annotated[list[Path] | None, typer.Option("--from", help="folders holding validity, CAP or world runs "
                                                     "of both judges (repeatable): S and R (each judge at its own "
                                                     "matched point), each CAP condition and each world gain "
                                                     "compared new − old")] = None,
    old_card: Annotated[Path | None, in_option("--old-card", help="the old judge's card (a folder written by "
                                               "judgeaudit card, or its card.json): its validity, CAP and world "
                                               "runs are the audits compared (instead of --from)")] = None,
    new_card: Annotated[Path | None, in_option("--new-card", help="the new judge's card, as --old-card")] = None,
    audit_margin: Annotated[float | None, typer.Option("--audit-margin", help="how much worse the new judge's S "
                                                       "and R may be, and how far (±) its CAP conditions and "
                                                       "world gains may move (default 0.10)")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="cluster-bootstrap resamples")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="seed of the resamples and the link's folds")] = 0,
    store: Annotated[Path | None, out_option("--store", what="store", help="call store (default "
                                             "OUT/calls.sqlite)")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", help="calls in flight at once")] = None,
    api_base: ApiBaseOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    *,
    context: RunContext,
) -> None:
    """Can --new replace --old on these anchors? Paired equivalence tests (TOST) within margins, a monotone link
    tested on held-out anchors, and one verdict: EQUIVALENT, LINKABLE, NOT_COMPARABLE or BLIND."""
    if ctx.invoked_subcommand is not None:
        return
    for name, value in (("--old", old), ("--new", new), ("--items", items), ("--out", out)):
        if value is None:
            raise InputError("is required", field=name)
    run_command(old, new, items, out, form=form, labels=labels, threshold=threshold, margins=margin,
                regrade=regrade, link_method=link_method, from_=from_, old_card=old_card, new_card=new_card,
                audit_margin=audit_margin, n_boot=bootstrap, seed=seed, store=store, concurrency=concurrency,
                api_base=api_base, context=context)


def run_command(old: str, new: str, items: Path, out: Path, *, margins: list[str] | None = None,
                echo: Console = console, **options: Any):  # noqa: ANN201 - analyses.migrate.MigrateResult
    """A migrate run from its options (what the command's flags or an experiment file's keys give; ``margins``
    as ``NAME=VALUE`` texts, ``parse_margins``; the rest as ``run_migrate`` takes them): the run and its outputs
    (``run_migrate``), the verdict lines on stdout and the files written on the terminal. The result."""
    result = run_migrate(old, new, items, out, margins=parse_margins(margins), **options)
    for line in headline(result):
        print(line)
    echo.print(f"→ {out}/result.json, {out}/report.html", highlight=False)
    return result


def apply_link(link_path: Path, verdicts: str, out: Path, *, judge: str | None = None) -> pd.DataFrame:
    """The verdicts of the link's new judge with each score put on the old judge's scale: ``score`` is the
    linked grade, ``meta`` keeps the grade as given (``unlinked_score``) and the link's ``link_hash``."""
    import json

    from judgeaudit.analyses.migrate import Link
    from judgeaudit.commands.calibrate_inputs import read_verdicts
    from judgeaudit.io import write_jsonl, write_parquet
    from judgeaudit.runfolder import output_set
    from judgeaudit.runinfo import write_result
    from judgeaudit.validate import output_dir, spec_inputs

    output_dir(out, writes=("verdicts.jsonl", "verdicts.parquet", "result.json"),
               inputs=[link_path, *spec_inputs([verdicts]), Path(verdicts)], kind="migrate apply", quiet=True)
    try:
        link = Link.from_dict(json.loads(Path(link_path).read_text(encoding="utf-8")))
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror})", path=link_path, field="--link") from None
    except (ValueError, TypeError, AttributeError) as e:
        raise InputError(str(e), path=link_path, field="--link") from None
    v = read_verdicts(verdicts, judge or None)
    if v.judge != link.new_judge and judge is None:
        raise InputError(f"the link was fitted for judge {link.new_judge!r}, these verdicts are {v.judge!r} (give "
                         "--judge to pick the right one)", field="--verdicts")
    df = v.table.copy()
    score = pd.to_numeric(df["score"], errors="coerce") if "score" in df else pd.Series(np.nan, index=df.index)
    linked = pd.Series(link.apply(score.to_numpy(dtype=float)), index=df.index).where(score.notna())
    meta = df["meta"] if "meta" in df else pd.Series([{}] * len(df), index=df.index)
    df["meta"] = [{**(m if isinstance(m, dict) else {}), "unlinked_score": None if pd.isna(s) else float(s),
                   "link_hash": link.hash} for m, s in zip(meta, score, strict=True)]
    df["score"] = linked
    with output_set(out, "migrate apply") as dest:
        write_jsonl(dest / "verdicts.jsonl", df)
        write_parquet(dest / "verdicts.parquet", df)
        write_result(dest / "result.json", {"migrate_apply": {"link_hash": link.hash, "old_judge": link.old_judge,
                                                              "new_judge": link.new_judge, "judge": v.judge,
                                                              "linked": int(linked.notna().sum()),
                                                              "unlinked": int(linked.isna().sum())}},
                     inputs={"link": link_path, "verdicts": v.path})
    return df


@app.command("apply")
def apply_cmd(
    link: Annotated[Path, in_option("--link", help="a link.json written by judgeaudit migrate (read)")],
    verdicts: Annotated[str, typer.Option("--verdicts", help="the new judge's verdicts: replay:FILE, a run "
                                          "folder or a verdicts.parquet/.jsonl")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    judge: Annotated[str | None, typer.Option("--judge", help="the judge id, when the verdicts hold several")] = None,
) -> None:
    """Put the new judge's verdicts on the old judge's scale through a fitted link (each records its hash)."""
    df = apply_link(link, verdicts, out, judge=judge)
    console.print(f"{int(df['score'].notna().sum())} verdicts linked → {out}/verdicts.jsonl", highlight=False)

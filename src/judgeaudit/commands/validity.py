"""``judgeaudit validity run``: the (S, R) profile of one or more judges on a probe set."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console

from judgeaudit.commands.outputs import out_option
from judgeaudit.commands.batch import BatchOpt, BatchOutOpt
from judgeaudit.commands.tracking import MlflowExperimentOpt, MlflowOpt
from judgeaudit.commands.common import ALLOW_FAILURES_HELP, DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.common import RetriesOpt, RpmOpt, TemplateOpt, TimeoutOpt
from judgeaudit.commands import register
from judgeaudit.commands.common import CONSTRUCT_VALIDITY, ApiBaseOpt, BootstrapOpt, ConcurrencyOpt, SeedOpt, StoreOpt

VALIDITY_HELP = (f"Construct validity of a judge ({CONSTRUCT_VALIDITY} §2, §5.1–5.2): a valid judge keeps its "
                 "verdict under an edit that preserves the construct (invariance S) and changes it under a minimal "
                 "edit that changes the construct (sensitivity R); the (S, R) profile reports both, with intervals.")
app = typer.Typer(help=VALIDITY_HELP, no_args_is_help=True)
console = Console(stderr=True)

@dataclass(frozen=True)
class ValidityRun:
    probes: pd.DataFrame
    verdicts: pd.DataFrame
    result: object
    #: judge id -> its ``template`` and ``scale`` records (as in result.json)
    instruments: dict = field(default_factory=dict)
    #: the verdicts with every grade oriented as the profile read them (higher = more of the defect)
    oriented: pd.DataFrame | None = None


def run_validity(probes_path: str, judge_specs: list[str | dict], *, out: Path, store: Path | None = None,
                 s_floor: float = 0.90, bar: float = 0.75, n_boot: int = 2000, n_regrade: int = 48,
                 concurrency: int | None = None, api_base: str | None = None, seed: int = 0,
                 template: str | None = None) -> ValidityRun:
    """Grade every original and edited text with every judge (``template``: the judge template every
    api/local judge renders), then compute the profile on each judge's own scale."""
    from judgeaudit.analyses.grade_scale import orient, scale_record
    from judgeaudit.analyses.validity import validity_profile
    from judgeaudit.commands.common import build_judges
    from judgeaudit.runtime.executor import judge_all
    from judgeaudit.io import write_parquet
    from judgeaudit.runinfo import write_result
    from judgeaudit.probes.design import graded_requests, regrade_requests
    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame
    from judgeaudit.validate import check_options, output_dir, spec_inputs
    from judgeaudit.runtime.failures import summarise
    from judgeaudit.runfolder import output_set

    check_options(s_floor=s_floor, bar=bar, bootstrap=n_boot, regrade=n_regrade, concurrency=concurrency)
    bundled = probes_path == BUNDLED
    path = bundled_probes_path() if bundled else Path(probes_path)
    output_dir(out, writes=("result.json", "verdicts.parquet", "report.html"),
               inputs=[None if bundled else path, store, *spec_inputs(judge_specs)], kind="validity")
    probes = probes_frame(read_probes(path))
    requests = graded_requests(probes)
    requests = requests + regrade_requests(requests, n_regrade)
    judges = build_judges(judge_specs, api_base=api_base, template=template)
    verdicts = judge_all(judges, requests, store_path=store or out / "calls.sqlite", concurrency=concurrency)
    scales = {j.id: j.scale for j in judges if j.scale is not None}
    oriented = orient(verdicts, scales)
    result = validity_profile(probes, oriented, s_floor=s_floor, bar=bar, n_boot=n_boot, seed=seed)
    payload = result.to_dict()
    for j in judges:   # which template and scale each judge answered on
        entry = payload["judges"].get(j.id)
        if entry is not None:
            entry["template"] = j.template_record("graded")
            entry["scale"] = scale_record(scales.get(j.id), entry)
    payload["probe_set"] = "bundled" if bundled else str(path)
    payload["calls"] = summarise(verdicts).to_dict()
    with output_set(out, "validity") as dest:
        write_result(dest / "result.json", payload, verdicts, inputs={"probes": path})
        write_parquet(dest / "verdicts.parquet", verdicts)
    instruments = {jid: {k: e.get(k) for k in ("template", "scale")} for jid, e in payload["judges"].items()
                   if e.get("scale") is not None}
    return ValidityRun(probes, verdicts, result, instruments, oriented)


def sections(run: ValidityRun) -> list:
    """Report sections; their banners say when directions are author-intended, not human-verified."""
    from judgeaudit.report.instruments import instrument_section
    from judgeaudit.report.validity import validity_sections

    from judgeaudit.report.html import of_analysis
    from judgeaudit.report.validity import units_section

    units = [units_section(run.result, run.probes, run.oriented)] if run.oriented is not None else []
    return of_analysis(validity_sections(run.result) + units
                       + ([instrument_section(run.instruments)] if run.instruments else []),
                       f"validity · {run.result.n_probes} probes on {run.result.n_base} base items")


def write_report(run: ValidityRun, out: Path, *, echo: Console = console, extra: list | None = None) -> None:
    """OUT/report.html (with ``extra`` sections), the summary table on the terminal, and a line naming
    the files written."""
    from judgeaudit.report.html import write_page
    from judgeaudit.runfolder import output_set

    with output_set(out, "validity") as dest:
        write_page(dest / "report.html", "judgeaudit — validity profile", sections(run) + (extra or []))
    print_summary(run.result)
    echo.print(f"→ {out}/result.json, {out}/report.html")


def summary_table(result) -> pd.DataFrame:
    cols = ["judge", "S", "R", "R_plus", "wrong_way_rate", "R_scope", "R_strength", "gap", "tau", "interpretable",
            "usable_points", "regrade_agreement", "failed_calls", "parse_failures"]
    d = result.to_dict()["judges"]
    rows = [{"judge": j, **{c: v.get(c) for c in cols[1:]}, "failed_calls": v.get("errors")} for j, v in d.items()]
    return pd.DataFrame(rows, columns=cols)


def print_summary(result) -> None:
    """The summary table on the terminal: each estimate with its 95% interval as the report prints it
    (``value [lo, hi]``, from result.json's ``*_ci``)."""
    from rich.table import Table

    from judgeaudit.commands.common import with_interval

    judges = result.to_dict()["judges"]
    df = summary_table(result)
    table = Table(*df.columns, title="validity profile at matched invariance (95% intervals)")
    for row in df.to_dict("records"):
        ci = judges[row["judge"]]
        table.add_row(*("—" if v is None else with_interval(v, ci.get(f"{c}_ci")) if isinstance(v, float) else str(v)
                        for c, v in row.items()))
    Console(width=400).print(table)  # every column whole, on a terminal or in a log


@app.command("run")
@calls_checked
def run_cmd(
    judge: Annotated[list[str], typer.Option("--judge", help="judge spec (repeatable)")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    probes: Annotated[str, typer.Option("--probes", help="probe JSONL, or 'bundled'")] = "bundled",
    s_floor: Annotated[float, typer.Option("--s-floor", help="invariance floor, set before the run")] = 0.90,
    bar: Annotated[float, typer.Option("--bar", help="raw pairwise agreement bar for a slot/axis")] = 0.75,
    bootstrap: BootstrapOpt = 2000,
    regrade: Annotated[int, typer.Option("--regrade", help="requests re-graded for regrade agreement")] = 48,
    store: StoreOpt = None,
    concurrency: ConcurrencyOpt = None,
    api_base: ApiBaseOpt = None,
    seed: SeedOpt = 0,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
    batch: BatchOpt = None,
    batch_out: BatchOutOpt = None,
    mlflow: MlflowOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    judge_template: TemplateOpt = None,
    ledger: register.LedgerOpt = None,
    strict_register: register.StrictOpt = False,
) -> None:
    """The (S, R) validity profile of each judge on the probes: invariance S (verdict kept under construct-preserving
    edits) and sensitivity R (verdict changed under minimal construct-changing edits). Writes OUT/result.json,
    OUT/verdicts.parquet and OUT/report.html (and OUT/register.json with --ledger)."""
    from judgeaudit.runfolder import output_set

    led = register.load(ledger, strict_register)
    with output_set(out, "validity"):   # one set: a kill leaves the earlier run or this one, never a mix
        r = run_validity(probes, judge, out=out, store=store, s_floor=s_floor, bar=bar, n_boot=bootstrap,
                         n_regrade=regrade, concurrency=concurrency, api_base=api_base, seed=seed,
                         template=judge_template)
        entries, extra = register.mark(led, ledger, "validity", r.result.to_dict(), out) if led is not None else (None, None)
        write_report(r, out, extra=[extra] if extra else None)
    if entries is not None:
        register.enforce(entries, strict_register)

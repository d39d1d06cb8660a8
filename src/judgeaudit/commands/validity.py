"""``judgeaudit validity run``: the (S, R) profile of one or more judges on a probe set."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.analyses.validity.options import DEFAULTS, OPTIONS, WRITES
from judgeaudit.commands import register
from judgeaudit.commands.common import DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.declared import declared
from judgeaudit.runtime.context import RunContext

app = typer.Typer(help=HELP["validity"], no_args_is_help=True)
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
                 s_floor: float = DEFAULTS["s_floor"], bar: float = DEFAULTS["bar"],
                 n_boot: int = DEFAULTS["bootstrap"], n_regrade: int = DEFAULTS["regrade"],
                 concurrency: int | None = None, api_base: str | None = None, seed: int = DEFAULTS["seed"],
                 template: str | None = None, context: RunContext | None = None) -> ValidityRun:
    """Grade every original and edited text with every judge (``template``: the judge template every
    api/local judge renders; the calls made in ``context``, the command's ``RunContext``), then compute the
    profile on each judge's own scale."""
    from judgeaudit.analyses.grade_scale import orient, scale_record
    from judgeaudit.analyses.validity import validity_profile
    from judgeaudit.analyses.validity.schema import SCHEMA_VERSION, JudgeIdentity, ValidityFile
    from judgeaudit.commands.common import build_judges
    from judgeaudit.runtime.executor import judge_all
    from judgeaudit.io import write_parquet
    from judgeaudit.runinfo import write_result
    from judgeaudit.probes.design import validity_requests
    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame
    from judgeaudit.validate import output_dir, spec_inputs
    from judgeaudit.runtime.failures import summarise
    from judgeaudit.runfolder import output_set

    OPTIONS.check(s_floor=s_floor, bar=bar, bootstrap=n_boot, regrade=n_regrade, concurrency=concurrency)
    bundled = probes_path == BUNDLED
    path = bundled_probes_path() if bundled else Path(probes_path)
    output_dir(out, writes=WRITES,
               inputs=[None if bundled else path, store, *spec_inputs(judge_specs)], kind="validity")
    probes = probes_frame(read_probes(path))
    requests = validity_requests(probes, n_regrade)
    judges = build_judges(judge_specs, api_base=api_base, template=template)
    verdicts = judge_all(judges, requests, store_path=store or out / "calls.sqlite", concurrency=concurrency,
                         context=context)
    scales = {j.id: j.scale for j in judges if j.scale is not None}
    oriented = orient(verdicts, scales)
    result = validity_profile(probes, oriented, s_floor=s_floor, bar=bar, n_boot=n_boot, seed=seed)
    payload = {"schema_version": SCHEMA_VERSION, **result.to_dict()}
    for j in judges:   # which template and scale each judge answered on, and who the judge was
        entry = payload["judges"].get(j.id)
        if entry is not None:
            entry["template"] = j.template_record("graded")
            entry["scale"] = scale_record(scales.get(j.id), entry)
            entry["identity"] = JudgeIdentity(family=j.spec.family, model=j.spec.model, template=entry["template"],
                                              scale=entry["scale"]).model_dump(mode="json")
    payload["probe_set"] = "bundled" if bundled else str(path)
    payload["calls"] = summarise(verdicts).to_dict()
    ValidityFile.of(payload)   # what the readers read is there, under the names they read it by
    with output_set(out, "validity") as dest:
        write_result(dest / "result.json", payload, verdicts, inputs={"probes": path})
        write_parquet(dest / "verdicts.parquet", verdicts)
    instruments = {jid: {k: e.get(k) for k in ("template", "scale")} for jid, e in payload["judges"].items()
                   if e.get("scale") is not None}
    return ValidityRun(probes, verdicts, result, instruments, oriented)


def sections(run: ValidityRun) -> list:
    """Report sections; their banners say when directions are author-intended, not human-verified."""
    from judgeaudit.report.html import of_analysis
    from judgeaudit.report.instruments import instrument_section
    from judgeaudit.report.validity import units_section, validity_sections

    units = [s for s in [units_section(run.result, run.probes, run.oriented)] if s is not None] \
        if run.oriented is not None else []
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
@declared(OPTIONS, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def run_cmd(*, context: RunContext, **options: Any) -> None:
    """The (S, R) validity profile of each judge on the probes: invariance S (verdict kept under construct-preserving
    edits) and sensitivity R (verdict changed under minimal construct-changing edits). Writes OUT/result.json,
    OUT/verdicts.parquet and OUT/report.html (and OUT/register.json with --ledger)."""
    run_command({o.name: options[o.keyword] for o in OPTIONS.on_command()}, context=context)


def run_command(values: dict[str, Any], *, echo: Console = console,
                context: RunContext | None = None) -> ValidityRun:
    """A validity run from its options by their declared names (``analyses.validity.options``; what the
    command's flags or an experiment file's keys give; absent ones take their defaults): the run, the register
    with ``ledger``, the report, and exit 3 with ``strict_register`` when a headline number was not registered."""
    from judgeaudit.runfolder import output_set

    v = {**OPTIONS.defaults(), **values}
    out = v["out"]
    led = register.load(v["ledger"], v["strict_register"])
    with output_set(out, "validity"):   # one set: a kill leaves the earlier run or this one, never a mix
        r = run_validity(v["probes"], v["judges"], out=out, store=v["store"], s_floor=v["s_floor"], bar=v["bar"],
                         n_boot=v["bootstrap"], n_regrade=v["regrade"], concurrency=v["concurrency"],
                         api_base=v["api_base"], seed=v["seed"], template=v["template"], context=context)
        entries, extra = (register.mark(led, v["ledger"], "validity", r.result.to_dict(), out) if led is not None
                          else (None, None))
        write_report(r, out, echo=echo, extra=[extra] if extra else None)
    if entries is not None:
        register.enforce(entries, v["strict_register"])
    return r

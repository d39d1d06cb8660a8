"""``judgeaudit vp audit``: validation power of label sets (the construct-validity paper, Def. 6, §5.4,
App. E) — how much of each set a reader of surface form alone recovers, per input mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from judgeaudit.analyses.validation_power import ValidationPowerResult, audit_validation_power
from judgeaudit.analyses.validation_power.options import DEFAULT_JOBS, DEFAULT_PERMUTATIONS, OPTIONS, WRITES  # noqa: F401 - DEFAULT_JOBS: public here too
from judgeaudit.commands import register
from judgeaudit.commands.common import DEFAULT_BACKEND, BackendOpt, RayAddressOpt, run_context, with_interval
from judgeaudit.commands.declared import declared
from judgeaudit.commands.verbs import HELP
from judgeaudit.errors import InputError
from judgeaudit.runtime.context import RunContext

app = typer.Typer(help=HELP["vp"], no_args_is_help=True)
console = Console(stderr=True)



def parse_ceiling(text: str) -> tuple[str, str | None, tuple[float, float, float]]:
    """``NAME[:MODE]=VALUE,LO,HI`` → (set name, mode or None for both, (a_hum, lo, hi))."""
    if "=" not in text:
        raise InputError(f"--ceiling must look like NAME[:MODE]=VALUE,LO,HI, got {text!r}", field="ceiling")
    key, val = text.rsplit("=", 1)
    name, _, mode = key.partition(":") if key.endswith((":item", ":paired")) else (key, "", "")
    try:
        parts = [float(x) for x in val.split(",")]
    except ValueError:
        raise InputError(f"--ceiling values must be numbers, got {val!r}", field="ceiling") from None
    if len(parts) == 1:
        parts = [parts[0], parts[0], parts[0]]
    if len(parts) != 3 or not parts[1] <= parts[0] <= parts[2]:
        raise InputError("--ceiling needs VALUE,LO,HI with LO ≤ VALUE ≤ HI", field="ceiling")
    return name, mode or None, (parts[0], parts[1], parts[2])


def run_audit(specs: list[str], *, mode: str = "both", out: Path | None = None,
              permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, n_boot: int = 1000,
              ceilings: list[str] | None = None, transfer: bool = True, jobs: int = 1,
              extra: Callable[[ValidationPowerResult], list] | None = None,
              context: RunContext | None = None) -> ValidationPowerResult:
    """Load every spec, audit it in the requested mode(s), and (with ``out``) write
    ``out/result.json`` and ``out/report.html`` (with the sections ``extra(result)`` returns, e.g. the register
    of predicted values, appended). Returns the result. The sets are audited on ``context``'s backend (the
    command's ``RunContext``; None: the defaults): ``ray`` audits them in Ray tasks instead of ``jobs`` local
    processes, with the same result."""
    from judgeaudit.runtime.context import of as context_of

    from judgeaudit.datasets.registry import load_sets
    from judgeaudit.runinfo import write_result

    if mode not in ("item", "paired", "both"):
        raise InputError(f"--mode must be item, paired or both, got {mode!r}", field="mode")
    if not specs:
        raise InputError("give at least one --set SPEC", field="set")
    if permutations < 0:
        raise InputError("--permutations must be ≥ 0", field="permutations")
    if jobs < 1:
        raise InputError("--jobs must be ≥ 1", field="jobs")
    map_sets = context_of(context).backend.map
    modes = ("item", "paired") if mode == "both" else (mode,)
    tables, meta = {}, {}
    for spec in specs:
        for df in load_sets(spec):
            m = dict(df.attrs.get("judgeaudit", {}))
            name = m.get("name", spec)
            k = 2
            while name in tables:
                name = f"{m.get('name', spec)}#{k}"
                k += 1
            tables[name] = df
            meta[name] = m
    ceil: dict[tuple[str, str], tuple[float, float, float]] = {}
    for c in ceilings or []:
        name, cm, val = parse_ceiling(c)
        if name not in tables:
            raise InputError(f"--ceiling names unknown set {name!r} (sets: {', '.join(tables)})", field="ceiling")
        for mm in ([cm] if cm else modes):
            ceil[(name, mm)] = val
    result = audit_validation_power(tables, modes=modes, n_permutations=permutations, seed=seed, n_boot=n_boot,
                                    ceilings=ceil, transfer=transfer, set_meta=meta, n_jobs=jobs,
                                    map_sets=map_sets)
    if out is not None:
        from judgeaudit.report.html import write_page
        from judgeaudit.report.validation_power import audited_sets_line, vp_sections
        from judgeaudit.runfolder import output_set

        with output_set(out, "vp") as dest:   # one set: a kill leaves the earlier run or this one, never a mix
            from judgeaudit.analyses.validation_power.schema import VpFile, with_units

            payload = with_units(result.to_dict())   # versioned; each row with the groups its intervals resampled
            VpFile.of(payload)   # what the readers read is there, under the names they read it by
            write_result(dest / "result.json", payload,   # inputs: each set spec's file or folder, hashed
                         inputs={f"set:{spec}": path for spec, path in zip(specs, spec_paths(specs), strict=True)})
            preds = result.predictions_frame()
            if len(preds):   # the rows behind a_imp: each member's out-of-fold prediction of each label
                from judgeaudit.io import write_parquet

                write_parquet(dest / "predictions.parquet", preds)
            write_page(dest / "report.html", "judgeaudit — validation power",
                       [*vp_sections(result), *(extra(result) if extra else [])], subtitle=audited_sets_line(result))
    return result


def spec_paths(specs: list[str]) -> list[Path | None]:
    """The file or folder each data-set spec (``NAME:PATH?…``) reads; None for a spec without a path."""
    from judgeaudit.validate import set_inputs

    return [(set_inputs([spec]) or [None])[0] for spec in specs]


def _fmt(v: object, pct: bool = False) -> str:
    if v is None or v != v:
        return "—"
    return f"{100 * v:.1f}%" if pct else (f"{v:.3f}" if isinstance(v, float) else str(v))


def _count(v: object) -> str:
    return "—" if v is None or v != v else str(int(v))


def summary_lines(result: ValidationPowerResult) -> list[str]:
    """One line per label set and input mode: the impoverished family's best κ with its interval (as the report
    prints it), the human ceiling with its interval where there is one, and VP."""
    lines = []
    for r in result.sets:
        if not r.applicable:
            lines.append(f"{r.set_name} · {r.mode}: not applicable ({r.reason})")
            continue
        unit = "pairs" if r.mode == "paired" else "items"
        parts = [f"κ {with_interval(r.a_imp, r.a_imp_ci)} (best member {r.a_imp_member}; n = {r.n} {unit})"]
        if r.mode == "paired":
            parts.append(f"accuracy {_fmt(r.a_imp_accuracy, True)}, prefer shorter {_fmt(r.prefer_shorter_accuracy, True)}")
        if r.a_hum is not None:
            parts.append(f"human ceiling {with_interval(r.a_hum, r.a_hum_ci)}")
        if r.vp is not None:
            parts.append(f"VP {r.vp:+.3f}{' (not resolvable: intervals overlap)' if r.resolvable is False else ''}")
        lines.append(f"{r.set_name} · {r.mode}: " + "; ".join(parts))
    return lines


def print_table(result: ValidationPowerResult) -> None:
    """The terminal summary: ``summary_lines``, κ as ``value [lo, hi]`` (95% intervals)."""
    echo = Console(soft_wrap=True)
    for line in summary_lines(result):
        echo.print(line, highlight=False, markup=False)


@app.callback()
def _group() -> None:
    """Validation power of label sets (“Construct Validity for LLM-as-a-Judge Evaluation”, Def. 6, App. E)."""


@app.command("audit")
@declared(OPTIONS, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def audit(**options: Any) -> None:
    """Audit label sets with the frozen impoverished family, in per-item and/or paired mode."""
    context = run_context(backend=options["backend"], address=options["ray_address"])
    run_command({o.name: options[o.keyword] for o in OPTIONS.on_command()}, context=context)


def run_command(values: dict[str, Any], *, echo: Console = console,
                context: RunContext | None = None) -> ValidationPowerResult:
    """A validation-power audit from its options by their declared names (``analyses.validation_power.options``;
    what the command's flags or an experiment file's keys give; absent ones take their defaults): the audit (on
    ``context``'s backend: the command's ``RunContext``), the register with ``ledger``, the report, and exit 3 with
    ``strict_register`` when a headline number was not registered. The result."""
    from judgeaudit.runfolder import output_set
    from judgeaudit.validate import output_dir, set_inputs

    v = {**OPTIONS.defaults(), **values}
    sets, out, ledger, strict_register = v["sets"], v["out"], v["ledger"], v["strict_register"]
    OPTIONS.check(permutations=v["permutations"])
    output_dir(out, writes=WRITES, inputs=set_inputs(sets), kind="vp")
    led = register.load(ledger, strict_register)
    entries: list = []

    with output_set(out, "vp"):   # the result, the report and the register as one set
        result = run_audit(list(sets), mode=v["mode"], out=out, permutations=v["permutations"], seed=v["seed"],
                           ceilings=list(v["ceilings"] or []), transfer=not v["no_transfer"], jobs=v["jobs"],
                           extra=register.sections(led, ledger, "vp", out, entries), context=context)
    print_table(result)
    echo.print(f"wrote {out / 'result.json'} and {out / 'report.html'}")
    if led is not None:
        register.enforce(entries, strict_register)
    return result

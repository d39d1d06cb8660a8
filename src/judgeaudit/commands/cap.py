"""``judgeaudit cap run|build``: conditional accuracy profiles of pairwise judges
(the conditional-accuracy-profiles paper) on published outputs (zero calls) and live judges."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.analyses.cap import CapResult, cap_profile
from judgeaudit.commands.common import ALLOW_FAILURES_HELP, DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.common import RpmOpt, TimeoutOpt
from judgeaudit.commands import register
from judgeaudit.datasets._common import CoverageCell, judge_family, table_family
from judgeaudit.errors import InputError
from judgeaudit.commands.common import ALLOW_SAME_FAMILY, STORE_HELP, ApiBaseOpt
from judgeaudit.commands.declared import declared
from judgeaudit.runtime.context import RunContext
from judgeaudit.analyses.cap.options import DEFAULTS, OPTIONS, WRITES

app = typer.Typer(help=HELP["cap"],
                  no_args_is_help=True)
console = Console(stderr=True)

_CAP_ADAPTERS = ("judgebench", "llmbar", "rm_bench")


def _adapter(name: str) -> Any:
    from judgeaudit.datasets import judgebench, llmbar, rm_bench
    from judgeaudit.probes import cap_testbed

    return {"judgebench": judgebench, "llmbar": llmbar, "rm_bench": rm_bench, "cap_testbed": cap_testbed}[name]


def coverage_for(adapter: str, source_sets: list[str]) -> dict[str, dict[str, CoverageCell]]:
    """The adapter's coverage declaration for each source_set it produced."""
    mod = _adapter(adapter)  # judgebench, llmbar, rm_bench
    cov = mod.COVERAGE
    if all(isinstance(v, CoverageCell) for v in cov.values()):
        return {s: cov for s in source_sets}
    return {s: cov[s] for s in source_sets}


def load_cap_set(spec: str) -> tuple[pd.DataFrame, dict[str, dict[str, CoverageCell]], str, str]:
    """Load a ``judgebench:PATH`` / ``llmbar:PATH`` / ``rm_bench:PATH`` spec (options as in
    ``datasets.registry``); returns (pairs, coverage per source_set, adapter, path)."""
    from judgeaudit.datasets.registry import load_set, parse_spec

    if spec.startswith("cap_testbed:"):
        from judgeaudit.probes import cap_testbed

        path = spec.split(":", 1)[1]
        df = cap_testbed.load_pairs(path)
        return df, {s: cap_testbed.COVERAGE for s in df["source_set"].unique()}, "cap_testbed", path
    name, path, opts = parse_spec(spec)
    if name not in _CAP_ADAPTERS:
        raise InputError(f"CAP needs a pairwise set with a coverage declaration ({', '.join(_CAP_ADAPTERS)}); "
                         f"got {name!r}", field="set")
    df = load_set(spec)
    sets = list(dict.fromkeys(df["source_set"]))
    cov = _adapter(name).coverage(df) if hasattr(_adapter(name), "coverage") else coverage_for(name, sets)
    if "name" in opts and len(sets) == 1:
        df = df.assign(source_set=opts["name"])
        cov = {opts["name"]: cov[sets[0]]}
    return df, cov, name, path


def _restrict(tables: dict[str, pd.DataFrame], pair_ids: set[str]) -> dict[str, pd.DataFrame]:
    out = {}
    for jid, t in tables.items():
        t = t[t["pair_id"].isin(pair_ids)]
        if len(t):
            out[jid] = t.reset_index(drop=True)
    return out


def run_cap(set_specs: list[str], *, judge_specs: list[str] | None = None, published: bool = False,
            evaluator_spec: str | None = None, allow_same_family: bool = False, human: Path | None = None,
            stress: list[str] | None = None, n_boot: int = DEFAULTS["bootstrap"], seed: int = DEFAULTS["seed"],
            store: Path | None = None, out: Path | None = None, concurrency: int | None = None,
            failures: str = DEFAULTS["failures"],
            api_base: str | None = None, augment: list[str] | None = None,
            generator_spec: str | None = None, c8_sample: int | None = None,
            extra: Callable[[CapResult], list] | None = None, template: str | None = None,
            context: RunContext | None = None) -> CapResult:
    """Load the sets, collect judges (published outputs and/or live judges run in both orders
    through the call store; ``template``: the judge template every live api/local judge renders), optionally run the C8 evaluator, estimate the profile, and with
    ``out`` write ``out/result.json`` and ``out/report.html`` (with the sections ``extra(result)``
    returns, e.g. the register of predicted values, appended); every call made in ``context`` (the command's
    ``RunContext``; None: the defaults)."""
    from judgeaudit.analyses.cap_design import (
        evaluator_agreement,
        failure_counts,
        pairwise_requests,
        rationale_labels,
        rationale_requests,
        two_order_table,
    )
    from judgeaudit.analyses.cap import pair_verdicts
    from judgeaudit.datasets import published as pub

    if not set_specs:
        raise InputError("give at least one --set SPEC", field="set")
    store_path = Path(store) if store else (Path(out) / "calls.sqlite" if out else Path("judgeaudit-calls.sqlite"))
    frames, coverage, tables, adapters = [], {}, {}, {}
    reconciled: list[pd.DataFrame] = []   # LLMBar's published statistics.json, file by file
    n_published = 0   # verdicts of published judge outputs: answered before any run, at no recorded time
    set_paths: dict[str, str] = {}
    for spec in set_specs:
        df, cov, adapter, path = load_cap_set(spec)
        set_paths[f"set:{spec}"] = path
        adapters.update(dict.fromkeys(cov, adapter))
        clash = set(cov) & set(coverage)
        if clash:
            raise InputError(f"set name(s) {sorted(clash)} given twice; add ?name=… to one spec", field="set")
        if augment:
            from judgeaudit.commands.common import build_judges
            from judgeaudit.probes.cap_testbed import augment_pairs

            if not generator_spec:
                raise InputError("--augment needs --generator SPEC", field="generator")
            admissible = bool(getattr(_adapter(adapter), "AUGMENTATION_ADMISSIBLE", False))
            if admissible:
                (gen,) = build_judges([generator_spec], api_base=api_base)
                store_path.parent.mkdir(parents=True, exist_ok=True)
                df = augment_pairs(df, generator=gen, admissible=True, kinds=tuple(augment), store_path=store_path,
                                   context=context)
            else:  # inadmissible: the style/length cells stay unavailable (§3.2)
                console.print(f"{adapter}: augmentation not admissible; C5/C6 stay as declared")
        frames.append(df)
        coverage.update(cov)
        if published:
            found = _restrict(pub.published_judges(path), set(df["pair_id"]))
            n_published += sum(len(t) for t in found.values())
            for jid, t in found.items():
                tables[jid] = pd.concat([tables[jid], t], ignore_index=True) if jid in tables else t
            if adapter == "llmbar":
                from judgeaudit.datasets import llmbar

                reconciled.append(llmbar.reconcile_statistics(path, df, judges=set(found)))
    pairs = pd.concat(frames, ignore_index=True)
    live_failures = None
    called: list[pd.DataFrame] = []   # every live verdict table, for the per-judge call summary
    templates: dict[str, Any] = {}    # live judge id -> the template it answered with
    if judge_specs:
        from judgeaudit.commands.common import build_judges
        from judgeaudit.runtime.executor import judge_all

        judges = build_judges(list(judge_specs), api_base=api_base, template=template)
        store_path.parent.mkdir(parents=True, exist_ok=True)
        verdicts = judge_all(judges, pairwise_requests(pairs), store_path=store_path, concurrency=concurrency,
                             context=context)
        live_failures = failure_counts(verdicts) if len(verdicts) else None
        called.append(verdicts)
        templates = {j.id: j.template_record("pairwise") for j in judges}
        for j in judges:
            t = two_order_table(verdicts, j.id)
            fam = judge_family(j)
            tables[j.id] = t.assign(family=t["family"].fillna(fam) if t["family"].notna().any() else fam)
    if published and not tables and not judge_specs:
        raise InputError("--published found no judge outputs shipped with these sets", field="published")
    if not tables:
        raise InputError("no judges: pass --published and/or --judge SPEC", field="judge")
    labels, evaluator = None, None
    if evaluator_spec:
        from judgeaudit.analyses.cap_design import check_evaluator_family
        from judgeaudit.commands.common import build_judges
        from judgeaudit.runtime.executor import judge_all

        (ev,) = build_judges([evaluator_spec], api_base=api_base)
        ev_family = judge_family(ev)
        same = check_evaluator_family(ev_family, {j: table_family(t) for j, t in tables.items()},
                                      allow_same_family)
        reqs = rationale_requests(pairs, tables, evaluator_family=ev_family, allow_same_family=allow_same_family,
                                  sample=c8_sample, seed=seed)
        store_path.parent.mkdir(parents=True, exist_ok=True)
        ver = judge_all([ev], reqs, store_path=store_path, concurrency=concurrency, context=context)
        called.append(ver)
        labels = rationale_labels(ver)
        evaluator = {"id": ev.id, "family": ev_family, "allow_same_family": bool(allow_same_family),
                     "same_family_judges": same, "n_requests": len(reqs), "sample_per_judge": c8_sample,
                     "n_unreadable": int(labels["supports"].isna().sum())}
        if human is not None:
            from judgeaudit.io import read_table

            evaluator["human_agreement"] = evaluator_agreement(labels, read_table(human))
    stress_pairs = []
    for s in stress or []:
        if "=" not in s:
            raise InputError(f"--stress must look like BASE=STRESS, got {s!r}", field="stress")
        a, b = s.split("=", 1)
        stress_pairs.append((a, b))
    result = cap_profile(pairs, tables, coverage, rationale_labels=labels, evaluator=evaluator,
                         stress=stress_pairs, n_boot=n_boot, seed=seed, failures=failures,  # type: ignore[arg-type]
                         benchmark_scores=benchmark_scores(pairs, tables, adapters))
    if reconciled:
        result = dataclasses.replace(result, published_statistics=pd.concat(reconciled, ignore_index=True))
    if out is not None:
        from judgeaudit.records import verdicts_frame
        from judgeaudit.runinfo import answer_record
        from judgeaudit.runtime.failures import summarise

        calls = summarise(pd.concat(called, ignore_index=True)) if called else None
        answers = answer_record(pd.concat(called, ignore_index=True) if called else verdicts_frame([]))
        answers = {**answers, "calls": answers["calls"] + n_published, "replayed": answers["replayed"] + n_published}
        write_outputs(result, Path(out), live_failures=live_failures, calls=calls, answers=answers,
                      extra=extra(result) if extra else None, inputs=set_paths, templates=templates,
                      verdicts=pair_verdicts(pairs, tables))
    return result


def benchmark_scores(pairs: pd.DataFrame, tables: dict[str, pd.DataFrame], adapters: dict[str, str]) -> pd.DataFrame:
    """Each set's own headline score of each judge, where its adapter provides one
    (``official_score_from_table(table, pairs)`` in percent, described by ``official_score``'s
    docstring; e.g. JudgeBench's pair-level rule), on the set's non-augmented pairs."""
    rows = []
    for set_name, adapter in adapters.items():
        mod = _adapter(adapter)
        score = getattr(mod, "official_score_from_table", None)
        if score is None:
            continue
        doc = (getattr(mod, "official_score", score).__doc__ or adapter).strip().splitlines()[0]
        sp = pairs[pairs["source_set"] == set_name]
        if "augmented" in sp.columns:
            sp = sp[~sp["augmented"].fillna(False).astype(bool)]
        for jid, t in tables.items():
            t = t[t["pair_id"].isin(sp["pair_id"])]
            if len(t):
                rows.append({"set": set_name, "judge_id": jid, "rule": doc.replace("``", ""),
                             "value": score(t, sp) / 100.0, "n": int(t["pair_id"].nunique())})
    return pd.DataFrame(rows, columns=["set", "judge_id", "rule", "value", "n"])


def write_outputs(result: CapResult, out: Path, *, live_failures: pd.DataFrame | None = None,
                  title: str = "judgeaudit: conditional accuracy profiles", calls: Any = None,
                  extra: list | None = None, answers: dict[str, Any] | None = None,
                  inputs: dict[str, str] | None = None, templates: dict[str, Any] | None = None,
                  verdicts: pd.DataFrame | None = None) -> None:
    """OUT/result.json and OUT/report.html; ``templates`` (live judge id -> its template record) is
    recorded as ``sets.<set>.judges.<id>.template``; ``calls`` (a ``runtime.failures.CallSummary`` of the live
    judges and the evaluator) adds ``calls`` to the result and a judge-calls section to the report;
    the result's ``published_statistics`` (LLMBar's statistics.json, file by file) adds a section;
    ``extra`` sections go at the end of the report; ``verdicts`` (``analyses.cap.pair_verdicts``: every judge's
    verdict on every pair) is written as OUT/pair_verdicts.parquet and shown, item by item, in the report."""
    from judgeaudit.report.cap import cap_sections
    from judgeaudit.report.html import write_page
    from judgeaudit.runfolder import output_set
    from judgeaudit.runinfo import write_result

    from judgeaudit.analyses.cap.schema import CapFile

    d = result.to_dict()
    for block in d["sets"].values():
        for jid, rec in (templates or {}).items():
            if jid in block["judges"]:
                block["judges"][jid]["template"] = block["judges"][jid]["identity"]["template"] = rec
    sections = cap_sections(result, verdicts)
    if live_failures is not None:
        d["call_failures"] = live_failures.to_dict(orient="records")
    if calls is not None:
        from judgeaudit.report.calls import calls_section

        d["calls"] = calls.to_dict()
        sections.append(calls_section(calls))
    if len(result.published_statistics):
        from judgeaudit.report.cap import published_statistics_section

        sections.append(published_statistics_section(result.published_statistics))
    sections += extra or []
    if answers is not None:   # when the verdicts were answered (judgeaudit.runinfo.answer_record)
        d["answers"] = answers
    CapFile.of(d)   # what the readers read is there, under the names they read it by
    with output_set(out, "cap") as dest:   # one set: a kill leaves the earlier run or this one, never a mix
        write_result(dest / "result.json", d, inputs=inputs)   # inputs: the set files' hashes
        if len(result.units):   # per base item, for a paired ``card diff``
            from judgeaudit.io import write_parquet

            write_parquet(dest / "units.parquet", result.units)
        if verdicts is not None and len(verdicts):
            from judgeaudit.io import write_parquet

            write_parquet(dest / "pair_verdicts.parquet", verdicts)
        write_page(dest / "report.html", title, sections)


@app.command("run")
@calls_checked
@declared(OPTIONS, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def run_cmd(*, context: RunContext, **options: Any) -> None:
    """Profile judges on pairwise benchmarks: DIR/result.json and DIR/report.html."""
    run_command({o.name: options[o.keyword] for o in OPTIONS.on_command()}, context=context)


def run_command(values: dict[str, Any], *, echo: Console = console, context: RunContext | None = None) -> CapResult:
    """A CAP run from its options by their declared names (``analyses.cap.options``; what the command's flags or
    an experiment file's keys give; absent ones take their defaults): the checks before anything is read or
    called, the run, the register with ``ledger``, the tables on the terminal, and exit 3 with
    ``strict_register`` when a headline number was not registered."""
    from judgeaudit.runfolder import output_set
    from judgeaudit.validate import output_dir, set_inputs

    v = {**OPTIONS.defaults(), **values}
    out, ledger, strict = v["out"], v["ledger"], v["strict_register"]
    OPTIONS.check(bootstrap=v["bootstrap"], concurrency=v["concurrency"])
    output_dir(out, writes=WRITES,
               inputs=[*set_inputs(v["sets"]), v["human"], v["store"]], kind="cap")
    led = register.load(ledger, strict)
    if v["augment"] and any(a not in ("style", "length") for a in v["augment"]):
        raise InputError("--augment takes style or length", field="augment")
    entries: list = []

    with output_set(out, "cap"):   # the result, the report and the register as one set
        result = run_cap(v["sets"], judge_specs=v["judges"], published=v["published"], evaluator_spec=v["evaluator"],
                         allow_same_family=v["allow_same_family"], human=v["human"], stress=v["stress"],
                         n_boot=v["bootstrap"], seed=v["seed"], store=v["store"], out=out,
                         concurrency=v["concurrency"], failures=v["failures"], api_base=v["api_base"],
                         augment=v["augment"], generator_spec=v["generator"], c8_sample=v["c8_sample"],
                         extra=register.sections(led, ledger, "cap", out, entries), template=v["template"],
                         context=context)
    from judgeaudit.report.cap import benchmark_score_table, profile_table

    for s in dict.fromkeys(result.cells["set"]):
        echo.print(f"[bold]{s}[/bold]")
        echo.print(profile_table(result, s).to_string(index=False), highlight=False, soft_wrap=True)
    bst = benchmark_score_table(result)
    if len(bst):
        echo.print("[bold]benchmark's own score beside CAP overall / strict (failures excluded | wrong)[/bold]")
        echo.print(bst.drop(columns=["rule"]).to_string(index=False), highlight=False, soft_wrap=True)
    ps = result.published_statistics
    if len(ps):
        from judgeaudit.report.cap import published_statistics_sentence

        echo.print(published_statistics_sentence(ps), highlight=False, soft_wrap=True)
    echo.print(f"wrote {out / 'result.json'} and {out / 'report.html'}")
    if led is not None:
        register.enforce(entries, strict)
    return result


@app.command("build")
@calls_checked
def build_cmd(
    source: Annotated[Path, typer.Option("--source", help="QA source (jsonl/csv/parquet with question, answer)")],
    generator: Annotated[str, typer.Option("--generator", help="generator judge spec")],
    gate: Annotated[str, typer.Option("--gate", help="subtlety gate judge spec (another family)")],
    out: Annotated[Path, out_option("--out", what="file", help="output JSONL of pairwise items")],
    question_field: Annotated[str, typer.Option("--question-field", help="the source's question column")] = "question",
    answer_field: Annotated[str, typer.Option("--answer-field", help="the source's right-answer column")] = "answer",
    error_types: Annotated[list[str] | None, typer.Option("--error-type", help="an error type to plant in the variants (repeat; default: every type)")] = None,
    max_items: Annotated[int | None, typer.Option("--max-items", help="build from the first N source rows only")] = None,
    threshold: Annotated[int, typer.Option("--threshold", help="subtlety needed (1-5)")] = 4,
    retries: Annotated[int, typer.Option("--retries", help="regenerations below threshold")] = 3,
    qc_retries: Annotated[int, typer.Option("--qc-retries", help="regenerations of a variant failing the length "
                                            "or label-preservation check")] = 3,
    allow_same_family: Annotated[bool, typer.Option(ALLOW_SAME_FAMILY, help="allow a generator and gate of one family (recorded)")] = False,
    store: Annotated[Path | None, out_option("--store", what="store", help=STORE_HELP + " (default: OUT with the suffix .calls.sqlite)")] = None,
    api_base: ApiBaseOpt = None,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    call_timeout: TimeoutOpt = None,
    call_rpm: RpmOpt = None,
    *,
    context: RunContext,
) -> None:
    """Build a controlled CAP testbed (judgerEva-style) from a QA source with your own generator."""
    from judgeaudit.commands.common import build_judges
    from judgeaudit.io import read_table, write_jsonl
    from judgeaudit.probes.cap_testbed import ERROR_TYPES, build_testbed
    from judgeaudit.validate import check_options, output_file

    check_options(threshold=threshold, max_items=max_items, retries=retries)
    output_file(out, inputs=[source, store or out.with_suffix(".calls.sqlite")])
    src = read_table(source)
    for f in (question_field, answer_field):
        if f not in src.columns:
            raise InputError("QA source lacks a column", path=source, field=f)
    if max_items:
        src = src.head(max_items)
    gen, gat = build_judges([generator, gate], api_base=api_base)
    items = build_testbed(src.rename(columns={question_field: "question", answer_field: "answer"}),
                          generator=gen, gate=gat, error_types=tuple(error_types or ERROR_TYPES),
                          threshold=threshold, max_retries=retries, allow_same_family=allow_same_family,
                          store_path=store or out.with_suffix(".calls.sqlite"), qc_retries=qc_retries,
                          context=context)
    write_jsonl(out, items)
    plain = [r["meta"] for r in items if r["variant"] == "original"]
    rejected = sum(len(x) for m in plain for x in m["qc"].values())
    dropped = sum(len(m["dropped_variants"]) for m in plain)
    console.print(f"wrote {len(items)} pairwise items to {out} ({rejected} variant attempts rejected by QC and "
                  f"regenerated; {dropped} variants left out after {qc_retries + 1} attempts)")


def cap_demo(n_boot: int = 200, seed: int = 0) -> list:
    """CAP sections built from the judge outputs the package carries, with zero model calls: judgeaudit's own
    JudgeBench-format fixture (self-written pairs, simulated judges; ``judgeaudit/data/judgebench_fixture``)
    and the trimmed published LLMBar outputs (``judgeaudit/data/llmbar``)."""
    from judgeaudit.analyses.cap import pair_verdicts
    from judgeaudit.card.defaults import FIXTURE_SET
    from judgeaudit.datasets import judgebench, llmbar
    from judgeaudit.report.cap import cap_sections

    data = Path(__file__).resolve().parents[1] / "data"
    jb = judgebench.load_pairs(data / FIXTURE_SET).assign(source_set=FIXTURE_SET)
    lb = llmbar.load_pairs(data / "llmbar")
    pairs = pd.concat([jb, lb], ignore_index=True)
    tables = {**judgebench.published_judges(data / FIXTURE_SET), **llmbar.published_judges(data / "llmbar")}
    cov = {FIXTURE_SET: judgebench.COVERAGE, **{s: llmbar.COVERAGE[s] for s in lb["source_set"].unique()}}
    result = cap_profile(pairs, tables, cov, n_boot=n_boot, seed=seed)
    sections = cap_sections(result, pair_verdicts(pairs, tables))
    for s in sections[:1]:
        s.banners.append("Demo: judgeaudit's own JudgeBench-format fixture (self-written pairs, simulated judges) "
                         "and a trimmed copy of the published LLMBar judge outputs "
                         "(see judgeaudit/data/*/PROVENANCE.json); intervals are wide by construction.")
    return sections

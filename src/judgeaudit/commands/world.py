"""``judgeaudit world``: what a judge must be shown (blind-spot §3–6).

``world run`` judges every answer of a world set under each arm (K votes each), pools and scores
them (rates with intervals, paired gains with McNemar, span matchers, Spearman ρ with a permutation
p of per-answer gains and false alarms against ``--correlate`` covariates), and writes
``result.json``, ``verdicts.parquet`` and ``report.html``; ``world factorial``
runs the 2^k cells of question × source × typed (× instrument) and adds the Shapley values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.analyses.world.options import DEFAULTS, FACTORIAL, OPTIONS
from judgeaudit.analyses.world.schema import WorldFile
from judgeaudit.commands.common import DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.declared import declared
from judgeaudit.runfolder import output_set
from judgeaudit.runtime.context import RunContext

app = typer.Typer(help=HELP["world"],
                  no_args_is_help=True)
console = Console(stderr=True)

WRITES = ("result.json", "verdicts.parquet", "decisions.parquet", "report.html", "report.md")


@dataclass(frozen=True)
class WorldResult:
    result: dict
    verdicts: pd.DataFrame
    decisions: pd.DataFrame


def load_set(set_spec: str, max_items: int | None) -> tuple[list, dict]:
    """The world items of ``set_spec`` (the data adapters' ``load_world``), the first ``max_items`` by whole
    groups (``first_groups``), and the set's provenance (files read, PROVENANCE.json, variant, counts excluded)."""
    from judgeaudit.errors import InputError

    try:
        from judgeaudit.datasets.world import load_world
    except ModuleNotFoundError as e:
        if e.name != "judgeaudit.datasets.world":
            raise
        raise InputError("this install has no world set adapters (judgeaudit.datasets.world)", field="--set") from None
    from judgeaudit.datasets.registry import first_groups

    ws = load_world(set_spec)
    return first_groups(list(ws.items), max_items), dict(ws.provenance)


def load_items(set_spec: str, max_items: int | None) -> list:
    """The world items of ``set_spec``, first ``max_items``."""
    return load_set(set_spec, max_items)[0]


def sampled_specs(specs: Sequence[str | dict], temperature: float) -> list[str | dict]:
    """Sampled backends get the vote temperature (the paper's 0.3) unless their spec sets one; reference and
    replay judges do not."""
    out: list[str | dict] = []
    for s in specs:
        d = dict(s) if isinstance(s, dict) else {"spec": s}
        if d["spec"].startswith(("api:", "local")):
            d.setdefault("temperature", temperature)
            out.append(d)
        else:
            out.append(s)
    return out


def _check(out: Path, set_spec: str, judges: Sequence[str], store: Path | None, **options) -> None:
    from judgeaudit.validate import output_dir, set_inputs, spec_inputs

    OPTIONS.check(**options)
    output_dir(out, writes=WRITES, inputs=[*set_inputs([set_spec]), store, *spec_inputs(judges)], kind="world")


SPLITS = ("all", "report", "dev")


def split_items(items: list, split: str) -> tuple[list, dict]:
    """``items`` restricted to a split of the structural judge's recorded development split
    (``structural.calibrate.is_dev_item``): ``all``, ``report`` (development items left out) or
    ``dev``; and the record of what was kept."""
    from judgeaudit.errors import InputError
    from judgeaudit.structural.calibrate import is_dev_item
    from judgeaudit.structural.graph import DEV_SPLIT

    if split not in SPLITS:
        raise InputError(f"split must be one of {', '.join(SPLITS)}, got {split!r}", field="--split")
    dev = [is_dev_item(it) for it in items]
    keep = [it for it, d in zip(items, dev, strict=True) if split == "all" or d == (split == "dev")]
    n_dev = sum(dev)
    return keep, {"split": split, "dev_items_in_run": n_dev if split != "report" else 0,
                  "dev_items_left_out": n_dev if split == "report" else 0, "rule": DEV_SPLIT["rule"],
                  "source_set": DEV_SPLIT["source_set"]}


def judge_pairs(judge, items: list, complaints: list[tuple[str, dict]], *, store_path,
                concurrency: int | None = None, progress: bool = True, context: RunContext | None = None):
    """Ask ``judge`` about every (complaint, segment) pair of ``complaints`` (through the call store, in
    ``context``) and return the generous matcher reading its replies (``analyses.world.matching``)."""
    from judgeaudit.analyses.world.matching import JudgeMatcher, pair_requests, read_yes_no
    from judgeaudit.runtime.executor import judge_all

    reqs = pair_requests(items, complaints)
    if not reqs:
        return JudgeMatcher()
    v = judge_all([judge], reqs, store_path=store_path, concurrency=concurrency, progress=progress, context=context)
    return JudgeMatcher({r.request_id: (read_yes_no(r.raw) if r.error is None else None)
                         for r in v.itertuples(index=False)})


def run_world_cmd(set_spec: str, judge_specs: Sequence[str], arms: Sequence[str], *, out: Path,
                  votes: int = DEFAULTS["votes"], form: str = DEFAULTS["form"],
                  max_items: int | None = DEFAULTS["max_items"], store: Path | None = None,
                  concurrency: int | None = None, api_base: str | None = None, n_boot: int = DEFAULTS["bootstrap"],
                  seed: int = DEFAULTS["seed"], temperature: float = DEFAULTS["temperature"],
                  strict_threshold: float = DEFAULTS["strict_threshold"], top_k: int = DEFAULTS["top_k"],
                  items: list | None = None, encoder=None, progress: bool = True,
                  matcher_judge: str | None = None, second_matcher_judge: str | None = None,
                  covariates: Sequence[str] = DEFAULTS["correlate"],
                  permutations: int = DEFAULTS["permutations"], alternative: str = DEFAULTS["alternative"],
                  split: str = DEFAULTS["split"], template: str | None = None,
                  context: RunContext | None = None) -> WorldResult:
    """Run the arms and write the outputs (``items`` given: used instead of loading ``set_spec``;
    ``split``: see :func:`split_items`; ``template``: a world-family judge template every api/local
    judge renders; ``context``: the command's ``RunContext``, the calls' options)."""
    from judgeaudit.commands.common import build_judges
    from judgeaudit.errors import InputError
    from judgeaudit.io import write_parquet
    from judgeaudit.runinfo import write_result
    from judgeaudit.runtime.failures import record_parts, summarise
    from judgeaudit.world.arms import get_arm
    from judgeaudit.world.requests import arm_of
    from judgeaudit.analyses.validity.schema import JudgeIdentity
    from judgeaudit.analyses.world.analysis import analyse, provenance
    from judgeaudit.analyses.world.schema import SCHEMA_VERSION
    from judgeaudit.world.run import judge_world

    _check(out, set_spec, judge_specs, store, votes=votes, max_items=max_items, concurrency=concurrency,
           bootstrap=n_boot, temperature=temperature, strict_threshold=strict_threshold, top_k=top_k,
           permutations=permutations)
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(f"--alternative must be two-sided, greater or less; got {alternative!r}",
                         field="--alternative")
    from judgeaudit.world.templates import WORLD_FORMS

    if form not in WORLD_FORMS:
        raise InputError(f"unknown form {form!r}; choose from {', '.join(WORLD_FORMS)}", field="--form")
    if second_matcher_judge is not None and matcher_judge is None:
        raise InputError("--second-matcher-judge re-matches the generous matcher's pairs; give --matcher-judge",
                         field="--second-matcher-judge")
    if matcher_judge is not None and form != "defects":
        raise InputError("--matcher-judge matches free-text complaints; it needs --form defects",
                         field="--matcher-judge")
    if len(set(arms)) != len(arms) or not arms:
        raise InputError(f"arms must be given once each; got {list(arms)}", field="--arm")
    for a in arms:
        get_arm(a)
    set_prov = None
    if items is None:
        items, set_prov = load_set(set_spec, max_items)
    items, split_record = split_items(items, split)
    if not items:
        raise InputError("the set has no items", field="--set")
    from judgeaudit.analyses.world.correlate import covariate_table

    covariate_table(items, covariates)   # an unknown or non-numeric covariate fails before any call
    judges = build_judges(sampled_specs(judge_specs, temperature), api_base=api_base, template=template)
    verdicts = judge_world(items, judges, arms, form=form, votes=votes, store_path=store or out / "calls.sqlite",
                           seed=seed, encoder=encoder, top_k=top_k, concurrency=concurrency, progress=progress,
                           context=context)
    arms_by_request = {rid: arm_of(rid) for rid in map(str, verdicts["request_id"])}
    by_arm = summarise(verdicts, part=arms_by_request, part_name="arm")
    record_parts(by_arm)   # the command fails when a judge produced no usable verdict in one arm
    generous = second = None
    if matcher_judge is not None:
        from judgeaudit.analyses.world.analysis import matcher_queries

        queries = matcher_queries(items, verdicts, seed=seed)
        generous, second = (judge_pairs(build_judges([spec], api_base=api_base)[0], items, queries,
                                        store_path=store or out / "calls.sqlite", concurrency=concurrency,
                                        progress=progress, context=context) if spec else None
                            for spec in (matcher_judge, second_matcher_judge))
    an = analyse(items, verdicts, form=form, arms=arms, n_boot=n_boot, seed=seed, strict_threshold=strict_threshold,
                 generous=generous, second=second, covariates=covariates, n_perm=permutations, alternative=alternative)
    result = {**an.result, "votes": votes, "temperature": temperature, "matcher_judge": matcher_judge,
              "matcher_undecided": getattr(generous, "undecided", None),
              "matcher_pairs": None if generous is None else len(generous.answers),
              "second_matcher_judge": second_matcher_judge,
              "second_matcher_undecided": getattr(second, "undecided", None),
              "provenance": {**provenance(items, set_spec), "judges": [j.id for j in judges],
                             "set_provenance": set_prov},
              "split": split_record,
              "calibration": {j.id: j.calibration() for j in judges if callable(getattr(j, "calibration", None))},
              "calls": summarise(verdicts).to_dict(), "calls_by_arm": by_arm.to_dict()}
    for j in judges:   # the template each judge answered with (None: the built-in world templates), and who it was
        if isinstance((result.get("judges") or {}).get(j.id), dict):
            result["judges"][j.id]["template"] = j.template_record(form)
    identities = {j.id: JudgeIdentity(family=j.spec.family, model=j.spec.model, template=j.template_record(form),
                                      scale={"form": form}).model_dump(mode="json") for j in judges}
    result = {"schema_version": SCHEMA_VERSION, **result, "identities": identities}
    typed = WorldFile.of(result)   # what the readers read is there, under the names they read it by
    with output_set(out, "world") as dest:
        write_result(dest / "result.json", result, verdicts, inputs=typed.provenance.set_files())
        write_parquet(dest / "verdicts.parquet", verdicts)
        write_parquet(dest / "decisions.parquet", an.decisions)   # per answer, for a paired card diff
    return WorldResult(result, verdicts, an.decisions)


def run_factorial_cmd(set_spec: str, judge_specs: Sequence[str], factors: str, *, out: Path,
                      votes: int = DEFAULTS["votes"], form: str = DEFAULTS["form"],
                      max_items: int | None = DEFAULTS["max_items"], store: Path | None = None,
                      concurrency: int | None = None, api_base: str | None = None,
                      n_boot: int = DEFAULTS["bootstrap"], seed: int = DEFAULTS["seed"],
                      temperature: float = DEFAULTS["temperature"], items: list | None = None,
                      progress: bool = True, split: str = DEFAULTS["split"],
                      context: RunContext | None = None) -> WorldResult:
    from judgeaudit.errors import InputError
    from judgeaudit.runinfo import write_result
    from judgeaudit.analyses.world.factorial import factorial_arms, parse_factors

    fs = parse_factors(factors)
    if ("instrument" in fs) != (len(judge_specs) == 2) or len(judge_specs) not in (1, 2):
        raise InputError("give one --judge, or two with the instrument factor (off = first, on = second)",
                         field="--judge")
    arms = sorted(set(factorial_arms(fs).values()))
    with output_set(out, "world") as dest:
        run = run_world_cmd(set_spec, judge_specs, arms, out=out, votes=votes, form=form, max_items=max_items,
                            store=store, concurrency=concurrency, api_base=api_base, n_boot=n_boot, seed=seed,
                            temperature=temperature, items=items, progress=progress, split=split, context=context)
        ran = WorldFile.of(run.result)
        table = factorial_table_from(run.result, fs, ran.provenance.judges)
        result = {**run.result, "factorial": table, "shapley": table["shapley"]}
        WorldFile.of(result)
        write_result(dest / "result.json", result, run.verdicts, inputs=ran.provenance.set_files())
    return WorldResult(result, run.verdicts, run.decisions)


def factorial_table_from(result: dict, factors: list[str], judges: list[str]) -> dict:
    from judgeaudit.analyses.world.analysis import Analysis
    from judgeaudit.analyses.world.factorial import factorial_table

    return factorial_table(Analysis(pd.DataFrame(), result), factors, judges)


def matcher_failed(result: WorldFile, allow_failures: bool, *, echo: Console = console) -> None:
    """A matcher judge that decided none of its pairs (every reply neither yes nor no, or failed) is a
    failed judge: one line, exit 1, unless ``allow_failures`` (the metrics that needed it are None). One
    that left some pairs undecided is named on a warning line (they are counted apart, never as "no")."""
    failed = []
    n = result.matcher_pairs
    for spec, und in ((result.matcher_judge, result.matcher_undecided),
                      (result.second_matcher_judge, result.second_matcher_undecided)):
        if spec is None or not n or not und:
            continue
        if und < n:
            echo.print(f"warning: matcher judge {spec} left {und} of its {n} pairs undecided (counted apart)",
                       highlight=False, markup=False)
        else:
            failed.append(f"matcher judge {spec} decided none of its {n} pairs; its metrics are undefined")
    if not failed:
        return
    line = "; ".join(failed)
    if allow_failures:
        echo.print(f"warning: {line}; kept going (--allow-failures)", highlight=False, markup=False)
        return
    echo.print(f"error: {line}", highlight=False, markup=False)
    raise typer.Exit(1)


def summary_lines(result: dict) -> list[str]:
    """One line per judge and arm: balanced accuracy, recall and specificity, each with its 95% interval as the
    report prints it (``value [lo, hi]``, from result.json's ``ci``), and the answers they rest on."""
    from judgeaudit.analyses.world.schema import WorldAnalysis
    from judgeaudit.commands.common import with_interval

    lines = []
    for judge, j in WorldAnalysis.of(result).judges.items():
        for arm, a in j.arms.items():
            rates = ", ".join(f"{name} {with_interval(getattr(a, key), a.ci.get(key))}" for name, key in (
                ("balanced accuracy", "balanced_accuracy"), ("recall", "recall"), ("specificity", "specificity")))
            lines.append(f"{judge} · {arm}: {rates} (n = {a.n}: {a.n_defective} defective, {a.n_clean} clean)")
    return lines


def write_report(run: WorldResult, out: Path, *, echo: Console = console) -> None:
    from judgeaudit.report.html import write_page
    from judgeaudit.report.world import world_markdown, world_sections

    with output_set(out, "world") as dest:
        write_page(dest / "report.html", "judgeaudit — what the judge must be shown",
                   world_sections(run.result, run.decisions, run.verdicts))
        (dest / "report.md").write_text(world_markdown(run.result))
    for line in summary_lines(run.result):
        echo.print(line, highlight=False, markup=False, soft_wrap=True)
    echo.print(f"→ {out}/result.json, {out}/verdicts.parquet, {out}/report.html, {out}/report.md")


@app.command("run")
@calls_checked
@declared(OPTIONS, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def run_cmd(*, context: RunContext, **options: Any) -> None:
    """Writes OUT/result.json, OUT/verdicts.parquet and OUT/report.html (as one set)."""
    run_command({o.name: options[o.keyword] for o in OPTIONS.on_command()}, context=context)


def run_command(values: dict[str, Any], *, echo: Console = console, context: RunContext | None = None) -> WorldResult:
    """A world run from its options by their declared names (``analyses.world.options``; what the command's
    flags or an experiment file's keys give; absent ones take their defaults): the run, the report, and exit 1
    when a matcher judge decided none of its pairs (unless ``allow_failures``)."""
    v = {**OPTIONS.defaults(), **values}
    out = v["out"]
    with output_set(out, "world"):
        r = run_world_cmd(v["set"], v["judges"], v["arms"], out=out, votes=v["votes"], form=v["form"],
                          max_items=v["max_items"], store=v["store"], concurrency=v["concurrency"],
                          api_base=v["api_base"], n_boot=v["bootstrap"], seed=v["seed"],
                          temperature=v["temperature"], strict_threshold=v["strict_threshold"], top_k=v["top_k"],
                          matcher_judge=v["matcher_judge"], second_matcher_judge=v["second_matcher_judge"],
                          covariates=v["correlate"], permutations=v["permutations"], alternative=v["alternative"],
                          split=v["split"], template=v["template"], context=context)
        write_report(r, out, echo=echo)
    matcher_failed(WorldFile.of(r.result), v["allow_failures"], echo=echo)
    return r


@app.command("factorial")
@calls_checked
@declared(FACTORIAL, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def factorial_cmd(*, context: RunContext, **options: Any) -> None:
    """Writes OUT/result.json (cells and Shapley values), OUT/verdicts.parquet and OUT/report.html (as one set)."""
    v = {**FACTORIAL.defaults(), **{o.name: options[o.keyword] for o in FACTORIAL.on_command()}}
    out = v["out"]
    with output_set(out, "world"):
        r = run_factorial_cmd(v["set"], v["judges"], v["factors"], out=out, votes=v["votes"], form=v["form"],
                              max_items=v["max_items"], store=v["store"], concurrency=v["concurrency"],
                              api_base=v["api_base"], n_boot=v["bootstrap"], seed=v["seed"],
                              temperature=v["temperature"], split=v["split"], context=context)
        write_report(r, out)

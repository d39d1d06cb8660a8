"""``judgeaudit loop``: close the loop (blind-spot §3.5, §8) and score every revision with a checker
outside it; ``loop worlds``: an agent under §9's seven worlds.

``loop run`` writes ``OUT/result.json``, ``OUT/report.html``, per-unit, per-complaint and
per-output tables (``units``, ``complaints``, ``outputs`` as .jsonl and .parquet); calls go to
``OUT/calls.sqlite`` (or ``--store``), so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.commands.batch import BatchOpt, BatchOutOpt
from judgeaudit.commands.tracking import MlflowExperimentOpt, MlflowOpt
from judgeaudit.commands.common import (
    ALLOW_FAILURES_HELP,
    DEFAULT_BACKEND,
    BackendOpt,
    RayAddressOpt,
    RetriesOpt,
    RpmOpt,
    TimeoutOpt,
    calls_checked,
    failed,
)
from judgeaudit.commands.declared import declared
from judgeaudit.runtime.context import RunContext
from judgeaudit.errors import InputError
from judgeaudit.loop.options import NLI_HELP, OPTIONS, RUN, VOTE_TEMPERATURE
from judgeaudit.commands.common import ApiBaseOpt, ConcurrencyOpt

app = typer.Typer(help=HELP["loop"],
                  no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)


WORLDS_KIND = "loop worlds"
"""The kind of a ``loop worlds`` run folder (``runfolder``): another command than ``loop run``."""

WRITES = ("result.json", "report.html", "units.jsonl", "units.parquet", "complaints.jsonl", "outputs.jsonl")


def check_second_family(judge: Any, judge2: Any) -> None:
    """The second judge must come from another vendor family (``judgeaudit.families``)."""
    from judgeaudit.families import shared, unknown_family_message

    common = shared(judge.spec.family, judge2.spec.family)
    if common is None:
        role = "judge" if judge.spec.family is None else "second judge"
        raise InputError(unknown_family_message(role), field="--judge2")
    if common:
        raise InputError(f"the second judge shares the family {'+'.join(sorted(common))} with the judge; the "
                         "second-family arms need another vendor", field="--judge2")




def halueval_checker(task: str, nli: str | None, api_base: str | None) -> tuple[Any, str]:
    """The HaluEval QA entailment fallback ``--nli`` names (None without it) and the checker's description."""
    if nli is None:
        return None, "HaluEval QA containment"
    if task != "halueval_qa":
        raise InputError("--nli is HaluEval QA's entailment fallback; the task is " + task, field="--nli")
    from judgeaudit.structural.answer_entailment import make_fallback

    fb = make_fallback(nli, api_base=api_base)
    return fb, f"HaluEval QA containment, then entailment by {fb.spec} (P(entail) >= {fb.tau})"


def checker_routes(t: Any, fallback: Any) -> dict[str, Any]:
    """How many checks each route decided (HaluEval QA), and the fallback's rule."""
    out: dict[str, Any] = {"checks": dict(t.routes)}
    if fallback is not None:
        out.update(fallback.describe(), nli_unusable=fallback.counts["unusable"])
    return out


def nli_failed(routes: Any) -> str | None:
    """One line when the NLI fallback was asked and every one of its replies was unusable (``routes``: a result's
    ``checker_routes``, read as ``loop.schema.CheckerRoutes``; None: no routes recorded)."""
    from judgeaudit.loop.schema import CheckerRoutes

    return None if routes is None else CheckerRoutes.model_validate(routes).nli_failed()


def run_loop_command(*, task: str, data: Path, initial: str, responder: str | Any, judge: str | Any | None,
                     regulators: list[str], out: Path, rounds: int = 1, votes: int = 3,
                     max_items: int | None = None, judge2: str | Any | None = None, rewriter: str | Any | None = None,
                     store: Path | None = None, concurrency: int | None = None, api_base: str | None = None,
                     bootstrap: int = 2000, seed: int = 0, temperature: float = VOTE_TEMPERATURE,
                     progress: bool = True, nli: str | None = None, template: str | None = None,
                     context: RunContext | None = None) -> dict[str, Any]:
    """Run the loop and write its outputs; the result dict. Specs may be ready Judge objects.
    ``template`` (a ``generate`` template over the request's ``prompt``) is the prompt frame the feedback
    judges (``judge``, ``judge2``) are asked in.

    The feedback judges (``judge``, ``judge2``, and the rewriter when it defaults to the judge) given
    as api/local specs sample their votes at ``temperature`` (the paper's 0.3, §3.4); the responder
    keeps its backend's default. ``result['judge_calls']`` counts each judging arm's report votes
    (failed calls, replies that did not parse, usable); ``result['calls']`` the same per judge id,
    which the validity card reads. ``nli`` is HaluEval QA's entailment fallback spec. Every call is made in
    ``context`` (the command's ``RunContext``; None: the defaults)."""
    from judgeaudit.commands.world import sampled_specs
    from judgeaudit.io import write_jsonl, write_parquet
    from judgeaudit.judges import make_judge
    from judgeaudit.judges.base import Judge
    from judgeaudit.loop.accounting import summarise
    from judgeaudit.loop.engine import NO_USABLE_REPORT, initial_outputs, planned_calls, run_loop
    from judgeaudit.loop.keywords import KEYWORDS
    from judgeaudit.loop.regulators import get_regulator, half_share
    from judgeaudit.report.loop import write_report
    from judgeaudit.loop.responders import make_responder
    from judgeaudit.loop.tasks import load_task, shipped_only
    from judgeaudit.runfolder import output_set
    from judgeaudit.runinfo import write_result
    from judgeaudit.runtime.failures import recording
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import output_dir, spec_inputs

    OPTIONS.check(rounds=rounds, votes=votes, max_items=max_items, concurrency=concurrency, bootstrap=bootstrap,
                  temperature=temperature)
    if not regulators:
        raise InputError("give at least one --regulator", field="--regulator")
    regs = [get_regulator(r) for r in regulators]
    if len({r.name for r in regs}) != len(regs):
        raise InputError("a regulator is named twice", field="--regulator")
    specs = [s for s in (initial, responder, judge, judge2, rewriter) if isinstance(s, str)]
    output_dir(out, writes=WRITES, inputs=[data, store, *spec_inputs(specs),
                                           *[Path(s.removeprefix("replay:")) for s in specs
                                             if s.startswith("replay:") and "?" not in s]], kind="loop")

    def build(spec: str | Any | None, temp: float | None = None) -> Any:
        if spec is None or isinstance(spec, Judge):
            return spec
        d = sampled_specs([spec], temp)[0] if temp is not None else spec
        opts = {k: v for k, v in d.items() if k != "spec"} if isinstance(d, dict) else {}
        return make_judge(spec, api_base=api_base, **opts)

    j, j2 = build(judge, temperature), build(judge2, temperature)
    if template is not None:
        from judgeaudit.judges.base import with_template

        j, j2 = (with_template(x, template) if x is not None and x.takes_template and x.template is None else x
                 for x in (j, j2))
    if any(r.judge == "second" for r in regs):
        if j2 is None or j is None:
            raise InputError("the second-family regulators need --judge and --judge2", field="--judge2")
        check_second_family(j, j2)
    resp = make_responder(responder, api_base=api_base) if isinstance(responder, str) else responder
    fallback, checker = halueval_checker(task, nli, api_base)
    t = load_task(task, data, max_items=max_items, nli=fallback)
    if isinstance(initial, str) and initial.split(":", 1)[0] == "shipped":
        t = shipped_only(t)
    plan = planned_calls(regs, len(t.items), rounds, votes)
    if progress:
        console.print(f"at most {plan['judge']} judge call(s) and {plan['revisions']} revision(s) "
                      f"({len(regs)} arm(s) × {len(t.items)} item(s) × {rounds} round(s); {votes} vote(s))")
    with recording() as rec, CallStore(store or Path(out) / "calls.sqlite") as cs:
        init = initial_outputs(t, initial if isinstance(initial, str) and (initial.startswith(("shipped", "replay:")))
                               else (make_responder(initial, api_base=api_base) if isinstance(initial, str)
                                     else initial), store=cs, concurrency=concurrency, progress=progress,
                               context=context)
        lr = run_loop(t, init, regs, responder=resp, judge=j, judge2=j2, rewriter=build(rewriter), rounds=rounds,
                      votes=votes, store=cs, concurrency=concurrency, progress=progress, context=context)
        _mark_unparsed(rec, lr.unparsed_calls)
    stats = summarise(lr.units, lr.complaints, list(lr.regulators), rounds, n_boot=bootstrap, seed=seed,
                      scalar=[r.name for r in regs if r.channel == "score"])
    for name, c in lr.judge_calls.items():
        stats["regulators"][name].update(judge_votes=c.calls, failed_calls=c.failed_calls,
                                         parse_failures=c.parse_failures, usable_votes=c.usable)
    for name in lr.unusable():
        stats["regulators"][name]["status"] = NO_USABLE_REPORT
    halves = [r.name for r in regs if r.world == "half" and r.calls_judge]
    if halves:
        share = half_share(t.name, t.items)
        for name in halves:
            stats["regulators"][name]["world_shown"] = share
    from judgeaudit.analyses.validity.schema import JudgeIdentity
    from judgeaudit.loop.schema import LEVEL, RESAMPLED, SCHEMA_VERSION, LoopFile

    templates = {x.id: rec for x in (j, j2) if x is not None and (rec := x.template_record("generate"))}
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "task": task, "data": t.source, "n_items": len(t.items), "rounds": rounds, "votes": votes,
        "temperature": temperature,
        "initial": initial if isinstance(initial, str) else getattr(initial, "id", str(initial)),
        "responder": getattr(resp, "id", str(responder)),
        "judge": getattr(j, "id", None), "judge2": getattr(j2, "id", None),
        # the template each feedback judge was asked with (judge id -> name, version, sha256, source)
        "templates": templates,
        # who the feedback judges were, as this run built them
        "identities": {x.id: JudgeIdentity(family=x.spec.family, model=x.spec.model, template=templates.get(x.id))
                       .model_dump(mode="json") for x in (j, j2) if x is not None},
        "checker": "IFEval strict (loose reported beside)" if task == "ifeval" else
                   ("GSM8K answer key" if task == "gsm8k" else checker),
        **({"checker_routes": checker_routes(t, fallback)} if task == "halueval_qa" else {}),
        **({"excluded": t.excluded} if task == "halueval_qa" or t.excluded else {}),
        "regulator_descriptions": {r.name: r.description or _describe(r) for r in regs},
        **stats,
        "judge_parse_failures": lr.judge_parse_failures,
        "judge_errors": lr.judge_errors,
        "judge_calls": {r: c.to_dict() for r, c in lr.judge_calls.items()},
        "no_usable_report": lr.unusable(),
        "calls": _per_judge(lr.judge_calls.values()),
        "planned_calls": plan,
        "responder_errors": int(lr.outputs["error"].notna().sum()),
        "n_rewrites": len(lr.rewrites),
        "keyword_table": {k: list(v) for k, v in KEYWORDS.items()},
        "notes": ("net = (fixed − broken)/N over units, final round against the initial outputs; intervals: "
                  f"{bootstrap} bootstrap resamples of responses; judge votes pooled per channel (free text: union; "
                  "typed ids: majority of parsed votes; score: median); a regulator that reports no defect takes "
                  "no action; fixed/broken/net: final round against the initial outputs, fixed_summed/"
                  "broken_summed: each round against its own start, summed over the rounds; acted_on, precision, "
                  "false_alarm_rate and the break rates pooled over every round (each round's are under rounds); "
                  "a bare score names no constraint, so it has no rate (None); a regulator whose every report "
                  "vote failed or did not parse is marked 'no usable report'"),
    }
    # what every interval resampled: the responses, one bootstrap shared by every arm (loop.accounting)
    result["unit"] = {"resampled": RESAMPLED, "n": stats["before"]["n_responses"], "resamples": bootstrap,
                      "level": LEVEL}
    LoopFile.of(result)   # what the readers read is there, under the names they read it by
    with output_set(out, "loop") as o:   # one set: a kill leaves the earlier run or this one, never a mix
        result = write_result(o / "result.json", result, inputs={"data": data})
        for name, df in (("units", lr.units), ("complaints", lr.complaints), ("outputs", lr.outputs)):
            write_jsonl(o / f"{name}.jsonl", df)
        write_parquet(o / "units.parquet", lr.units)
        write_report(result, o)
    return result


def _mark_unparsed(rec: Any, keys: frozenset[str]) -> None:
    """A report vote is a generate call the executor cannot read; mark those that did not parse as
    parse failures in the run's call record, so the judge-calls summary counts them as it counts
    every other form's."""
    rec.verdicts[:] = [v.model_copy(update={"parse_ok": False}) if v.call_key in keys else v for v in rec.verdicts]


def _per_judge(calls: Any) -> dict[str, dict[str, Any]]:
    """Report-vote counts summed per judge id (``runtime.failures.JudgeCalls`` records)."""
    from judgeaudit.runtime.failures import MAX_REASONS, JudgeCalls

    out: dict[str, JudgeCalls] = {}
    for c in calls:
        o = out.get(c.judge_id)
        out[c.judge_id] = c if o is None else JudgeCalls(
            c.judge_id, o.calls + c.calls, o.failed_calls + c.failed_calls, o.parse_failures + c.parse_failures,
            tuple(dict.fromkeys(o.reasons + c.reasons))[:MAX_REASONS])
    return {k: v.to_dict() for k, v in out.items()}


def print_routes(routes: Any, allow_failures: bool, *, echo: Console = console) -> None:
    """The checks each HaluEval QA route decided (``routes``: a result's ``checker_routes``, None for a task
    without routes); exit 1 when the NLI fallback failed outright (unless ``--allow-failures``)."""
    from judgeaudit.loop.schema import CheckerRoutes

    if routes is not None:
        routes = CheckerRoutes.model_validate(routes)
        echo.print("checker routes: " + ", ".join(f"{k} {v}" for k, v in sorted(routes.checks.items())),
                   highlight=False)
    failed(nli_failed(routes), allow_failures=allow_failures, echo=echo)


def _describe(r: Any) -> str:
    return (f"channel {r.channel}, world {r.world}, goal {r.goal}, "
            f"throttle {r.throttle or 'all'}{', two judges agree' if r.agree else ''}, {r.judge} judge")


@app.command("run")
@calls_checked
@declared(OPTIONS, backend=(BackendOpt, DEFAULT_BACKEND), ray_address=(RayAddressOpt, None))
def run_cmd(*, context: RunContext, **options: Any) -> None:
    """Run the loop → OUT/result.json and OUT/report.html; exits 1 when a judging arm had no usable
    report (``--allow-failures``: exit 0)."""
    run_command({o.name: options[o.keyword] for o in OPTIONS.on_command()}, context=context)


def run_command(values: dict[str, Any], *, echo: Console = console, context: RunContext | None = None,
                kept_going: str = "--allow-failures") -> Any:
    """A loop run from its options by their declared names (``loop.options``; what the command's flags or an
    experiment file's keys give; absent ones take their defaults): the run with its outputs and report
    (``run_loop_command``), the HaluEval QA checker's routes and each arm's counts on the terminal, and exit 1
    when the NLI fallback failed outright or a judging arm had no usable report (unless ``allow_failures``;
    ``kept_going`` says on the warning why the run went on). The typed result (``LoopFile``)."""
    from judgeaudit.commands.common import report_calls
    from judgeaudit.loop.engine import NO_USABLE_REPORT
    from judgeaudit.loop.schema import LoopFile
    from judgeaudit.runtime.failures import active

    v = {**OPTIONS.defaults(), **values}
    allow_failures, out = v["allow_failures"], v["out"]
    r = LoopFile.of(run_loop_command(**{k: v[k] for k in RUN}, context=context))
    print_routes(r.checker_routes, allow_failures, echo=echo)
    b = r.before
    n_err = sum(r.judge_errors.values()) + r.responder_errors
    if n_err:
        echo.print(f"[yellow]{n_err} failed call(s) (judge votes give no report, revisions left unchanged); "
                   "they are kept in the store and retried on the next run[/yellow]")
    echo.print(f"before: pass rate {b.pass_rate:.3f} over {b.n_units} units")
    for name, x in r.regulators.items():
        votes_seen = (f"; report votes {x.judge_votes}: {x.failed_calls} failed, {x.parse_failures} parse "
                      f"failures, {x.usable_votes} usable" if x.judge_votes is not None else "")
        if x.status == NO_USABLE_REPORT:
            echo.print(f"{name}: {NO_USABLE_REPORT}{votes_seen}", markup=False)
            continue
        sums = (f" (summed over rounds: fixed {x.fixed_summed}, broken {x.broken_summed})"
                if r.rounds > 1 else "")
        echo.print(f"{name}: fixed {x.fixed}, broken {x.broken}, net {x.net:+.3f} "
                   f"[{x.net_ci[0]:+.3f}, {x.net_ci[1]:+.3f}], acted on {x.acted_on}{sums}{votes_seen}",
                   markup=False)
    echo.print(f"→ {out}/result.json, {out}/report.html")
    if r.no_usable_report:
        line = (f"regulator(s) {', '.join(r.no_usable_report)} had no usable report (every judge vote failed or "
                "did not parse): their rows are no finding")
        if allow_failures:
            echo.print(f"warning: {line}; kept going ({kept_going})", markup=False)
            return r
        echo.print(f"error: {line}", markup=False)
        rec = active()
        if rec is not None:      # the judge-calls summary, which the exit would skip
            report_calls(rec.summary(), allow_failures=False, echo=echo)
        raise typer.Exit(1)
    return r


@app.command("worlds")
@calls_checked
def worlds_cmd(
    set_: Annotated[str, typer.Option("--set", help=(
        "halueval:PATH[?part=qa&strategy=…] (a HaluEval folder or QA file; the grammar of world run's --set)"))],
    agent: Annotated[str, typer.Option("--agent", help="generating spec of the agent")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    max_items: Annotated[int | None, typer.Option("--max-items", help="keep the first N items")] = None,
    store: Annotated[Path | None, out_option("--store", what="store", help="call store (default OUT/calls.sqlite)")] = None,
    concurrency: ConcurrencyOpt = None,
    api_base: ApiBaseOpt = None,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    nli: Annotated[str | None, typer.Option("--nli", help=NLI_HELP)] = None,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
    batch: BatchOpt = None,
    batch_out: BatchOutOpt = None,
    mlflow: MlflowOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    *,
    context: RunContext,
) -> None:
    """An agent answers HaluEval QA under the seven worlds W0–W6 → OUT/result.json, OUT/answers.jsonl."""
    r = run_worlds_command(set_=set_, agent=agent, out=out, max_items=max_items, store=store,
                           concurrency=concurrency, api_base=api_base, nli=nli, context=context)
    from judgeaudit.loop.schema import LoopWorldsFile

    run = LoopWorldsFile.of(r)   # read through its type: a key renamed is an error naming it
    for w, x in run.worlds.items():
        console.print(f"{w} ({x.description}): {x.accuracy:.3f} ({x.correct}/{x.n})")
    print_routes(run.checker_routes, allow_failures)
    console.print(f"→ {out}/result.json")


def _halueval_qa_spec(set_: str) -> tuple[str, str | None]:
    """``(path, strategy)`` of a HaluEval QA set spec in the grammar ``world run`` reads
    (``datasets.registry.parse_spec``: ``halueval:PATH[?part=qa&strategy=…&name=…]``)."""
    from judgeaudit.datasets.registry import parse_spec

    try:
        name, path, opts = parse_spec(set_, {"halueval": None})
    except InputError:
        name, path, opts = "", "", {}
    if name != "halueval":
        raise InputError("the seven worlds run on HaluEval QA: give --set halueval:PATH[?part=qa]", field="--set")
    if opts.get("part", "qa") != "qa":
        raise InputError(f"the seven worlds run on HaluEval QA, not part={opts['part']!r}: give ?part=qa",
                         field="--set")
    unknown = sorted(set(opts) - {"part", "strategy", "name"})
    if unknown:
        raise InputError(f"unsupported option(s) {unknown} in --set (read here: part, strategy, name)", field="--set")
    return path, opts.get("strategy")


def run_worlds_command(*, set_: str, agent: str | Any, out: Path, max_items: int | None = None,
                       store: Path | None = None, concurrency: int | None = None, api_base: str | None = None,
                       progress: bool = True, nli: str | None = None,
                       context: RunContext | None = None) -> dict[str, Any]:
    from judgeaudit.io import write_jsonl
    from judgeaudit.runinfo import write_result
    from judgeaudit.loop.responders import make_responder
    from judgeaudit.loop.tasks import load_task
    from judgeaudit.loop.worlds import run_worlds, summarise_worlds
    from judgeaudit.runfolder import output_set
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import check_options, output_dir

    path, strategy = _halueval_qa_spec(set_)
    check_options(max_items=max_items, concurrency=concurrency)
    output_dir(out, writes=("result.json", "answers.jsonl"), inputs=[Path(path), store], kind=WORLDS_KIND)
    fallback, checker = halueval_checker("halueval_qa", nli, api_base)
    t = load_task("halueval_qa", path, max_items=max_items, nli=fallback, **({"strategy": strategy} if strategy else {}))
    if len(t.items) < 5:
        raise InputError("the seven worlds need at least 5 items (W4 draws 3 distractors from the others)",
                         field="--max-items")
    a = make_responder(agent, api_base=api_base) if isinstance(agent, str) else agent
    with CallStore(store or Path(out) / "calls.sqlite") as cs:
        rows = run_worlds(t, a, store=cs, concurrency=concurrency, progress=progress, context=context)
    result = {"task": "halueval_qa", "data": t.source, "agent": a.id, "n_items": len(t.items),
              "checker": checker, "worlds": summarise_worlds(rows), "checker_routes": checker_routes(t, fallback),
              "excluded": t.excluded}
    with output_set(out, WORLDS_KIND) as dest:   # one set: a kill leaves the earlier run or this one, never a mix
        write_result(dest / "result.json", result)
        write_jsonl(dest / "answers.jsonl", rows)
    return result

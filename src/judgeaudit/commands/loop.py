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

from judgeaudit.commands.common import (ALLOW_FAILURES_HELP, DEFAULT_BACKEND, BackendOpt, RayAddressOpt, RetriesOpt,
                                         RpmOpt, TimeoutOpt, calls_checked)
from judgeaudit.errors import InputError

app = typer.Typer(help="Close the loop: what acting on a judge's reports does, scored by a checker.",
                  no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)

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


def run_loop_command(*, task: str, data: Path, initial: str, responder: str | Any, judge: str | Any | None,
                     regulators: list[str], out: Path, rounds: int = 1, votes: int = 3,
                     max_items: int | None = None, judge2: str | Any | None = None, rewriter: str | Any | None = None,
                     store: Path | None = None, concurrency: int | None = None, api_base: str | None = None,
                     bootstrap: int = 2000, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Run the loop and write its outputs; the result dict. Specs may be ready Judge objects."""
    from judgeaudit.io import write_jsonl, write_parquet
    from judgeaudit.judges import make_judge
    from judgeaudit.judges.base import Judge
    from judgeaudit.loop.accounting import summarise
    from judgeaudit.loop.engine import initial_outputs, run_loop
    from judgeaudit.loop.keywords import KEYWORDS
    from judgeaudit.loop.regulators import get_regulator
    from judgeaudit.loop.report import write_report
    from judgeaudit.loop.responders import make_responder
    from judgeaudit.loop.tasks import load_task
    from judgeaudit.runfolder import output_set
    from judgeaudit.runinfo import write_result
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import check_options, output_dir, spec_inputs

    check_options(rounds=rounds, votes=votes, max_items=max_items, concurrency=concurrency, bootstrap=bootstrap)
    if not regulators:
        raise InputError("give at least one --regulator", field="--regulator")
    regs = [get_regulator(r) for r in regulators]
    if len({r.name for r in regs}) != len(regs):
        raise InputError("a regulator is named twice", field="--regulator")
    specs = [s for s in (initial, responder, judge, judge2, rewriter) if isinstance(s, str)]
    output_dir(out, writes=WRITES, inputs=[data, store, *spec_inputs(specs),
                                           *[Path(s.removeprefix("replay:")) for s in specs
                                             if s.startswith("replay:") and "?" not in s]], kind="loop")

    def build(spec: str | Any | None) -> Any:
        if spec is None or isinstance(spec, Judge):
            return spec
        return make_judge(spec, api_base=api_base)

    j, j2 = build(judge), build(judge2)
    if any(r.judge == "second" for r in regs):
        if j2 is None or j is None:
            raise InputError("the second-family regulators need --judge and --judge2", field="--judge2")
        check_second_family(j, j2)
    resp = make_responder(responder, api_base=api_base) if isinstance(responder, str) else responder
    t = load_task(task, data, max_items=max_items)
    with CallStore(store or Path(out) / "calls.sqlite") as cs:
        init = initial_outputs(t, initial if isinstance(initial, str) and (initial.startswith(("shipped", "replay:")))
                               else (make_responder(initial, api_base=api_base) if isinstance(initial, str)
                                     else initial), store=cs, concurrency=concurrency, progress=progress)
        lr = run_loop(t, init, regs, responder=resp, judge=j, judge2=j2, rewriter=build(rewriter), rounds=rounds,
                      votes=votes, store=cs, concurrency=concurrency, progress=progress)
    stats = summarise(lr.units, lr.complaints, list(lr.regulators), rounds, n_boot=bootstrap, seed=seed)
    result: dict[str, Any] = {
        "task": task, "data": t.source, "n_items": len(t.items), "rounds": rounds, "votes": votes,
        "initial": initial if isinstance(initial, str) else getattr(initial, "id", str(initial)),
        "responder": getattr(resp, "id", str(responder)),
        "judge": getattr(j, "id", None), "judge2": getattr(j2, "id", None),
        "checker": "IFEval strict (loose reported beside)" if task == "ifeval" else
                   ("GSM8K answer key" if task == "gsm8k" else "HaluEval QA containment"),
        "regulator_descriptions": {r.name: r.description or _describe(r) for r in regs},
        **stats,
        "judge_parse_failures": lr.judge_parse_failures,
        "judge_errors": lr.judge_errors,
        "responder_errors": int(lr.outputs["error"].notna().sum()),
        "n_rewrites": len(lr.rewrites),
        "keyword_table": {k: list(v) for k, v in KEYWORDS.items()},
        "notes": ("net = (fixed − broken)/N over units, final round against the initial outputs; intervals: "
                  f"{bootstrap} bootstrap resamples of responses; judge votes pooled per channel (free text: union; "
                  "typed ids: majority of parsed votes; score: median); a regulator that reports no defect takes "
                  "no action; acted_on, false_alarm_rate and the break rates are round 1's (every round's are under "
                  "rounds)"),
    }
    with output_set(out, "loop") as o:   # one set: a kill leaves the earlier run or this one, never a mix
        result = write_result(o / "result.json", result)
        for name, df in (("units", lr.units), ("complaints", lr.complaints), ("outputs", lr.outputs)):
            write_jsonl(o / f"{name}.jsonl", df)
        write_parquet(o / "units.parquet", lr.units)
        write_report(result, o)
    return result


def _describe(r: Any) -> str:
    return (f"channel {r.channel}, world {r.world}, goal {r.goal}, "
            f"throttle {r.throttle or 'all'}{', two judges agree' if r.agree else ''}, {r.judge} judge")


@app.command("run")
@calls_checked
def run_cmd(
    task: Annotated[str, typer.Option("--task", help="ifeval | gsm8k | halueval_qa")],
    data: Annotated[Path, typer.Option("--data", help="the task's data file or folder")],
    responder: Annotated[str, typer.Option("--responder", help="generating spec, or reference:echo")],
    out: Annotated[Path, typer.Option("--out", help="output folder")],
    regulator: Annotated[list[str], typer.Option("--regulator", help=(
        "an arm (repeatable): control, blind, informed, typed, certificate, informed_once, two_agree, score, "
        "world_none|half|full, throttle_1|3|all, goal_good|constraints, hidden, second_blind, second_informed; "
        "NAME+MOD composes"))],
    initial: Annotated[str, typer.Option("--initial", help="shipped[:CONDITION] | replay:PATH | generating spec")]
    = "shipped",
    judge: Annotated[str | None, typer.Option("--judge", help="feedback judge spec")] = None,
    judge2: Annotated[str | None, typer.Option("--judge2", help="second-family judge spec")] = None,
    rewriter: Annotated[str | None, typer.Option("--rewriter", help="constraints-hidden rewriter (default: judge)")]
    = None,
    rounds: Annotated[int, typer.Option("--rounds")] = 1,
    votes: Annotated[int, typer.Option("--votes", help="judge samples per report (paper: 3)")] = 3,
    max_items: Annotated[int | None, typer.Option("--max-items", help="keep the first N items")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap")] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    store: Annotated[Path | None, typer.Option("--store", help="call store (default OUT/calls.sqlite)")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base")] = None,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
) -> None:
    """Run the loop → OUT/result.json and OUT/report.html."""
    r = run_loop_command(task=task, data=data, initial=initial, responder=responder, judge=judge,
                         regulators=regulator, out=out, rounds=rounds, votes=votes, max_items=max_items,
                         judge2=judge2, rewriter=rewriter, store=store, concurrency=concurrency, api_base=api_base,
                         bootstrap=bootstrap, seed=seed)
    b = r["before"]
    n_err = sum(r["judge_errors"].values()) + r["responder_errors"]
    if n_err:
        console.print(f"[yellow]{n_err} failed call(s) (judge votes counted as unparsed, revisions left unchanged); "
                      "they are kept in the store and retried on the next run[/yellow]")
    console.print(f"before: pass rate {b['pass_rate']:.3f} over {b['n_units']} units")
    for name, x in r["regulators"].items():
        console.print(f"{name}: fixed {x['fixed']}, broken {x['broken']}, net {x['net']:+.3f} "
                      f"[{x['net_ci'][0]:+.3f}, {x['net_ci'][1]:+.3f}], acted on {x['acted_on']}")
    console.print(f"→ {out}/result.json, {out}/report.html")


@app.command("worlds")
@calls_checked
def worlds_cmd(
    set_: Annotated[str, typer.Option("--set", help="halueval:PATH (a HaluEval folder or QA file)")],
    agent: Annotated[str, typer.Option("--agent", help="generating spec of the agent")],
    out: Annotated[Path, typer.Option("--out", help="output folder")],
    max_items: Annotated[int | None, typer.Option("--max-items", help="keep the first N items")] = None,
    store: Annotated[Path | None, typer.Option("--store", help="call store (default OUT/calls.sqlite)")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base")] = None,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
) -> None:
    """An agent answers HaluEval QA under the seven worlds W0–W6 → OUT/result.json, OUT/answers.jsonl."""
    r = run_worlds_command(set_=set_, agent=agent, out=out, max_items=max_items, store=store,
                           concurrency=concurrency, api_base=api_base)
    for w, x in r["worlds"].items():
        console.print(f"{w} ({x['description']}): {x['accuracy']:.3f} ({x['correct']}/{x['n']})")
    console.print(f"→ {out}/result.json")


def run_worlds_command(*, set_: str, agent: str | Any, out: Path, max_items: int | None = None,
                       store: Path | None = None, concurrency: int | None = None, api_base: str | None = None,
                       progress: bool = True) -> dict[str, Any]:
    from judgeaudit.io import write_jsonl
    from judgeaudit.runinfo import write_result
    from judgeaudit.loop.responders import make_responder
    from judgeaudit.loop.tasks import load_task
    from judgeaudit.loop.worlds import run_worlds, summarise_worlds
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import check_options, output_dir

    name, _, path = set_.partition(":")
    if name != "halueval" or not path:
        raise InputError("the seven worlds run on HaluEval QA: give --set halueval:PATH", field="--set")
    check_options(max_items=max_items, concurrency=concurrency)
    output_dir(out, writes=("result.json", "answers.jsonl"), inputs=[Path(path), store])
    t = load_task("halueval_qa", path, max_items=max_items)
    if len(t.items) < 5:
        raise InputError("the seven worlds need at least 5 items (W4 draws 3 distractors from the others)",
                         field="--max-items")
    a = make_responder(agent, api_base=api_base) if isinstance(agent, str) else agent
    with CallStore(store or Path(out) / "calls.sqlite") as cs:
        rows = run_worlds(t, a, store=cs, concurrency=concurrency, progress=progress)
    result = {"task": "halueval_qa", "data": t.source, "agent": a.id, "n_items": len(t.items),
              "checker": "HaluEval QA containment", "worlds": summarise_worlds(rows)}
    Path(out).mkdir(parents=True, exist_ok=True)
    write_result(Path(out) / "result.json", result)
    write_jsonl(Path(out) / "answers.jsonl", rows)
    return result

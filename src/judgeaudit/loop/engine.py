"""Rounds: each regulator judges the current outputs afresh, the responder revises the outputs it
acted on, and the checker scores every revision. Every call (judge votes, rewrites, revisions)
goes through the call store, so a killed run resumes without buying a completed call twice.

Fresh judging per round: a judge vote of round ``r`` has ``epoch = 100·r + vote`` and a revision
``epoch = r``, so identical prompts in different rounds are different calls (``call_key`` hashes
the epoch). Arms that send a byte-identical prompt in the same round share that call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.judges.base import Judge
from judgeaudit.loop import prompts as P
from judgeaudit.loop import regulators as R
from judgeaudit.loop.tasks import LoopItem, Task
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.context import RunContext
from judgeaudit.runtime.failures import MAX_REASONS, JudgeCalls, failure_reason

UNIT_COLUMNS = ("regulator", "round", "item_id", "unit", "pass_initial", "pass_start", "pass_end",
                "loose_initial", "loose_end", "flagged", "acted")
COMPLAINT_COLUMNS = ("regulator", "round", "item_id", "text", "severity", "units", "correct")
OUTPUT_COLUMNS = ("regulator", "round", "item_id", "output", "acted", "error")
NO_USABLE_REPORT = "no usable report"
"""A judging arm's status when every report vote failed or did not parse: its numbers are no finding."""


class VoteTally:
    """One regulator's report votes: asked, failed calls, replies that did not parse (a completed
    call only), and the first distinct reasons; ``calls()`` is the ``runtime.failures`` record."""

    def __init__(self, judge_id: str):
        self.judge_id = judge_id
        self.n = self.failed = self.unparsed = 0
        self.reasons: dict[str, None] = {}
        self.unparsed_keys: set[str] = set()

    def add(self, verdicts: Sequence[Any], parsed: list[Any]) -> list[Any]:
        """Count one output's votes (``parsed[k]`` None: vote ``k`` gave no report); ``parsed``."""
        for v, p in zip(verdicts, parsed, strict=True):
            self.n += 1
            if v.error is not None:
                self.failed += 1
            elif p is None:
                self.unparsed += 1
                self.unparsed_keys.add(v.call_key)
            else:
                continue
            if len(self.reasons) < MAX_REASONS:
                self.reasons.setdefault(failure_reason(v))
        return parsed

    def calls(self) -> JudgeCalls:
        return JudgeCalls(self.judge_id, self.n, self.failed, self.unparsed, tuple(self.reasons))


@dataclass(frozen=True)
class LoopRun:
    """Everything a loop run produced, as tables (see the ``*_COLUMNS``)."""

    task: str
    regulators: tuple[str, ...]
    rounds: int
    units: pd.DataFrame
    complaints: pd.DataFrame
    outputs: pd.DataFrame
    rewrites: dict[str, str]
    judge_calls: dict[str, JudgeCalls]
    """Per regulator that calls a judge: its report votes (``usable`` = votes that gave a report)."""

    @property
    def judge_parse_failures(self) -> dict[str, int]:
        """Per regulator: replies that completed but did not parse (failed calls are ``judge_errors``)."""
        return {r: c.parse_failures for r, c in self.judge_calls.items()}

    @property
    def judge_errors(self) -> dict[str, int]:
        return {r: c.failed_calls for r, c in self.judge_calls.items()}

    unparsed_calls: frozenset[str] = frozenset()
    """Call keys of the report votes that completed but did not parse (``runtime.failures`` counts
    them as parse failures once the command marks them, ``commands.loop``)."""

    def unusable(self) -> list[str]:
        """Regulators whose judge was asked and gave no usable report (every vote failed or did not parse)."""
        return [r for r, c in self.judge_calls.items() if c.calls and not c.usable]


class _Checker:
    """Memoised checker calls (the same output is checked once per mode)."""

    def __init__(self, task: Task):
        self.task = task
        self._memo: dict[tuple[str, str, str], dict[str, bool]] = {}

    def __call__(self, item: LoopItem, output: str, mode: str = "strict") -> dict[str, bool]:
        k = (item.item_id, output, mode)
        if k not in self._memo:
            if self.task.name != "ifeval" and mode == "loose":
                return self(item, output, "strict")
            self._memo[k] = {u.unit: u.passed for u in self.task.check(item, output, mode=mode).units}
        return self._memo[k]


def _execute(judge: Judge, requests: list[JudgeRequest], store: Any, concurrency: int | None, progress: bool,
             what: str, context: RunContext | None = None) -> list[Any]:
    from judgeaudit.runtime.executor import run

    if not requests:
        return []
    return run(judge, requests, store=store, concurrency=concurrency, progress=progress, description=what,
               context=context)


def _world(reg: R.Regulator, task: str, item: LoopItem, rewrites: dict[str, str]) -> str | None:
    if reg.world == "none":
        return None
    if reg.world == "half":
        return R.half_world(task, item.item_id, item.world, item.unit_text)
    if reg.world == "hidden":
        return rewrites[item.item_id]
    return item.world


def _judge_reports(reg: R.Regulator, task: Task, items: Sequence[LoopItem], cur: dict[str, str], rnd: int,
                   judge: Judge, votes: int, rewrites: dict[str, str], run: Any,
                   tally: VoteTally) -> dict[str, R.Report]:
    """Each output's pooled report. A failed call (kept in the store, retried on the next run) and an
    unparseable reply are both a vote that did not parse; ``tally`` counts them apart, as every
    other form's calls are counted (``runtime.failures``)."""
    channels = ["free", "typed"] if reg.agree else [reg.channel]
    asked: dict[str, list[Any]] = {}
    for ch in channels:
        reqs = [JudgeRequest(form="generate", request_id=f"{reg.name}|r{rnd}|{it.item_id}|{ch}|v{v}",
                             prompt=P.regulator_prompt(task.name, cur[it.item_id], world=_world(reg, task.name, it,
                                                                                               rewrites),
                                                       question=it.question, channel=ch, goal=reg.goal,
                                                       typed_ids=R.typed_ids(it.units)),
                             epoch=100 * rnd + v, meta={"item_id": it.item_id, "round": rnd})
                for it in items for v in range(votes)]
        asked[ch] = run(judge, reqs, f"{reg.name} round {rnd}: {ch} reports")
    out: dict[str, R.Report] = {}
    for i, it in enumerate(items):
        vs = {ch: got[i * votes:(i + 1) * votes] for ch, got in asked.items()}
        raws = {ch: [v.raw if v.error is None else None for v in got] for ch, got in vs.items()}
        if "free" in raws:
            parsed = tally.add(vs["free"], [P.parse_free(x) for x in raws["free"]])
            cs = R.pool_free(parsed, it.units)
            n_ok = sum(p is not None for p in parsed)
            if reg.agree:
                tparsed = tally.add(vs["typed"], [P.parse_typed(x, R.typed_ids(it.units)) for x in raws["typed"]])
                cs = R.agree(cs, R.units_of_ids(R.pool_typed(tparsed), it.units), it.units)
            out[it.item_id] = R.complaints_report(R.throttle(cs, reg.throttle), n_ok)
        elif "typed" in raws:
            allowed = R.typed_ids(it.units)
            parsed = tally.add(vs["typed"], [P.parse_typed(x, allowed) for x in raws["typed"]])
            ids = R.pool_typed(parsed)
            cs = [R.Complaint(f"violated: {i}", 1, R.units_of_ids([i], it.units)) for i in ids]
            out[it.item_id] = R.complaints_report(R.throttle(cs, reg.throttle), sum(p is not None for p in parsed))
        else:
            parsed_s = tally.add(vs["score"], [P.parse_score(x) for x in raws["score"]])
            out[it.item_id] = R.score_report(R.pool_score(parsed_s), sum(p is not None for p in parsed_s), it.units)
    return out


def planned_calls(regulators: Sequence[R.Regulator], n_items: int, rounds: int, votes: int) -> dict[str, int]:
    """The most calls a run can make (known before the first one): judge votes (each judging arm's
    channels × votes × items × rounds, plus one rewrite per item for the constraints-hidden arm) and
    revisions (items × rounds per arm: an upper bound, since an arm that reports no defect on an
    output asks for no revision). Byte-identical requests shared by arms are counted once per arm."""
    judge = sum((2 if r.agree else 1) * (r.votes or votes) * n_items * rounds for r in regulators if r.calls_judge)
    judge += n_items if any(r.world == "hidden" and r.calls_judge for r in regulators) else 0
    return {"judge": judge, "revisions": len(regulators) * n_items * rounds}


def rewrite_requests(task: Task, rewriter: Judge, run: Any) -> dict[str, str]:
    """The constraints-hidden arm's rewritten user requests, one rewriter call per item (stored)."""
    if task.name != "ifeval":
        raise InputError("the constraints-hidden regulator applies to IFEval only (the world of GSM8K and HaluEval "
                         "QA is not a list of constraints)", field="--regulator")
    reqs = [JudgeRequest(form="generate", request_id=f"rewrite|{it.item_id}", prompt=P.rewrite_prompt(it.request),
                         meta={"item_id": it.item_id}) for it in task.items]
    vs = run(rewriter, reqs, "rewriting requests without constraints")
    return {it.item_id: (v.raw or "").strip() if v.error is None else it.request for it, v in
            zip(task.items, vs, strict=True)}


def initial_outputs(task: Task, spec: str | Judge, *, store: Any = None, concurrency: int | None = None,
                    progress: bool = False, context: RunContext | None = None) -> dict[str, str]:
    """Round-0 outputs: ``shipped``, ``replay:PATH`` or a generating responder answering each item (built with
    the ``api_base`` of ``context``, the command's ``RunContext``, its calls made in it)."""
    from judgeaudit.loop.responders import make_responder, read_outputs

    if isinstance(spec, str) and spec.split(":", 1)[0] == "shipped":
        missing = [it.item_id for it in task.items if it.shipped is None]
        if missing:
            raise InputError(f"no shipped output for {len(missing)} item(s) of {task.name} (first: {missing[0]}); "
                             "shipped outputs exist for IFEval (GPT-4) and GSM8K (GPT-3)", field="--initial")
        return {it.item_id: it.shipped for it in task.items}
    if isinstance(spec, str) and spec.startswith("replay:"):
        return read_outputs(spec.removeprefix("replay:"), list(task.items))
    resp = make_responder(spec, **({} if context is None or context.api_base is None
                                   else {"api_base": context.api_base}))
    reqs = [JudgeRequest(form="generate", request_id=f"initial|{it.item_id}",
                         prompt=P.initial_prompt(task.name, it.request, it.world), meta={"output": ""})
            for it in task.items]
    vs = _execute(resp, reqs, store, concurrency, progress, "initial outputs", context)
    bad = [v for v in vs if v.error is not None]
    if bad:
        raise InputError(f"{len(bad)} initial output call(s) failed (first: {bad[0].error}); rerun to retry "
                         "(completed calls are stored)", field="--initial")
    return {it.item_id: (v.raw or "") for it, v in zip(task.items, vs, strict=True)}


def run_loop(task: Task, initial: dict[str, str], regulators: Sequence[R.Regulator], *, responder: Judge,
             judge: Judge | None = None, judge2: Judge | None = None, rewriter: Judge | None = None,
             rounds: int = 1, votes: int = 3, store: Any = None, concurrency: int | None = None,
             progress: bool = False, context: RunContext | None = None) -> LoopRun:
    """Run every regulator for ``rounds`` rounds from the same initial outputs (every call made in ``context``, the
    command's ``RunContext``; None: the defaults).

    Args:
        task: the items and their checker.
        initial: item id → round-0 output.
        regulators: the arms (``regulators.get_regulator``).
        responder: revises an output given the report (``form="generate"``).
        judge: the primary feedback judge (needed by any arm that calls a judge).
        judge2: the second family's judge (arms with ``judge="second"``).
        rewriter: writes the constraints-hidden requests (default: ``judge``).
        rounds: R ≥ 1; votes: judge samples per output per round (pooled per channel, §3.4).
    """
    if rounds < 1 or votes < 1:
        raise InputError("rounds and votes must be ≥ 1", field="--rounds")
    for reg in regulators:
        if reg.calls_judge and (judge2 if reg.judge == "second" else judge) is None:
            raise InputError(f"regulator {reg.name!r} needs a {'second ' if reg.judge == 'second' else ''}judge",
                             field="--judge2" if reg.judge == "second" else "--judge")
    check = _Checker(task)
    run = lambda j, reqs, what: _execute(j, reqs, store, concurrency, progress, what, context)  # noqa: E731
    rewrites: dict[str, str] = {}
    if any(r.world == "hidden" and r.calls_judge for r in regulators):
        rewrites = rewrite_requests(task, rewriter or judge, run)
    unit_rows: list[dict[str, Any]] = []
    comp_rows: list[dict[str, Any]] = []
    out_rows: list[dict[str, Any]] = []
    tallies = {r.name: VoteTally(getattr(judge2 if r.judge == "second" else judge, "id", "")) for r in regulators
               if r.calls_judge}
    init_pass = {it.item_id: check(it, initial[it.item_id]) for it in task.items}
    init_loose = {it.item_id: check(it, initial[it.item_id], "loose") for it in task.items}
    for reg in regulators:
        cur = dict(initial)
        j = judge2 if reg.judge == "second" else judge
        for rnd in range(1, rounds + 1):
            start = {it.item_id: check(it, cur[it.item_id]) for it in task.items}
            if reg.channel == "none":
                reports = {it.item_id: R.Report(True) for it in task.items}
            elif reg.channel == "certificate":
                reports = {it.item_id: R.certificate_report([u for u in it.units if not start[it.item_id][u]],
                                                            it.unit_text, it.units) for it in task.items}
            else:
                reports = _judge_reports(reg, task, task.items, cur, rnd, j, reg.votes or votes, rewrites, run,
                                         tallies[reg.name])
            acted = [it for it in task.items if reports[it.item_id].acted]
            reqs = [JudgeRequest(form="generate", request_id=f"{reg.name}|r{rnd}|{it.item_id}|revise",
                                 prompt=P.responder_prompt(task.name, it.request, it.world, cur[it.item_id],
                                                           None if reports[it.item_id].feedback is None
                                                           else list(reports[it.item_id].feedback)),
                                 epoch=rnd, meta={"output": cur[it.item_id], "item_id": it.item_id,
                                                  "failed": [c.units for c in reports[it.item_id].complaints]})
                    for it in acted]
            revised = run(responder, reqs, f"{reg.name} round {rnd}: revisions")
            errors: dict[str, str] = {}
            for it, v in zip(acted, revised, strict=True):
                if v.error is None and v.raw is not None:
                    cur[it.item_id] = v.raw.strip()
                else:
                    errors[it.item_id] = v.error or "empty reply"
            for it in task.items:
                rep = reports[it.item_id]
                flagged = {u for c in rep.complaints for u in c.units}
                end = check(it, cur[it.item_id])
                end_loose = check(it, cur[it.item_id], "loose")
                for u in it.units:
                    unit_rows.append({"regulator": reg.name, "round": rnd, "item_id": it.item_id, "unit": u,
                                      "pass_initial": init_pass[it.item_id][u], "pass_start": start[it.item_id][u],
                                      "pass_end": end[u], "loose_initial": init_loose[it.item_id][u],
                                      "loose_end": end_loose[u], "flagged": u in flagged, "acted": rep.acted})
                for c in rep.complaints:
                    comp_rows.append({"regulator": reg.name, "round": rnd, "item_id": it.item_id, "text": c.text,
                                      "severity": c.severity, "units": list(c.units),
                                      "correct": any(not start[it.item_id][u] for u in c.units)})
                out_rows.append({"regulator": reg.name, "round": rnd, "item_id": it.item_id,
                                 "output": cur[it.item_id], "acted": rep.acted, "error": errors.get(it.item_id)})
    return LoopRun(task.name, tuple(r.name for r in regulators), rounds,
                   pd.DataFrame(unit_rows, columns=list(UNIT_COLUMNS)),
                   pd.DataFrame(comp_rows, columns=list(COMPLAINT_COLUMNS)),
                   pd.DataFrame(out_rows, columns=list(OUTPUT_COLUMNS)), rewrites,
                   {r: t.calls() for r, t in tallies.items()},
                   frozenset().union(*(t.unparsed_keys for t in tallies.values())))

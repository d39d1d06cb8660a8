"""``judgeaudit demo``: the main job, offline, on the embedded default judge.

1. validity — the bundled probe set graded by the local Gemma judge, ``vote:3:local`` and the
   reference judges (constant, flip, length, similarity); the (S, R) profile and its report;
2. validation power — the frozen surface-only family on the public-set slices the package carries;
3. CAP — conditional accuracy profiles of the published judge outputs the package carries
   (zero model calls);
4. world — the embedded judge blind, informed and on a placebo world over a HaluEval QA slice the package
   carries (40 answers to 20 questions, less the 4 questions the structural judge's thresholds were chosen
   on: 32 answers, 16 right and 16 hallucinated), beside the structural judge on its lexical NLI backend and
   the reference instruments (oracle, flag-all, flag-none);
5. loop — the embedded judge as judge and responder on an IFEval slice the package carries (8 GPT-4
   responses), under the control, blind, informed and certificate regulators, scored by the IFEval checker;
6. the embedded judge's validity card, gathered from the runs above (OUT/card).
Everything goes through the call store in OUT, so a rerun is instant. Steps 1, 2, 4 and 5 are the default
runs of ``judgeaudit.commands.default_runs``, which ``card --run-missing`` runs for any judge: each is its
command's own run (``run_command``), so its folder holds what that command writes (result, report, tables).

By default the demo is cut to run in minutes (``SLICES``, stated in the report beside the ``--full`` sizes):
the validity probes of one base item in each of 8 of the 24 probe groups (two per domain) with 2 regrades,
the world on 16 of the HaluEval slice's 40 rows, the loop on one IFEval item with generations of at
most 32 tokens, and 500 bootstrap resamples; every number is still computed from that run's own verdicts.
``full=True`` (``judgeaudit demo --full``) runs the default runs at their own sizes. The steps that make no
model calls (validation power, CAP) and the loading of ``reference:similarity``'s sentence encoder run beside
the ones that do: the embedded judge has one model thread, so its steps run one after another. Before each model step the demo prints the estimate of the embedded
judge's calls (``runtime.estimate``: its stored calls, else a timed warm-up, per request kind); after it,
the measured time; the table of both is OUT/steps.json and a section of the report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from judgeaudit.analyses.validity.options import DEFAULTS as VALIDITY_DEFAULTS
from judgeaudit.commands.default_runs import DEFAULT_RUNS
from judgeaudit.report.html import Section, write_page
from judgeaudit.runtime.context import RunContext

EMBEDDED = "local"
WORLD_JUDGES = [EMBEDDED, "structural:lexical", "reference:oracle", "reference:flag-all", "reference:flag-none"]
WORLD_TEMPERATURE = 0.3
"""The world command's default vote temperature (``world run --temperature``)."""
DEMO_JUDGES = [EMBEDDED, "vote:3:local", "reference:constant", "reference:flip", "reference:length",
               "reference:similarity"]

console = Console(stderr=True)


@dataclass(frozen=True)
class Slices:
    """How the quick demo cuts the default runs (``None``: the default run's own size)."""

    groups: int | None = 8
    """Probe groups kept, taken in turn from each domain (None: all 24)."""
    bases_per_group: int | None = 1
    regrade: int = 2
    world_rows: int = 16
    """Rows of the HaluEval QA slice the world step reads (answers; two per question)."""
    loop_items: int | None = 1
    max_tokens: int | None = 32
    bootstrap: int = 500
    """Bootstrap resamples when ``--bootstrap`` is not given."""

    def describe(self, n_boot: int) -> str:
        full = FULL
        return (f"This demo run is cut to finish in minutes; judgeaudit demo --full runs the full sizes. "
                f"Validity: {self.bases_per_group} base item of each of {self.groups} of the bundled probe "
                f"set's 24 groups (two per domain) with all their edits, and {self.regrade} regrades per judge "
                f"(full: every base item of the 24 groups, {full.regrade} regrades). World: {self.world_rows} of "
                f"the HaluEval QA slice's {full.world_rows} rows (whole questions, in the order of the data-set "
                f"spec's max_rows trim; full: all {full.world_rows}), less the structural judge's development "
                f"questions. Loop: the first {self.loop_items} IFEval item(s) "
                f"with generations of at most {self.max_tokens} tokens (full: all 8 items, the judge's own "
                f"generation bound). Intervals from {n_boot} bootstrap resamples (full: {full.bootstrap}), "
                f"so their ends are coarser. Validation power and CAP are at their full sizes. Every number "
                f"is computed from this run's verdicts.")


SLICES = Slices()
FULL = Slices(groups=None, bases_per_group=None, regrade=VALIDITY_DEFAULTS["regrade"], world_rows=40, loop_items=None,
              max_tokens=None, bootstrap=2000)


def probe_subset(out: Path, bases_per_group: int, groups: int | None = None) -> Path:
    """The bundled probe lines of the first ``bases_per_group`` base items of ``groups`` groups (None: every
    group), the groups taken in turn from each domain (the first group of each domain, then the second, …);
    lines in the bundled file's order."""
    from judgeaudit.probes.io import bundled_probes_path

    lines = [x for x in bundled_probes_path().read_text(encoding="utf-8").splitlines() if x.strip()]
    recs = [json.loads(x) for x in lines]
    by_domain: dict[str, list[str]] = {}
    for rec in recs:
        if rec["group"] not in by_domain.setdefault(rec["domain"], []):
            by_domain[rec["domain"]].append(rec["group"])
    rounds = max(len(g) for g in by_domain.values())
    in_turn = [g[i] for i in range(rounds) for g in by_domain.values() if i < len(g)]
    keep_groups = set(in_turn if groups is None else in_turn[:groups])
    kept: dict[str, list[str]] = {}
    chosen = []
    for line, rec in zip(lines, recs, strict=True):
        if rec["group"] not in keep_groups:
            continue
        bases = kept.setdefault(rec["group"], [])
        if rec["base_id"] not in bases and len(bases) < bases_per_group:
            bases.append(rec["base_id"])
        if rec["base_id"] in bases:
            chosen.append(line)
    path = out / "demo-probes.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Step:
    """One step of the demo that calls the embedded judge: what its calls are (to estimate them before it
    runs) and how to run it (its report sections)."""

    name: str
    judges: list
    """The embedded judge's instances the step calls (``Judge`` objects), each with ``requests``."""
    requests: Callable[[], list]
    run: Callable[[], list[Section]]


def _validity_step(out: Path, n_boot: int, slices: Slices, context: RunContext | None = None) -> Step:
    from judgeaudit.commands.validity import sections
    from judgeaudit.judges import make_judge
    from judgeaudit.probes.design import validity_requests
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    full = slices.bases_per_group is None
    path = bundled_probes_path() if full else probe_subset(out, slices.bases_per_group, slices.groups)

    def requests() -> list:
        return validity_requests(probes_frame(read_probes(path)), slices.regrade)

    def run() -> list[Section]:
        cut = {} if full else {"probes": str(path), "regrade": slices.regrade}
        return sections(DEFAULT_RUNS["validity"].run(DEMO_JUDGES, out / "validity", out / "calls.sqlite", n_boot,
                                                     context=context, **cut))

    embedded = [make_judge(s) for s in DEMO_JUDGES if isinstance(s, str) and _embedded(s)]
    return Step("validity", embedded, requests, run)


def _embedded(spec: str) -> bool:
    """Whether a judge spec calls the embedded model (``local`` or a composite of it)."""
    return spec == EMBEDDED or spec.endswith(":" + EMBEDDED)


def _world_step(out: Path, n_boot: int, slices: Slices, context: RunContext | None = None) -> Step:
    from judgeaudit.commands.default_runs import world_requests, world_set
    from judgeaudit.commands.common import build_judges
    from judgeaudit.commands.world import sampled_specs
    from judgeaudit.report.world import world_sections

    spec = world_set(slices.world_rows)

    def run() -> list[Section]:
        run = DEFAULT_RUNS["world"].run(WORLD_JUDGES, out / "world", out / "calls.sqlite", n_boot, context=context,
                                        set=spec, temperature=WORLD_TEMPERATURE)
        return world_sections(run.result, run.decisions, run.verdicts)

    # the world command's judge: its label votes sampled at the command's temperature (so its call keys)
    judge = build_judges(sampled_specs([EMBEDDED], WORLD_TEMPERATURE))[0]
    return Step("world", [judge], lambda: world_requests(spec), run)


def _loop_step(out: Path, n_boot: int, slices: Slices, context: RunContext | None = None) -> Step:
    from judgeaudit.commands.default_runs import loop_requests
    from judgeaudit.judges import make_judge
    from judgeaudit.report.loop import loop_sections

    local = make_judge(EMBEDDED, **({} if slices.max_tokens is None else {"max_tokens": slices.max_tokens}))

    def run() -> list[Section]:
        # cut: the judge built with its token bound, as responder and feedback judge, on the first items
        judge, cut = ([EMBEDDED], {}) if slices.loop_items is None else ([local], {"max_items": slices.loop_items})
        return loop_sections(DEFAULT_RUNS["loop"].run(judge, out / "loop", out / "calls.sqlite", n_boot,
                                                      context=context, **cut), folder=out / "loop")

    return Step("loop", [local], lambda: loop_requests(slices.loop_items), run)


def _validation_power(out: Path, context: RunContext | None = None) -> list[Section]:
    from judgeaudit.report.validation_power import vp_sections

    return vp_sections(DEFAULT_RUNS["vp"].run([], out / "validation_power", out / "calls.sqlite", 0, context=context))


def _cap() -> list[Section]:
    from judgeaudit.commands.cap import cap_demo

    return cap_demo()


def _load_embedder() -> None:
    """Load the sentence encoder of ``reference:similarity`` (its import and weights: minutes on a busy
    machine) beside the embedded judge's calls, which come first in the validity step. Without the
    package nothing is loaded: the judge's own call reports it."""
    from judgeaudit.errors import InputError
    from judgeaudit.judges import reference

    try:
        reference.embedder()
    except InputError:
        pass


class _InTurn:
    """A judge whose warm-up plan was made beside the step's other judges (``_planned_in_turn``)."""

    def __init__(self, judge: Any, plan: dict[str, tuple[int, float]]):
        self._judge, self._plan = judge, plan

    def planned_seconds(self, todo: list) -> dict[str, tuple[int, float]]:
        return self._plan

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)


def _planned_in_turn(judges: list, todos: list[list]) -> list[dict[str, tuple[int, float]]] | None:
    """The warm-up plan of each judge's calls, the judges run one after another on the one embedded model:
    they share its prompt cache, so a read of a prompt an earlier judge of the step read costs nothing
    (``vote:3:local`` after ``local``: only its regrades are evaluated). None when a judge is not the
    embedded model (or a vote of it)."""
    from judgeaudit.judges.local import call_seconds, warmup_rates

    bases = []
    for judge in judges:
        k = 1
        while getattr(judge, "inner", None) is not None:
            k, judge = k * int(getattr(judge, "k", 1)), judge.inner
        if not hasattr(judge, "planned_work"):
            return None
        bases.append((judge, k))
    model = bases[0][0]
    seq: list = []
    spans = []
    for (_, k), todo in zip(bases, todos, strict=True):
        spans.append((len(seq), len(seq) + k * len(todo)))
        seq += [r for r in todo for _ in range(k)]
    works, rates = model.planned_work(seq), warmup_rates(model.llm)
    plans = []
    for start, end in spans:
        plan: dict[str, tuple[int, float]] = {}
        for w in works[start:end]:
            n, sec = plan.get(w.kind, (0, 0.0))
            plan[w.kind] = (n + 1, sec + call_seconds(w, rates))
        plans.append(plan)
    return plans


def estimate_step(step: Step, store_path: Path) -> dict[str, Any]:
    """The estimate of a step's embedded-judge calls before it runs (``runtime.estimate`` per judge: its
    stored calls of each request kind, else the timed warm-up's plan, made for the step's judges in turn),
    summed over the step's judges."""
    from judgeaudit.runtime.estimate import estimate
    from judgeaudit.runtime.store import CallStore

    requests = step.requests()
    calls = stored = 0
    seconds: float | None = 0.0
    basis = []
    per_call: dict[str, dict[str, float | None]] = {}
    with CallStore(store_path) as cs:
        todos, cached = [], []
        for judge in step.judges:
            keys = [judge.key(r) for r in requests]
            cached.append(cs.completed(keys) if judge.cacheable else {})
            todos.append(list({k: r for k, r in zip(keys, requests, strict=True) if k not in cached[-1]}.values()))
    plans = _planned_in_turn(step.judges, todos) if any(todos) else None
    for i, judge in enumerate(step.judges):
        planned = judge if plans is None else _InTurn(judge, plans[i])
        e = estimate(planned, todos[i], cached=cached[i], concurrency=1)
        calls, stored = calls + e.calls, stored + len(cached[i])
        seconds = None if seconds is None or e.seconds is None else seconds + e.seconds
        basis.append(f"{judge.id}: {e.time_basis}")
        per_call[judge.id] = e.per_call
    return {"step": step.name, "calls": calls, "stored": stored, "estimate_s": seconds, "basis": "; ".join(basis),
            "per_call": per_call}


def _judge_seconds(store_path: Path, since: int, judge_ids: set[str]) -> tuple[int, float]:
    """Calls stored after the first ``since`` rows by ``judge_ids`` and the sum of their latencies."""
    from judgeaudit.runtime.store import CallStore

    with CallStore(store_path, readonly=True) as cs:
        df = cs.frame().iloc[since:]
    df = df[df["judge_id"].isin(judge_ids)]
    return len(df), float(df["latency_s"].fillna(0.0).sum())


def _stored(store_path: Path) -> int:
    from judgeaudit.runtime.store import CallStore

    with CallStore(store_path) as cs:
        return len(cs)


def estimate_whole(steps: list[Step], store_path: Path) -> dict[str, Any]:
    """The estimate of the whole demo's embedded-judge calls before any step runs: each model step's estimate
    (``estimate_step``) and their sum (None when a step's is unknown). The steps without model calls (validation
    power, CAP: no judge calls) run beside them, and the analyses, pages and card are not timed by it."""
    rows = [estimate_step(step, store_path) for step in steps]
    total = None if any(r["estimate_s"] is None for r in rows) else sum(r["estimate_s"] for r in rows)
    return {"calls": sum(r["calls"] for r in rows), "stored": sum(r["stored"] for r in rows), "estimate_s": total,
            "steps": {r["step"]: r["estimate_s"] for r in rows}}


def whole_line(whole: dict[str, Any]) -> str:
    """The line the demo prints before it starts."""
    from judgeaudit.runtime.estimate import duration

    def est(x: float | None) -> str:
        return "unknown" if x is None else f"~{duration(x)}"

    parts = ", ".join(f"{name} {est(x)}" for name, x in whole["steps"].items())
    return (f"demo: {whole['calls']} calls of the embedded judge to make ({whole['stored']} stored), estimate "
            f"{est(whole['estimate_s'])} ({parts}); the analyses, pages and card come on top of the calls")


def run_step(step: Step, store_path: Path) -> tuple[list[Section], dict[str, Any]]:
    """Print the step's estimate, run it, and return its sections and its row of the steps table
    (estimate before the step beside the measured time of its embedded-judge calls and of the whole step)."""
    from judgeaudit.runtime.estimate import duration

    row = estimate_step(step, store_path)
    est = "unknown" if row["estimate_s"] is None else f"~{duration(row['estimate_s'])}"
    console.print(f"[bold]demo: {step.name}[/bold] — {row['calls']} calls of the embedded judge to make "
                  f"({row['stored']} stored); estimate {est}")
    since = _stored(store_path)
    started = time.perf_counter()
    sections = step.run()
    row["wall_s"] = time.perf_counter() - started
    row["made"], row["judge_s"] = _judge_seconds(store_path, since, {j.id for j in step.judges})
    row["ratio"] = row["estimate_s"] / row["judge_s"] if row["estimate_s"] and row["judge_s"] else None
    # the embedded judge's calls run one at a time (its one model thread): their time is part of the step's;
    # calls that overlapped (another backend) add up to more than the wall time and are said to be concurrent
    part = "of which" if row["judge_s"] <= row["wall_s"] else "with"
    kind = "embedded-judge calls" if part == "of which" else "concurrent judge calls (summed)"
    console.print(f"demo: {step.name} took {duration(row['wall_s'])}, {part} {duration(row['judge_s'])} in "
                  f"{row['made']} {kind} (estimate {est})")
    return sections, row


def steps_section(rows: list[dict[str, Any]]) -> Section:
    """The report's table of each model step's estimate beside its measured time."""
    import pandas as pd

    from judgeaudit.report.html import table_html

    df = pd.DataFrame([{"step": r["step"], "calls to make": r["calls"], "estimate (s)": r["estimate_s"],
                        "calls made": r["made"], "measured in calls (s)": r["judge_s"],
                        "estimate / measured": r["ratio"], "step wall (s)": r["wall_s"]} for r in rows],
                      columns=["step", "calls to make", "estimate (s)", "calls made", "measured in calls (s)",
                               "estimate / measured", "step wall (s)"])
    return Section("This run's steps: estimate and measured time",
                   "<p class='note'>Before each step that calls the embedded judge, the estimate of its calls "
                   "(from its stored calls of each request kind, else a short timed warm-up on this machine; "
                   "the loop's is an upper bound: a report and a revision for every item and regulator, each "
                   "generating its token bound, and as its prompts depend on the replies it does not see "
                   "its stored calls on a rerun); after it, the measured time of the calls it made and of the whole step "
                   "(analysis and report included). Seconds, on this machine in this run.</p>"
                   + table_html(df, float_format="{:.1f}",
                                dash_note="— : no estimate (a judge with no known rate) or no call made."))


def run_demo(out: Path, *, n_boot: int | None = None, full: bool = False, context: RunContext | None = None) -> Path:
    """Run the demo analyses and write OUT/report.html (and OUT/steps.json); returns the report's path.
    ``n_boot`` None: the slices' bootstrap count (500 cut, 2000 with ``full``); ``context``: the command's
    ``RunContext`` the judge calls are made in (None: the defaults)."""
    out.mkdir(parents=True, exist_ok=True)
    slices = FULL if full else SLICES
    n_boot = slices.bootstrap if n_boot is None else n_boot
    store = out / "calls.sqlite"
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    # the steps without model calls run beside the embedded judge's, which share its one model thread
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgeaudit-demo") as pool:
        vp, cap = pool.submit(_validation_power, out, context), pool.submit(_cap)
        if "reference:similarity" in DEMO_JUDGES:
            pool.submit(_load_embedder)
        model_steps = {"validity": _validity_step(out, n_boot, slices, context=context),
                       "world": _world_step(out, n_boot, slices, context=context),
                       "loop": _loop_step(out, n_boot, slices, context=context)}
        whole = estimate_whole(list(model_steps.values()), store)
        console.print(whole_line(whole), highlight=False)

        def model(name: str) -> Callable[[], list[Section]]:
            def go() -> list[Section]:
                sections, row = run_step(model_steps[name], store)
                rows.append(row)
                return sections
            return go

        steps = (("validity", model("validity")),
                 ("validation power", vp.result),
                 ("conditional accuracy profiles", cap.result),
                 ("what a judge must be shown (HaluEval QA slice: blind, informed, placebo)", model("world")),
                 ("closing the loop (IFEval slice, the embedded judge as judge and responder)", model("loop")))
        all_sections: list[Section] = [] if full else [Section("How this demo run was cut",
                                                               f"<p class='note'>{slices.describe(n_boot)}</p>")]
        for name, step in steps:
            console.print(f"[bold]demo: {name}[/bold]")
            all_sections += step()
    (out / "steps.json").write_text(json.dumps({"slices": asdict(slices), "n_boot": n_boot, "full": full,
                                                "whole_estimate": whole, "steps": rows}, indent=2) + "\n",
                                               encoding="utf-8")
    path = write_page(out / "report.html", "judgeaudit demo", all_sections + [steps_section(rows)],
                      subtitle="Embedded judge: Gemma 3 270M (base model, CPU, offline). A weak judge, "
                               "reported as it is.")
    from judgeaudit.commands.card import card

    runs = [out / name for name in ("validity", "validation_power", "world", "loop") if (out / name).is_dir()]
    first = DEMO_JUDGES[0]   # the embedded judge, unless the demo's judges were swapped
    card(first["spec"] if isinstance(first, dict) else first, runs, out / "card")
    console.print(f"validity card of the demo's first judge → {out / 'card' / 'card.html'}")
    judge_s = sum(r["judge_s"] for r in rows)
    est = "unknown" if whole["estimate_s"] is None else f"{whole['estimate_s']:.0f} s"
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s, {judge_s:.0f} s of it in "
                  f"{sum(r['made'] for r in rows)} embedded-judge calls (estimated before the start: {est}) → {path}")
    return path

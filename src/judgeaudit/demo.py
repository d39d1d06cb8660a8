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
runs of ``judgeaudit.commands.default_runs``, which ``card --run-missing`` runs for any judge.

By default the demo is cut to run in minutes (``SLICES``, stated in the report): the validity probes of one
base item per group, fewer regrades, and a shorter loop slice with shorter generations; every number is still
computed from that run's own verdicts. ``full=True`` (``judgeaudit demo --full``) runs the default runs at
their own sizes. The steps that make no model calls (validation power, CAP) run beside the ones that do:
the embedded judge has one model thread, so its steps run one after another.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from judgeaudit.commands.default_runs import DEFAULT_RUNS
from judgeaudit.report.html import Section, write_page

EMBEDDED = "local"
WORLD_JUDGES = [EMBEDDED, "structural:lexical", "reference:oracle", "reference:flag-all", "reference:flag-none"]
DEMO_JUDGES = [EMBEDDED, "vote:3:local", "reference:constant", "reference:flip", "reference:length",
               "reference:similarity"]

console = Console(stderr=True)


@dataclass(frozen=True)
class Slices:
    """How the quick demo cuts the default runs (``None``: the default run's own size)."""

    bases_per_group: int | None = 1
    regrade: int = 12
    loop_items: int | None = 3
    max_tokens: int | None = 128

    def describe(self) -> str:
        return (f"This demo run is cut to finish in minutes (judgeaudit demo --full runs the full sizes): "
                f"validity on {self.bases_per_group} base item(s) of each of the bundled probe set's groups "
                f"with all their edits, and {self.regrade} regrades; the loop on the first {self.loop_items} "
                f"IFEval items with generations of at most {self.max_tokens} tokens. The world, validation-power "
                f"and CAP sections are at their full sizes. Every number is computed from this run's verdicts.")


SLICES = Slices()
FULL = Slices(bases_per_group=None, regrade=48, loop_items=None, max_tokens=None)


def probe_subset(out: Path, bases_per_group: int) -> Path:
    """The bundled probe lines of the first ``bases_per_group`` base items of each group, in their order."""
    from judgeaudit.probes.io import bundled_probes_path

    lines = bundled_probes_path().read_text(encoding="utf-8").splitlines()
    kept: dict[str, list[str]] = {}
    chosen = []
    for line in lines:
        if not line.strip():
            continue
        rec = json.loads(line)
        bases = kept.setdefault(rec["group"], [])
        if rec["base_id"] not in bases and len(bases) < bases_per_group:
            bases.append(rec["base_id"])
        if rec["base_id"] in bases:
            chosen.append(line)
    path = out / "demo-probes.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


def _validity(out: Path, n_boot: int, slices: Slices) -> list[Section]:
    from judgeaudit.commands.validity import print_summary, run_validity, sections

    if slices.bases_per_group is None:
        r = DEFAULT_RUNS["validity"].run(DEMO_JUDGES, out / "validity", out / "calls.sqlite", n_boot)
    else:
        r = run_validity(str(probe_subset(out, slices.bases_per_group)), DEMO_JUDGES, out=out / "validity",
                         store=out / "calls.sqlite", n_boot=n_boot, n_regrade=slices.regrade)
    print_summary(r.result)
    return sections(r)


def _validation_power(out: Path) -> list[Section]:
    from judgeaudit.report.validation_power import vp_sections

    return vp_sections(DEFAULT_RUNS["vp"].run([], out / "validation_power", out / "calls.sqlite", 0))


def _cap() -> list[Section]:
    from judgeaudit.commands.cap import cap_demo

    return cap_demo()


def _world(out: Path, n_boot: int) -> list[Section]:
    from judgeaudit.report.world import world_sections

    return world_sections(DEFAULT_RUNS["world"].run(WORLD_JUDGES, out / "world", out / "calls.sqlite", n_boot).result)


def _loop(out: Path, slices: Slices) -> list[Section]:
    from judgeaudit.report.loop import loop_sections

    if slices.loop_items is None:
        return loop_sections(DEFAULT_RUNS["loop"].run([EMBEDDED], out / "loop", out / "calls.sqlite", 2000))
    from judgeaudit.commands.loop import run_loop_command
    from judgeaudit.commands.default_runs import DATA, LOOP_REGULATORS
    from judgeaudit.judges import make_judge

    local = make_judge(EMBEDDED, max_tokens=slices.max_tokens)
    return loop_sections(run_loop_command(task="ifeval", data=DATA / "ifeval", initial="shipped", responder=local,
                                          judge=local, regulators=list(LOOP_REGULATORS), out=out / "loop",
                                          store=out / "calls.sqlite", rounds=1, votes=1, bootstrap=2000,
                                          max_items=slices.loop_items))


def run_demo(out: Path, *, n_boot: int = 2000, full: bool = False) -> Path:
    """Run the demo analyses and write OUT/report.html; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    slices = FULL if full else SLICES
    started = time.perf_counter()
    # the steps without model calls run beside the embedded judge's, which share its one model thread
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgeaudit-demo") as pool:
        vp, cap = pool.submit(_validation_power, out), pool.submit(_cap)
        steps = (("validity", lambda: _validity(out, n_boot, slices)),
                 ("validation power", vp.result),
                 ("conditional accuracy profiles", cap.result),
                 ("what a judge must be shown (HaluEval QA slice: blind, informed, placebo)",
                  lambda: _world(out, n_boot)),
                 ("closing the loop (IFEval slice, the embedded judge as judge and responder)",
                  lambda: _loop(out, slices)))
        all_sections: list[Section] = [] if full else [Section("How this demo run was cut",
                                                               f"<p class='note'>{slices.describe()}</p>")]
        for name, step in steps:
            console.print(f"[bold]demo: {name}[/bold]")
            all_sections += step()
    path = write_page(out / "report.html", "judgeaudit demo", all_sections,
                      subtitle="Embedded judge: Gemma 3 270M (base model, CPU, offline). A weak judge, "
                               "reported as it is.")
    from judgeaudit.commands.card import card

    runs = [out / name for name in ("validity", "validation_power", "world", "loop") if (out / name).is_dir()]
    first = DEMO_JUDGES[0]   # the embedded judge, unless the demo's judges were swapped
    card(first["spec"] if isinstance(first, dict) else first, runs, out / "card")
    console.print(f"validity card of the demo's first judge → {out / 'card' / 'card.html'}")
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s → {path}")
    return path

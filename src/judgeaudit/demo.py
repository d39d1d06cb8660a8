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
runs of ``judgeaudit.default_runs``, which ``card --run-missing`` runs for any judge.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from judgeaudit.default_runs import DEFAULT_RUNS
from judgeaudit.report.html import Section, write_page

EMBEDDED = "local"
WORLD_JUDGES = [EMBEDDED, "structural:lexical", "reference:oracle", "reference:flag-all", "reference:flag-none"]
DEMO_JUDGES = [EMBEDDED, "vote:3:local", "reference:constant", "reference:flip", "reference:length",
               "reference:similarity"]

console = Console(stderr=True)


def _validity(out: Path, n_boot: int) -> list[Section]:
    from judgeaudit.commands.validity import print_summary, sections

    r = DEFAULT_RUNS["validity"].run(DEMO_JUDGES, out / "validity", out / "calls.sqlite", n_boot)
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


def _loop(out: Path) -> list[Section]:
    from judgeaudit.loop.report import loop_sections

    return loop_sections(DEFAULT_RUNS["loop"].run([EMBEDDED], out / "loop", out / "calls.sqlite", 2000))


def run_demo(out: Path, *, n_boot: int = 2000) -> Path:
    """Run the three demo analyses and write OUT/report.html; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    all_sections: list[Section] = []
    for name, step in (("validity", lambda: _validity(out, n_boot)),
                       ("validation power", lambda: _validation_power(out)),
                       ("conditional accuracy profiles", _cap),
                       ("what a judge must be shown (HaluEval QA slice: blind, informed, placebo)",
                        lambda: _world(out, n_boot)),
                       ("closing the loop (IFEval slice, the embedded judge as judge and responder)",
                        lambda: _loop(out))):
        console.print(f"[bold]demo: {name}[/bold]")
        all_sections += step()
    path = write_page(out / "report.html", "judgeaudit demo", all_sections,
                      subtitle="Embedded judge: Gemma 3 270M (base model, CPU, offline). A weak judge, "
                               "reported as it is.")
    from judgeaudit.commands.card import card

    runs = [out / name for name in ("validity", "validation_power", "world", "loop") if (out / name).is_dir()]
    card(EMBEDDED, runs, out / "card")
    console.print(f"validity card of the embedded judge → {out / 'card' / 'card.html'}")
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s → {path}")
    return path

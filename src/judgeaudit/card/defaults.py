"""The default runs a card names for a section no run folder measured: the bundled data they read and
the equivalent command lines. What runs them (their requests and their run functions) is the command
edge's ``judgeaudit.commands.default_runs``, built on this table.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from judgeaudit.analyses.validity.options import DEFAULTS as VALIDITY_DEFAULTS
from judgeaudit.analyses.world.options import DEFAULTS as WORLD_DEFAULTS
from judgeaudit.loop.options import DEFAULT_REGULATORS as LOOP_DEFAULT_REGULATORS
from judgeaudit.loop.options import DEFAULT_RUN as LOOP_DEFAULT_RUN
from judgeaudit.loop.options import command_line as loop_command_line

DATA = Path(str(files("judgeaudit") / "data"))
WORLD_ROWS = 40


def world_set(rows: int = WORLD_ROWS) -> str:
    """The world run's data-set spec: the first ``rows`` rows (answers) of the HaluEval QA slice."""
    return f"halueval:{DATA / 'halueval'}?part=qa&max_rows={rows}"


WORLD_SET = world_set()
WORLD_ARMS = ("blind", "informed", "placebo")
WORLD_SPLIT = "report"
"""The structural judge's development questions are never reported on (its thresholds were chosen on them)."""
WORLD_REFERENCES = ("reference:oracle", "reference:flag-all", "reference:flag-none")
"""The world run's instruments beside the judge: the oracle ceiling and the two constant floors."""
WORLD_RUN = {**WORLD_DEFAULTS, "set": WORLD_SET, "arms": WORLD_ARMS, "split": WORLD_SPLIT, "votes": 1}
"""The default world run's analysis options (``analyses.world.options``): the declared defaults but the set, the
arms, the split and one vote per request."""
FIXTURE_SET = "judgebench_fixture"
"""The CAP set name of judgeaudit's own JudgeBench-format fixture (``data/judgebench_fixture``): self-written pairs
and simulated judges, never JudgeBench's (whose copy the user gives as ``judgebench:PATH``)."""
CAP_SETS = (f"judgebench:{DATA / FIXTURE_SET}?name={FIXTURE_SET}", f"llmbar:{DATA / 'llmbar'}")
LOOP_REGULATORS = LOOP_DEFAULT_REGULATORS

DEFAULT_COMMANDS: dict[str, str] = {
    "validity": f"judgeaudit validity run --judge {{judge}} --probes {VALIDITY_DEFAULTS['probes']} --out DIR",
    "vp": "judgeaudit vp audit --set SPEC --out DIR",
    "cap": f"judgeaudit cap run --set '{CAP_SETS[0]}' --set '{CAP_SETS[1]}' --judge {{judge}} --out DIR",
    "world": f"judgeaudit world run --set '{WORLD_RUN['set']}' --judge {{judge}} "
             + " ".join(f"--judge {r}" for r in WORLD_REFERENCES) + " "
             + " ".join(f"--arm {a}" for a in WORLD_RUN["arms"])
             + f" --split {WORLD_RUN['split']} --votes {WORLD_RUN['votes']} --out DIR",
    "loop": loop_command_line(LOOP_DEFAULT_RUN),
}
"""Card section → the command that measures it (``{judge}`` the judge's spec), in the card's order."""

"""The card's verdict sentences on simulated judges and label sets, through the real analyses: judges and
sets with no effect planted (the sentences that assert an effect must stay at or below the nominal 5%)
and with one planted (they must fire).

Each ``*_card(seed, ...)`` runs one analysis on a fresh simulated table (small sizes: a run takes well
under a second) and returns the card's verdict sentences. ``rate(name, kind, seeds)`` is the share of
seeds on which sentence ``name`` fires. Run as a script it prints the table of rates over more seeds
(``python tests/card/null_sweep.py [N [ANALYSIS ...]]``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyses"))

from simulate_validity import grades_frame, make_probes, null_judge_grades, planted, simulate_grades  # noqa: E402

from judgeaudit.card.build import build_card  # noqa: E402
from judgeaudit.card.sources import Run  # noqa: E402

J = "api:acme/judge-1"

#: sentence → the text that marks it, and whether it asserts an effect (a claim a null must not make)
SENTENCES: dict[str, tuple[str, bool]] = {
    "validity: R at matched invariance": ("of construct-changing edits", False),
    "validity: insensitive on an axis": ("It is insensitive on", True),
    "validity: moves less on an axis": ("It moves less on", True),
    "validity: gap not established": ("strength gap (", False),
    "validity: wrong-way flips": ("Most of its construct flips go the wrong way", True),
    "validity: constant instrument": ("gives a single grade", True),
    "validity: uninterpretable": ("is uninterpretable on construct sensitivity", False),
    "vp: recoverable from surface form": ("is recoverable from", True),
    "vp: reproduces part": ("reproduces part of its validation set", True),
    "vp: not established": ("Recovery of ", False),
    "cap: weakest condition": ("its CAP profile is weakest on", True),
    "cap: none distinguishably weakest": ("is distinguishably weakest", False),
}


def fires(lines: list[str], name: str) -> bool:
    return any(SENTENCES[name][0] in line for line in lines)


def _verdict(kind: str, data: dict) -> list[str]:
    return build_card(J, [Run(Path(f"/sweep/{kind}/result.json"), kind, data)]).verdict


# --- validity -------------------------------------------------------------------------------------------------

VALIDITY_JUDGES: dict[str, Callable[[pd.DataFrame, int], pd.DataFrame]] = {
    # no effect: the same flip probability on both construct axes, and on the wrong way as the right way
    "equal axes": lambda p, s: simulate_grades(p, planted(0.05, 0.5, 0.5), seed=s, judge_id=J),
    # no effect: edits graded as their original plus noise (construct and control alike)
    "ignores the edit": lambda p, s: null_judge_grades(p, seed=s, judge_id=J),
    # no effect: every text an independent random grade
    "random verdicts": lambda p, s: grades_frame(J, dict(zip(
        [*pd.unique(p["base_id"]), *p["probe_id"]],
        np.random.default_rng(s).uniform(1, 9, p["base_id"].nunique() + len(p)), strict=True))),
    # planted: strength edits move it far less than scope edits
    "blind to strength": lambda p, s: simulate_grades(p, planted(0.05, 0.6, 0.15), seed=s, judge_id=J),
    # planted: most flips the wrong way (its originals mostly graded high)
    "wrong way": lambda p, s: simulate_grades(p, planted(0.05, 0.5, 0.5), seed=s, judge_id=J, p_high=0.9),
    # planted: one grade for everything
    "constant": lambda p, s: grades_frame(J, dict.fromkeys([*pd.unique(p["base_id"]), *p["probe_id"]], 5.0)),
}


def validity_card(seed: int, judge: str, *, n_base: int = 24, n_boot: int = 200) -> list[str]:
    from judgeaudit.analyses.validity import validity_profile

    probes = make_probes(n_base, seed=seed)
    verdicts = VALIDITY_JUDGES[judge](probes, seed)
    r = validity_profile(probes, verdicts, n_boot=n_boot, n_perm=200, seed=seed)
    return _verdict("validity", {**r.to_dict(), "direction_source": "human"})


# --- validation power -----------------------------------------------------------------------------------------

WORDS = "alpha beta gamma delta epsilon zeta theta iota kappa lambda sigma omega river stone cloud".split()

VP_SETS: dict[str, Callable[[int, int, np.random.Generator], str]] = {
    "random labels": lambda i, n_words, rng: str(rng.integers(0, 2)),           # no effect
    "length labels": lambda i, n_words, rng: str(int(n_words > 30)),             # planted: length is the label
    "noisy length labels": lambda i, n_words, rng: str(int((n_words > 30) != (rng.random() < 0.3))),
}


def vp_card(seed: int, labels: str, *, n: int = 80, n_permutations: int = 19, n_boot: int = 200) -> list[str]:
    from judgeaudit.analyses.validation_power import audit_validation_power

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        n_words = int(rng.integers(5, 60))
        rows.append({"item_id": f"i{i}", "text": " ".join(rng.choice(WORDS, size=n_words)),
                     "label": VP_SETS[labels](i, n_words, rng), "group": f"g{i % (n // 2)}", "condition": None})
    r = audit_validation_power({"set": pd.DataFrame(rows)}, modes=("item",), n_permutations=n_permutations,
                               seed=seed, n_boot=n_boot, transfer=False, members=("length_only",))
    return _verdict("vp", r.to_dict())


# --- CAP ------------------------------------------------------------------------------------------------------

CAP_JUDGES: dict[str, tuple[float, float, float, float]] = {
    "equal accuracy": (0.7, 0.7, 0.7, 0.7),       # no effect: every content condition alike
    "coin flips": (0.5, 0.5, 0.5, 0.5),           # no effect: random verdicts
    "weak on C2": (0.85, 0.45, 0.85, 0.85),       # planted
}


def cap_card(seed: int, judge: str, *, n_per_cell: int = 40, n_boot: int = 200) -> list[str]:
    from judgeaudit.analyses.cap import cap_profile
    from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell

    rng = np.random.default_rng(seed)
    acc = CAP_JUDGES[judge]
    n = 4 * n_per_cell
    subset = [f"s{1 + i // n_per_cell}" for i in range(n)]
    lab = rng.choice(["A", "B"], n)
    other = np.where(lab == "A", "B", "A")
    p_right = np.array([acc[int(s[1]) - 1] for s in subset])
    ab = np.where(rng.random(n) < p_right, lab, other)
    ba = np.where(rng.random(n) < p_right, lab, other)
    ids = [f"p{i}" for i in range(n)]
    pairs = pd.DataFrame({"pair_id": ids, "prompt": "q", "response_a": "a", "response_b": "b", "label": lab,
                          "group": None, "source_set": "bench", "subset": subset, "condition_a": None,
                          "condition_b": None, "meta": [{}] * n})
    table = pd.DataFrame({"pair_id": ids, "judge_id": J, "family": "f", "choice_ab": ab, "choice_ba": ba,
                          "rationale_ab": "because", "rationale_ba": "because", "failure_ab": None,
                          "failure_ba": None})
    cov = {f"C{k}": CoverageCell("direct", f"subset s{k}; PA", (f"s{k}",)) for k in range(1, 5)}
    cov |= {c: UNAVAILABLE for c in ("C5", "C6", "C7", "C8")}
    r = cap_profile(pairs, {J: table}, {"bench": cov}, n_boot=n_boot, seed=seed, n_perm=9)
    return _verdict("cap", r.to_dict())


# --- rates ----------------------------------------------------------------------------------------------------

RUNNERS: dict[str, tuple[Callable[..., list[str]], dict[str, object]]] = {
    "validity": (validity_card, VALIDITY_JUDGES), "vp": (vp_card, VP_SETS), "cap": (cap_card, CAP_JUDGES)}


def verdicts(analysis: str, kind: str, seeds: range) -> list[list[str]]:
    fn = RUNNERS[analysis][0]
    return [fn(s, kind) for s in seeds]


def rate(runs: list[list[str]], name: str) -> float:
    return float(np.mean([fires(lines, name) for lines in runs]))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    only = sys.argv[2:] or list(RUNNERS)
    print(f"firing rate of each sentence over {n} seeds")
    for analysis, (_, kinds) in ((a, r) for a, r in RUNNERS.items() if a in only):
        for kind in kinds:
            runs = verdicts(analysis, kind, range(n))
            rates = {name: rate(runs, name) for name in SENTENCES if name.startswith(analysis)}
            print(f"{analysis:8s} {kind:22s} " + "  ".join(f"{k.split(': ')[1]} {v:.2f}" for k, v in rates.items()))

"""Simulated cards for the size and power of the example policies' bars (docs/gate/*.yaml), on the designs users
have: the validity profile on 5 and 48 base items (the bundled probe set's design: 7 construct and 5 control
edits per base item), and the world run on the demo's HaluEval slices (7 questions, 14 answers; ``--full``: 16
questions, 32 answers; each question one right and one hallucinated answer, one source item).

* validity: a judge grades an original 2 and an edit 8 when it moves, else 2; each control edit moves with
  probability 0.02 (S ≈ 0.98, above the 0.90 floor) and each construct edit with probability ``r``, so the
  population R at the matched point (τ = 8) is ``r``. Every judge of a cell is profiled by
  ``validity_profile`` (the run's own estimator: Eq. (6), base-item bootstrap, τ re-selected in every
  resample) in one call, and its card section is built by ``card.build.validity_section`` from the result.
* world: per question, the blind arm finds the hallucinated answer with probability ``blind``, the informed arm
  with ``blind + gain`` (independently), and the informed arm leaves the right answer unflagged with
  probability ``specificity``. Rates, intervals and the paired gain come from ``stats.paired`` (``boot_metric``,
  ``paired_gain``: the functions the world run calls, bootstrap over source items, seed 0 as the run's
  default) and the card's world section is shaped as ``card.build`` writes it.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from cardshape import whole

from judgeaudit.card.build import validity_section
from judgeaudit.card.sources import Run
from judgeaudit.gate.evaluate import evaluate_bar
from judgeaudit.gate.policy import Bar
from judgeaudit.stats.paired import FIELDS, boot_metric, paired_gain

N_BOOT = 500
REPS = 200


@functools.cache
def probes_of(n_bases: int) -> pd.DataFrame:
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    probes = probes_frame(read_probes(bundled_probes_path()))
    bases = list(dict.fromkeys(probes["base_id"]))
    assert len(bases) >= n_bases
    return probes[probes["base_id"].isin(bases[:n_bases])].reset_index(drop=True)


@functools.cache
def validity_cards(n_bases: int, r: float, reps: int = REPS, seed: int = 0) -> tuple[dict, ...]:
    """One card per simulated judge (see the module)."""
    from judgeaudit.analyses.validity import validity_profile
    from judgeaudit.probes.taxonomy import SLOT_BY_NAME

    probes = probes_of(n_bases)
    control = probes["slot"].map(lambda s: SLOT_BY_NAME[s].axis == "control").to_numpy()
    rng = np.random.default_rng([seed, n_bases, int(round(r * 1000))])
    moves = rng.random((reps, len(probes))) < np.where(control, 0.02, r)
    judges = [f"sim{i}" for i in range(reps)]
    bases = probes["base_id"].unique()
    rows = pd.concat([
        pd.DataFrame({"judge_id": np.repeat(judges, len(bases)), "request_id": np.tile(bases, reps), "score": 2.0}),
        pd.DataFrame({"judge_id": np.repeat(judges, len(probes)),
                      "request_id": np.tile(probes["probe_id"].to_numpy(), reps),
                      "score": np.where(moves.ravel(), 8.0, 2.0)})], ignore_index=True)
    rows = rows.assign(parse_ok=True, error=None, epoch=0)
    res = validity_profile(probes, rows, s_floor=0.90, n_boot=N_BOOT, n_perm=0, seed=seed).to_dict()
    run = Run(Path("simulated") / "result.json", "validity", res)
    return tuple(whole({"judge": j, "sections": {"validity": validity_section([run], j)}}) for j in judges)


def _counts(gold: np.ndarray, flagged: np.ndarray) -> np.ndarray:
    """``(questions, 5)`` counts (``FIELDS``) of one arm, one source item per question."""
    out = np.zeros((gold.shape[0], len(FIELDS)))
    for k, (g, f) in enumerate(((True, True), (True, False), (False, False), (False, True))):
        out[:, k] = ((gold == g) & (flagged == f)).sum(axis=1)
    out[:, 4] = out[:, 3]
    return out


@functools.cache
def world_cards(questions: int, blind: float, gain: float, specificity: float, reps: int = REPS,
                seed: int = 0) -> tuple[dict, ...]:
    """One card per simulated world run (see the module)."""
    rng = np.random.default_rng([seed, questions, int(round(blind * 1000)), int(round(gain * 1000)),
                                 int(round(specificity * 1000))])
    gold = np.tile([True, False], (questions, 1))                 # per question: the hallucinated, the right answer
    cards = []
    for _ in range(reps):
        u = rng.random((3, questions))
        fb = np.stack([u[0] < blind, np.zeros(questions, bool)], axis=1)                 # blind flags no right answer
        fi = np.stack([u[1] < blind + gain, u[2] >= specificity], axis=1)
        cb, ci = _counts(gold, fb), _counts(gold, fi)
        arms = {}
        for arm, c in (("blind", cb), ("informed", ci)):
            arms[arm] = {}
            for m in ("recall", "specificity"):
                v, lo, hi = boot_metric(c, m, n_boot=N_BOOT, seed=0)
                arms[arm][m] = {"value": v, "ci": [lo, hi], "n": questions, "unit": "group"}
        g, lo, hi = paired_gain(cb, ci, "recall", n_boot=N_BOOT, seed=0)
        paired = [{"a": "blind", "b": "informed", "metric": "recall", "gain": g, "ci": [lo, hi], "n": questions,
                   "unit": "group"}]
        cards.append(whole({"judge": "sim", "sections": {"world": {"measured": True, "arms": arms, "paired": paired,
                                                                   "numbers": {"arms.blind.n": 2 * questions,
                                                                               "arms.informed.n": 2 * questions}}}}))
    return tuple(cards)


def outcomes(bar: Bar, cards: tuple[dict, ...]) -> Counter:
    return Counter(evaluate_bar(c, bar).outcome for c in cards)

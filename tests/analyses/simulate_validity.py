"""Simulated probe sets and judges with planted per-slot flip probabilities (for the validity tests
and the benchmark).

A simulated judge grades each base original low (``lo``) or high (``hi``) with probability 1/2;
each edited text lands on the other side with its slot's flip probability and on the same side
otherwise. At any τ in (lo, hi] the probe flips with exactly the planted probability, so the true
S is 1 − mean control-slot probability and the true R the mean construct-slot probability (every
base item carries every slot, so Eq. (6) weights slots equally).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, CONTROL_SLOTS, SLOTS, axis_of, intended_direction

ALL_SLOTS = tuple(s.name for s in SLOTS)


def one_edit_per_arm(b: int) -> tuple[str, ...]:
    """The paper's hard design (§4.2: 246 construct items over ~243 bases): base item ``b`` carries
    one construct edit and one control edit, the slots cycling over the taxonomy."""
    return (CONSTRUCT_SLOTS[b % len(CONSTRUCT_SLOTS)], CONTROL_SLOTS[b % len(CONTROL_SLOTS)])


def make_probes(n_base: int = 48, slots: tuple[str, ...] = ALL_SLOTS, *, seed: int = 0,
                labels: Mapping[str, list[list[str]]] | None = None,
                slots_of: Callable[[int], tuple[str, ...]] | None = None) -> pd.DataFrame:
    """A probe table: ``n_base`` base items × ``slots`` (or ``slots_of(b)`` for base item ``b``);
    edited texts vary in length so the length checks have something to read. ``labels`` maps
    slot → one label list per base."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {k: [] for k in ("probe_id", "base_id", "group", "domain", "criterion", "evidence",
                                              "original", "edited", "slot", "labels", "intended_direction",
                                              "meta")}
    for b in range(n_base):
        original = f"Claim {b} " + "word " * int(rng.integers(8, 20))
        for s in (slots_of(b) if slots_of else slots):
            extra = "more " * int(rng.integers(0, 4)) if axis_of(s) == "scope" else ""
            edited = original[: max(10, len(original) - int(rng.integers(0, 6)))] if axis_of(s) == "strength" \
                else original + extra + s
            for k, v in (("probe_id", f"b{b:03d}-{s}"), ("base_id", f"b{b:03d}"), ("group", f"g{b // 2:03d}"),
                         ("domain", ("geo", "med", "ml", "econ")[b % 4]), ("criterion", "overreach"),
                         ("evidence", f"Evidence {b}."), ("original", original), ("edited", edited), ("slot", s),
                         ("labels", labels[s][b] if labels and s in labels else None),
                         ("intended_direction", intended_direction(s)), ("meta", {})):
                cols[k].append(v)
    return pd.DataFrame(cols) if cols["probe_id"] else pd.DataFrame()


def simulate_grades(probes: pd.DataFrame, flip_p: Mapping[str, float], *, seed: int = 0,
                    lo: float = 3.0, hi: float = 7.0, judge_id: str = "sim", p_high: float = 0.5) -> pd.DataFrame:
    """Verdict rows (epoch 0) for one simulated judge with per-slot flip probabilities.

    A base original is graded high (overreaching) with probability ``p_high``; a flip of a low
    original goes toward the edit's designed direction (the edit graded as overreaching), a flip of
    a high one the wrong way. So R⁺ = (1 − p_high)·R and the wrong-way rate p_high·R."""
    rng = np.random.default_rng(seed)
    bases = pd.unique(probes["base_id"])
    high = dict(zip(bases, rng.random(len(bases)) < p_high, strict=True))
    base_grade = {b: (hi if h else lo) for b, h in high.items()}
    p = probes["slot"].map(flip_p).fillna(0.0).to_numpy(dtype=float)
    flip = rng.random(len(probes)) < p
    b_high = probes["base_id"].map(high).to_numpy(dtype=bool)
    e_high = np.where(flip, ~b_high, b_high)
    n_b = len(base_grade)
    return pd.DataFrame({"judge_id": [judge_id] * (n_b + len(probes)),
                         "request_id": list(base_grade) + probes["probe_id"].tolist(),
                         "score": list(base_grade.values()) + np.where(e_high, hi, lo).tolist(),
                         "parse_ok": True, "error": None, "epoch": 0})


def null_judge_grades(probes: pd.DataFrame, *, seed: int = 0, p_move: float = 0.35,
                      judge_id: str = "null") -> pd.DataFrame:
    """A judge with no construct sensitivity on a fine grade scale: every edited text, construct or
    control alike, is graded as its original plus the same noise (moved by a uniform amount in
    [-2, 2] with probability ``p_move``). At every threshold its construct flip rate equals its
    control flip rate, so R − (1 − S) = 0 whatever τ is chosen."""
    rng = np.random.default_rng(seed)
    bases = pd.unique(probes["base_id"])
    g0 = dict(zip(bases, rng.uniform(1.0, 9.0, len(bases)), strict=True))
    move = rng.random(len(probes)) < p_move
    ge = probes["base_id"].map(g0).to_numpy(dtype=float) + np.where(move, rng.uniform(-2, 2, len(probes)), 0.0)
    return pd.concat([grades_frame(judge_id, g0),
                      grades_frame(judge_id, dict(zip(probes["probe_id"], np.round(ge, 6), strict=True)))],
                     ignore_index=True)


def grades_frame(judge_id: str, grades: Mapping[str, float]) -> pd.DataFrame:
    """Verdict rows from an explicit request_id → score mapping."""
    if not grades:
        return pd.DataFrame()
    return pd.DataFrame({"judge_id": [judge_id] * len(grades), "request_id": list(grades),
                         "score": [float(v) for v in grades.values()], "parse_ok": True, "error": None,
                         "epoch": 0})


def planted(control: float | Mapping[str, float], scope: float | Mapping[str, float],
            strength: float | Mapping[str, float]) -> dict[str, float]:
    """Per-slot flip probabilities from per-axis values (a number, or slot → value)."""
    out = {}
    for s in CONTROL_SLOTS + CONSTRUCT_SLOTS:
        v = {"control": control, "scope": scope, "strength": strength}[axis_of(s)]
        out[s] = float(v[s]) if isinstance(v, Mapping) else float(v)
    return out


def truth(flip_p: Mapping[str, float]) -> dict[str, float]:
    """The estimands of Eq. (6) when every base item carries every slot once."""
    sc = [flip_p[s] for s in CONSTRUCT_SLOTS if axis_of(s) == "scope"]
    st = [flip_p[s] for s in CONSTRUCT_SLOTS if axis_of(s) == "strength"]
    return {"S": 1 - float(np.mean([flip_p[s] for s in CONTROL_SLOTS])),
            "R": float(np.mean([flip_p[s] for s in CONSTRUCT_SLOTS])),
            "R_scope": float(np.mean(sc)), "R_strength": float(np.mean(st)),
            "gap": float(np.mean(sc) - np.mean(st))}


def binomial_band(n: int, p: float, tail: float = 0.0005) -> tuple[float, float]:
    """Rejection shares a correct level-p test stays within with probability 1 − 2·tail over n data sets."""
    from scipy.stats import binom

    return binom.ppf(tail, n, p) / n, binom.ppf(1 - tail, n, p) / n

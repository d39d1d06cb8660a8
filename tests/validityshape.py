"""A validity run's ``result.json`` as a test plants it: every key a validity run writes (the card, the checklist
and the gate read it through ``analyses.validity.schema.ValidityFile``), its numbers consistent with each other, so
that a test states only the numbers it is about.

``judge_block(S, S_ci, R, R_ci)`` derives the rest of a judge's block from its matched point: the control flip rate
is 1 − S (its interval reflected), both axes move as R does (the scope − strength gap 0, no permutation null run),
and the quantities a run without cross-fitting or labelled directions leaves undefined (R_excess, R⁺, the wrong-way
rate) are None unless given. ``validity_result(judges)`` wraps the blocks in the run's own keys: a bootstrap over
base items at 95%, the probes every judge graded (construct and control edits), τ reselected in each resample.
"""

from __future__ import annotations

from typing import Any


def judge_block(S: float | None, S_ci: list[float] | None, R: float | None, R_ci: list[float] | None, *,
                tau: float | None = 5.0, interpretable: bool = True, n_construct: int = 336, n_control: int = 240,
                **kw: Any) -> dict[str, Any]:
    """One judge's block at its matched point (``kw`` sets or adds any other key)."""
    flip = None if S is None else round(1 - S, 6)
    flip_ci = None if S_ci is None else [round(1 - S_ci[1], 6), round(1 - S_ci[0], 6)]
    half = None if R_ci is None else round((R_ci[1] - R_ci[0]) / 2, 6)
    block = {"S": S, "S_ci": S_ci, "R": R, "R_ci": R_ci, "R_scope": R, "R_scope_ci": R_ci, "R_strength": R,
             "R_strength_ci": R_ci, "gap": None if R is None else 0.0,
             "gap_ci": None if half is None else [-half, half],
             "gap_perm_p": None, "control_flip_rate": flip, "control_flip_rate_ci": flip_ci, "R_excess": None,
             "R_excess_ci": None, "R_plus": None, "R_plus_ci": None, "wrong_way_rate": None, "wrong_way_rate_ci": None,
             "tau": tau, "interpretable": interpretable, "single_point": False, "n_construct": n_construct,
             "n_control": n_control, "notes": []}
    return {**block, **kw}


def validity_result(judges: dict[str, dict[str, Any]], *, s_floor: float = 0.9, bar: float = 0.75, n_base: int = 48,
                    direction_source: str | None = None, **kw: Any) -> dict[str, Any]:
    """A validity run's object holding ``judges`` (``kw`` sets or adds any other top-level key)."""
    first = next(iter(judges.values()), {})
    n_probes = int(first.get("n_construct") or 0) + int(first.get("n_control") or 0)
    out = {"s_floor": s_floor, "bar": bar, "n_base": n_base, "n_probes": n_probes,
           "direction_source": direction_source, "level": 0.95, "n_boot": 1000, "n_perm": 0, "seed": 0,
           "bootstrap_unit": "base_id", "tau_in_bootstrap": "reselected", "judges": judges, "slots": {}, "axes": {},
           "notes": []}
    return {**out, **kw}

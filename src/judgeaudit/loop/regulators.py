"""The regulators (arms) of the loop, each a named, frozen combination of factors, and the pure
functions that turn their judges' votes into one report.

Factors: ``channel`` (none = the no-report control; free text; typed constraint ids; a 1–5 score;
certificate = the checker's own list of failed units), ``world`` (none = blind, half, full,
hidden = the user request rewritten without its constraints), ``goal`` wording, ``throttle`` (act
on the k most severe complaints; None: all), ``agree`` (a free-text and a typed-id judge must
agree), ``judge`` (the primary judge or the second family's), ``votes`` (None: the run's
``--votes``; ``informed_once`` samples once). Registry names are the paper's arms;
``NAME+MOD+MOD`` composes modifiers (``MODIFIERS``) onto a registered arm, e.g. ``blind+top1``,
``informed+second``, ``informed+half``.

"A regulator that reports no defect takes no action" (§8): ``acted`` is False for an empty report
(and for a 1–5 score of 5, a score channel's "no defect").
"""

from __future__ import annotations

import hashlib
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.loop.keywords import instruction_of, map_complaint

Channel = Literal["none", "free", "typed", "score", "certificate"]
WorldView = Literal["none", "half", "full", "hidden"]


@dataclass(frozen=True)
class Regulator:
    name: str
    channel: Channel
    world: WorldView = "full"
    goal: str = "default"
    throttle: int | None = None
    agree: bool = False
    judge: Literal["primary", "second"] = "primary"
    votes: int | None = None
    description: str = ""

    @property
    def calls_judge(self) -> bool:
        return self.channel in ("free", "typed", "score")


REGISTRY: dict[str, Regulator] = {r.name: r for r in (
    Regulator("control", "none", "none", description="no report: the responder is told only to revise (R0)"),
    Regulator("blind", "free", "none", description="free-text report on the output alone (R1)"),
    Regulator("informed", "free", "full", description="free-text report on world + output (R2)"),
    Regulator("typed", "typed", "full", description="informed, report restricted to typed constraint ids (R3)"),
    Regulator("certificate", "certificate", "full",
              description="the checker's own list of failed units; on one-answer tasks only 'the answer is "
                          "wrong' (R4, oracle)"),
    Regulator("informed_once", "free", "full", votes=1, description="informed free text, one vote (sampled once)"),
    Regulator("two_agree", "free", "full", agree=True,
              description="informed free-text and typed-id judges must agree on a defect"),
    Regulator("score", "score", "full", description="a bare 1–5 score, median of the votes (C0)"),
    Regulator("world_none", "free", "none", description="world-fraction sweep: none (V0)"),
    Regulator("world_half", "free", "half", description="world-fraction sweep: a random half (V_half)"),
    Regulator("world_full", "free", "full", description="world-fraction sweep: all (V_full)"),
    Regulator("throttle_1", "free", "none", throttle=1, description="blind, act on the most severe complaint (G1)"),
    Regulator("throttle_3", "free", "none", throttle=3, description="blind, act on the top three (G3)"),
    Regulator("throttle_all", "free", "none", description="blind, act on all complaints (Gall)"),
    Regulator("goal_good", "free", "full", goal="good", description="informed, 'is it good' (E0)"),
    Regulator("goal_constraints", "free", "full", goal="constraints",
              description="informed, 'does it satisfy every constraint' (E1)"),
    Regulator("hidden", "free", "hidden",
              description="the user request rewritten to drop every format, length, case, keyword and "
                          "structure requirement (constraints hidden)"),
    Regulator("second_blind", "free", "none", judge="second", description="blind, second judge family"),
    Regulator("second_informed", "free", "full", judge="second", description="informed, second judge family"),
)}

MODIFIERS: dict[str, dict[str, object]] = {
    "top1": {"throttle": 1}, "top3": {"throttle": 3}, "all": {"throttle": None},
    "none": {"world": "none"}, "half": {"world": "half"}, "full": {"world": "full"}, "hidden": {"world": "hidden"},
    "good": {"goal": "good"}, "constraints": {"goal": "constraints"}, "default": {"goal": "default"},
    "second": {"judge": "second"}, "agree": {"agree": True}, "once": {"votes": 1},
    "free": {"channel": "free"}, "typed": {"channel": "typed"}, "score": {"channel": "score"},
}


def get_regulator(name: str) -> Regulator:
    """A registered arm, or ``BASE+MOD+…`` composed from one (``InputError`` naming the option)."""
    base, *mods = name.split("+")
    if base not in REGISTRY:
        raise InputError(f"unknown regulator {base!r} (known: {', '.join(REGISTRY)})", field="--regulator")
    r = REGISTRY[base]
    for m in mods:
        if m not in MODIFIERS:
            raise InputError(f"unknown regulator modifier {m!r} in {name!r} (known: {', '.join(MODIFIERS)})",
                             field="--regulator")
        r = replace(r, **MODIFIERS[m])
    if mods and not r.calls_judge:
        raise InputError(f"{name!r}: the {base} arm calls no judge, so it takes no modifier", field="--regulator")
    if r.agree and r.channel != "free":
        raise InputError(f"{name!r}: two judges agree on a free-text report only", field="--regulator")
    return replace(r, name=name)


# --- the world an arm shows ---------------------------------------------------------------------------------

_SENT = re.compile(r"(?<=[.!?])\s*(?=[A-Z0-9\"'])")


def _seeded_half(n: int, key: str) -> list[int]:
    """A seeded random half of ``range(n)``, in order: ``max(1, ⌊n/2⌋)`` indices drawn without
    replacement by numpy's generator seeded by the SHA-256 of ``key`` (a half world is never empty;
    empty is V0). Its realised share is reported (``half_share``): above 1/2, since a one-constraint
    response shows its constraint (the paper: "63% of the constraints as realised"; the rounding is
    judgeaudit's, the paper does not state it)."""
    if n == 0:
        return []
    rng = np.random.default_rng(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    return sorted(int(i) for i in rng.choice(n, size=max(1, n // 2), replace=False))


def _half_parts(task: str, world: str, unit_text: dict[str, str]) -> list[str]:
    """What V_half draws from: IFEval's constraints (their descriptions), else the world's sentences."""
    if task == "ifeval":
        return list(unit_text.values())
    return [s for s in _SENT.split(world) if s.strip()]


def half_world(task: str, item_id: str, world: str, unit_text: dict[str, str]) -> str:
    """V_half: IFEval shows a random half of the constraints, listed (the paper's "different
    representation"); GSM8K and HaluEval a random half of the world's sentences."""
    parts = _half_parts(task, world, unit_text)
    shown = [parts[i] for i in _seeded_half(len(parts), item_id)]
    return "Constraints:\n" + "\n".join(f"- {p}" for p in shown) if task == "ifeval" else " ".join(shown)


def half_share(task: str, items: Sequence[Any]) -> dict[str, float | int]:
    """The realised share of V_half over ``items`` (``LoopItem``s): constraints (IFEval) or world
    sentences shown, of all, pooled over the items."""
    n = [len(_half_parts(task, it.world, it.unit_text)) for it in items]
    k = [len(_seeded_half(m, it.item_id)) for m, it in zip(n, items, strict=True)]
    return {"shown": sum(k), "of": sum(n), "share": sum(k) / sum(n) if sum(n) else float("nan")}


# --- pooling votes into a report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Complaint:
    text: str
    severity: int
    units: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    """What a regulator tells the responder about one output (``acted``: whether it takes action)."""

    acted: bool
    complaints: tuple[Complaint, ...] = ()
    feedback: tuple[str, ...] | None = None
    score: float | None = None
    n_votes_parsed: int = 0


def typed_ids(units: tuple[str, ...]) -> tuple[str, ...]:
    """The ids a typed report may use: IFEval's 25 instruction types; ``answer_wrong`` elsewhere."""
    from judgeaudit.checkers.ifeval import INSTRUCTIONS

    return tuple(INSTRUCTIONS) if units != ("answer",) else ("answer_wrong",)


def units_of_ids(ids: list[str], units: tuple[str, ...]) -> tuple[str, ...]:
    if units == ("answer",):
        return units if ids else ()
    return tuple(u for u in units if instruction_of(u) in ids)


def pool_free(votes: list[list[tuple[str, int]] | None], units: tuple[str, ...]) -> list[Complaint]:
    """Union of the complaints of every vote that parsed (§3.4: "a defect raised in any vote
    counts"), duplicates (same text) once, each mapped to units by the keyword table."""
    seen: dict[str, Complaint] = {}
    for v in votes:
        for text, sev in v or []:
            k = " ".join(text.lower().split())
            if k not in seen:
                seen[k] = Complaint(text, sev, map_complaint(text, units))
    return list(seen.values())


def pool_typed(votes: list[list[str] | None]) -> list[str]:
    """Majority of the votes that parsed (§3.4): an id reported by more than half of them."""
    parsed = [v for v in votes if v is not None]
    if not parsed:
        return []
    counts: dict[str, int] = {}
    for v in parsed:
        for i in v:
            counts[i] = counts.get(i, 0) + 1
    return [i for i, c in counts.items() if 2 * c > len(parsed)]


def pool_score(votes: list[float | None]) -> float | None:
    """Median of the votes that parsed (§3.4)."""
    parsed = [v for v in votes if v is not None]
    return float(statistics.median(parsed)) if parsed else None


def throttle(complaints: list[Complaint], k: int | None) -> list[Complaint]:
    """The ``k`` most severe complaints (ties keep the judge's order); all when ``k`` is None."""
    if k is None:
        return complaints
    return sorted(complaints, key=lambda c: -c.severity)[:k]


def agree(free: list[Complaint], typed_units: tuple[str, ...], units: tuple[str, ...]) -> list[Complaint]:
    """Complaints of the free-text judge that name a unit the typed judge also reported."""
    if units == ("answer",):
        return free if typed_units else []
    keep = set(typed_units)
    return [replace(c, units=tuple(u for u in c.units if u in keep)) for c in free if keep & set(c.units)]


def certificate_report(failed: list[str], unit_text: dict[str, str], units: tuple[str, ...]) -> Report:
    """The oracle: the checker's failed units (one-answer tasks: only that the answer is wrong)."""
    if not failed:
        return Report(False)
    if units == ("answer",):
        return Report(True, (Complaint("The answer is wrong.", 3, ("answer",)),), ("The answer is wrong.",))
    cs = tuple(Complaint(f"The response does not satisfy the constraint {unit_text[u]}.", 3, (u,)) for u in failed)
    return Report(True, cs, tuple(c.text for c in cs))


def complaints_report(complaints: list[Complaint], n_parsed: int) -> Report:
    return Report(bool(complaints), tuple(complaints), tuple(c.text for c in complaints) if complaints else None,
                  n_votes_parsed=n_parsed)


def score_report(score: float | None, n_parsed: int, units: tuple[str, ...] = ()) -> Report:
    """A score of 5 (or none parsed) reports no defect; below 5 the responder is told the score. A
    score points at no constraint, so it flags every unit of the response (its precision: whether any
    unit fails; its false alarms: every satisfied unit of a response it scored below 5)."""
    if score is None or score >= 5:
        return Report(False, score=score, n_votes_parsed=n_parsed)
    return Report(True, (Complaint(f"score {score:g}/5", 1, units),),
                  (f"A reviewer scored your response {score:g} out of 5.",), score, n_parsed)

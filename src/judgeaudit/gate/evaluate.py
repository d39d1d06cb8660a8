"""Judging a policy's bars on a card: PASS, FAIL or BLIND.

Each bar is judged on its quantity's **interval**, with the ledger's comparison at the bar
(``judgeaudit.ledger.model.Condition.holds``, slack ``BAR_TOL``):

* **PASS** — both ends of the interval satisfy the bar: the interval clears it;
* **FAIL** — neither end does (for ``between``: the interval lies wholly outside the range): the
  interval is on the wrong side;
* **BLIND** — the runs could not have detected a failure: the interval straddles the bar (too wide
  for it), the quantity has no interval, its section or arm is missing or unmeasured, it has fewer
  units than the bar's ``min_units`` (or records no unit count while one is required), or the bar's
  operating point (``at``) does not hold at its point estimate.

A quantity that covers several label sets (``vp.a_imp``) is judged on each; the bar takes the worst
outcome (FAIL over BLIND over PASS). A difference ``A - B`` is judged on the interval
``[lo_A − hi_B, hi_A − lo_B]`` — judgeaudit's own rule: it covers the difference whenever both
intervals cover their quantities, and is conservative (wider than a paired interval would be). The
policy's outcome is the worst of its bars'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgeaudit.gate.policy import Bar, Policy
from judgeaudit.gate.quantities import Reading, read

OUTCOMES = ("PASS", "FAIL", "BLIND")
EXIT_CODES = {"PASS": 0, "FAIL": 1, "BLIND": 2}
_RANK = {"PASS": 0, "BLIND": 1, "FAIL": 2}


@dataclass(frozen=True)
class Check:
    """One reading of a bar: its outcome and why."""

    label: str
    outcome: str
    why: str
    value: float | None = None
    ci: tuple[float, float] | None = None
    n: int | None = None


@dataclass(frozen=True)
class BarResult:
    bar: Bar
    outcome: str
    checks: tuple[Check, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.bar.name, "bar": self.bar.text, "line": self.bar.line, "outcome": self.outcome,
                "checks": [{"quantity": c.label, "outcome": c.outcome, "why": c.why, "value": c.value,
                            "ci": list(c.ci) if c.ci else None, "n": c.n} for c in self.checks]}


@dataclass(frozen=True)
class GateResult:
    outcome: str
    bars: tuple[BarResult, ...]
    judge: str | None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "exit_code": self.exit_code, "judge": self.judge,
                "bars": [b.to_dict() for b in self.bars]}


def worst(outcomes: list[str]) -> str:
    return max(outcomes, key=_RANK.__getitem__) if outcomes else "BLIND"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _difference(a: Reading, b: Reading) -> Reading:
    label = f"{a.label} - {b.label}"
    if a.missing or b.missing:
        return Reading(label, missing=a.missing or b.missing)
    ci = None if a.ci is None or b.ci is None else (a.ci[0] - b.ci[1], a.ci[1] - b.ci[0])
    n = None if a.n is None or b.n is None else min(a.n, b.n)
    return Reading(label, a.value - b.value, ci, n)


def _readings(card: dict[str, Any], terms: tuple[str, ...]) -> list[Reading]:
    first = read(card, terms[0])
    if len(terms) == 1:
        return first
    second = read(card, terms[1])
    if len(first) != 1 or len(second) != 1:
        return [Reading(" - ".join(terms), missing="a difference needs one reading on each side (name one label "
                                                   "set: vp.<set>.<quantity>)")]
    return [_difference(first[0], second[0])]


def judge_interval(bar: Bar, r: Reading) -> Check:
    """The outcome of one reading against ``bar`` (see the module)."""
    if r.missing:
        return Check(r.label, "BLIND", r.missing)
    if r.value is None:
        return Check(r.label, "BLIND", "no value")
    if r.ci is None:
        return Check(r.label, "BLIND", f"{_fmt(r.value)} has no interval: a point estimate cannot show the bar is "
                                       "cleared", r.value)
    if bar.min_units is not None and (r.n is None or r.n < bar.min_units):
        got = "no unit count recorded" if r.n is None else f"{r.n} units"
        return Check(r.label, "BLIND", f"{got}, fewer than the {bar.min_units} the bar needs", r.value, r.ci, r.n)
    c = bar.condition
    lo, hi = r.ci
    shown = f"{_fmt(r.value)} [{_fmt(lo)}, {_fmt(hi)}]"
    if c.comparator == "between":
        a, b = c.value
        inside = c.holds(lo) and c.holds(hi)
        outside = hi < a or lo > b
    else:
        inside = c.holds(lo) and c.holds(hi)
        outside = not c.holds(lo) and not c.holds(hi)
    if inside:
        return Check(r.label, "PASS", f"{shown}: the interval clears {c.bar}", r.value, r.ci, r.n)
    if outside:
        return Check(r.label, "FAIL", f"{shown}: the interval is on the wrong side of {c.bar}", r.value, r.ci, r.n)
    return Check(r.label, "BLIND", f"{shown}: the interval straddles {c.bar} (too wide to decide)", r.value, r.ci,
                 r.n)


def _operating_point(card: dict[str, Any], at: Bar) -> str | None:
    """Why the operating point ``at`` does not hold (None: it holds at its point estimate)."""
    rs = _readings(card, at.terms)
    if len(rs) != 1:
        return f"operating point {at.text}: it names several readings"
    r = rs[0]
    if r.missing or r.value is None:
        return f"operating point {at.text}: {r.missing or 'no value'}"
    if not at.condition.holds(r.value):
        return (f"read at {at.quantity} = {_fmt(r.value)}, not at {at.text}: the runs did not measure the bar's "
                "quantity at that operating point")
    return None


def evaluate_bar(card: dict[str, Any], bar: Bar) -> BarResult:
    if bar.at is not None and (why := _operating_point(card, bar.at)) is not None:
        return BarResult(bar, "BLIND", (Check(bar.quantity, "BLIND", why),))
    checks = tuple(judge_interval(bar, r) for r in _readings(card, bar.terms))
    return BarResult(bar, worst([c.outcome for c in checks]), checks)


def evaluate(policy: Policy, card: dict[str, Any]) -> GateResult:
    """Every bar of ``policy`` on ``card``; the gate's outcome is the worst of the bars'."""
    bars = tuple(evaluate_bar(card, b) for b in policy.bars)
    return GateResult(worst([b.outcome for b in bars]), bars, card.get("judge"))

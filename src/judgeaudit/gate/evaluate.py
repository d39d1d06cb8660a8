"""Judging a policy's bars on a card: PASS, FAIL or BLIND.

Each bar is judged on its quantity's **interval**, with the ledger's comparison at the bar
(``judgeaudit.ledger.model.Condition.holds``, slack ``BAR_TOL``):

* **PASS** — both ends of the interval satisfy the bar: the interval clears it;
* **FAIL** — neither end does (for ``between``: the interval lies wholly outside the range): the
  interval is on the wrong side;
* **BLIND** — the runs could not have detected a failure: the interval straddles the bar (too wide
  for it), the quantity has no interval, its section or arm is missing or unmeasured, it has fewer
  units than the bar's ``min_units`` (or records no unit count while one is required), the bar's
  operating point (``at``) does not hold at its point estimate, or the bar is implied by the S floor
  the run chose its operating point under (``implied_by_floor``: ``control_flip_rate <= 0.10`` or
  ``S >= 0.90`` on a run with floor 0.90, whose τ is re-selected in every resample subject to
  S ≥ 0.90 where one reaches it, so the interval's end crosses the bar only when too many resamples
  find no such τ: the bar does not measure the judge at its operating point).

A bar's ``min_units`` counts the units the quantity's interval resamples, as the run recorded them
(base items for the validity profile, the source items holding a defective answer for a world arm's
recall and a clean one for its specificity); the report names the unit.

A quantity that covers several label sets (``vp.a_imp``) is judged on each; the bar takes the worst
outcome (FAIL over BLIND over PASS). A difference ``A - B`` is judged on the run's own paired
interval where the run wrote one (``quantities.read_paired``: a world run's gain of one arm over
another, both arms read on one resample of source items); otherwise on the interval
``[lo_A − hi_B, hi_A − lo_B]``, which covers the difference whenever both intervals cover their
quantities, and is conservative (wider than a paired interval, so it may stay BLIND where a paired
interval decides). The policy's outcome is the worst of its bars'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgeaudit.card.schema import CardFile
from judgeaudit.gate.policy import Bar, Policy
from judgeaudit.ledger.model import BAR_TOL
from judgeaudit.gate.quantities import Reading, read, read_paired

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
    """The unpaired bound of ``a - b`` (see the module); its units are the fewer of the two sides'."""
    label = f"{a.label} - {b.label}"
    if a.missing or b.missing or a.value is None or b.value is None:
        return Reading(label, missing=a.missing or b.missing or "no value")
    ci = None if a.ci is None or b.ci is None else (a.ci[0] - b.ci[1], a.ci[1] - b.ci[0])
    n = None if a.n is None or b.n is None else min(a.n, b.n)
    unit = a.unit if a.unit == b.unit else None
    return Reading(label, a.value - b.value, ci, n, unit=unit, paired=False)


def _readings(card: CardFile, terms: tuple[str, ...]) -> list[Reading]:
    first = read(card, terms[0])
    if len(terms) == 1:
        return first
    second = read(card, terms[1])
    if len(first) != 1 or len(second) != 1:
        return [Reading(" - ".join(terms), missing="a difference needs one reading on each side (name one label "
                                                   "set: vp.<set>.<quantity>)")]
    if first[0].missing or second[0].missing:
        return [_difference(first[0], second[0])]
    paired = read_paired(card, terms[0], terms[1])
    return [paired if paired is not None else _difference(first[0], second[0])]


def judge_interval(bar: Bar, r: Reading) -> Check:
    """The outcome of one reading against ``bar`` (see the module)."""
    if r.missing:
        return Check(r.label, "BLIND", r.missing)
    if r.value is None:
        return Check(r.label, "BLIND", "no value")
    if r.ci is None:
        return Check(r.label, "BLIND", f"{_fmt(r.value)} has no interval: a point estimate cannot show the bar is "
                                       "cleared", r.value)
    units = f"{r.unit} resampled" if r.unit else "units"
    if bar.min_units is not None and (r.n is None or r.n < bar.min_units):
        got = "no count of the units its interval resamples recorded" if r.n is None else f"{r.n} {units}"
        return Check(r.label, "BLIND", f"{got}, fewer than the {bar.min_units} the bar needs", r.value, r.ci, r.n)
    c = bar.condition
    lo, hi = r.ci
    how = {True: ", paired interval", False: ", unpaired bound"}.get(r.paired, "")
    shown = f"{_fmt(r.value)} [{_fmt(lo)}, {_fmt(hi)}]" + (f" ({r.n} {units}{how})" if r.n is not None else
                                                           f" ({how[2:]})" if how else "")
    if c.comparator == "between":
        a, b = c.value
        inside = c.holds(lo) and c.holds(hi)
        outside = hi < a - BAR_TOL or lo > b + BAR_TOL
    else:
        inside = c.holds(lo) and c.holds(hi)
        outside = not c.holds(lo) and not c.holds(hi)
    if inside:
        return Check(r.label, "PASS", f"{shown}: the interval clears {c.bar}", r.value, r.ci, r.n)
    if outside:
        return Check(r.label, "FAIL", f"{shown}: the interval is on the wrong side of {c.bar}", r.value, r.ci, r.n)
    return Check(r.label, "BLIND", f"{shown}: the interval straddles {c.bar} (too wide to decide)", r.value, r.ci,
                 r.n)


def _operating_point(card: CardFile, at: Bar) -> str | None:
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


_FLOORED = {"S": 1.0, "control_flip_rate": -1.0}
"""The validity quantities the S floor bounds: S ≥ floor, control_flip_rate = 1 − S ≤ 1 − floor."""


def implied_by_floor(card: CardFile | dict[str, Any], bar: Bar) -> str | None:
    """Why ``bar`` cannot fail on ``card`` (None: it can): a bar on S or the control flip rate that the
    S floor already implies, on a run that read them at a τ chosen subject to S ≥ the floor in every
    resample (the run's ``tau_in_bootstrap`` not ``fixed``) and found such a τ (``interpretable``)."""
    sec = CardFile.of(card).sections.validity
    key = bar.terms[0].removeprefix("validity.") if len(bar.terms) == 1 else None
    if key not in _FLOORED or not sec.measured or sec.interpretable is not True or sec.s_floor is None or \
            sec.tau_in_bootstrap == "fixed":
        return None
    floor = sec.s_floor
    c = bar.condition
    sign = _FLOORED[key]
    if c.comparator not in ((">=", ">") if sign > 0 else ("<=", "<")):
        return None
    edge = floor if sign > 0 else 1.0 - floor
    if sign * (c.value - edge) > BAR_TOL:              # a stricter bar than the floor: it can fail
        return None
    end, side = ("lower", "below") if sign > 0 else ("upper", "above")
    return (f"{bar.text} is implied by the run's S floor {floor:g}: τ is chosen subject to S ≥ {floor:g} in every "
            f"resample that has such a τ, so the interval's {end} end goes {side} {edge:.4g} only when more than "
            "a tail of the resamples have none; the bar does not measure the judge at the chosen τ (a stricter bar "
            "can)")


def evaluate_bar(card: CardFile | dict[str, Any], bar: Bar) -> BarResult:
    card = CardFile.of(card)
    if bar.at is not None and (why := _operating_point(card, bar.at)) is not None:
        return BarResult(bar, "BLIND", (Check(bar.quantity, "BLIND", why),))
    if (why := implied_by_floor(card, bar)) is not None:
        return BarResult(bar, "BLIND", (Check(bar.quantity, "BLIND", why),))
    checks = tuple(judge_interval(bar, r) for r in _readings(card, bar.terms))
    return BarResult(bar, worst([c.outcome for c in checks]), checks)


def evaluate(policy: Policy, card: CardFile | dict[str, Any]) -> GateResult:
    """Every bar of ``policy`` on ``card`` (a ``card.json`` object is read as a ``CardFile``: a key not as a card
    writes it is an ``InputError`` naming it); the gate's outcome is the worst of the bars'."""
    card = CardFile.of(card)
    bars = tuple(evaluate_bar(card, b) for b in policy.bars)
    return GateResult(worst([b.outcome for b in bars]), bars, card.judge)

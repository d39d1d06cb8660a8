"""The ledger's records (blind-spot.txt §3.8, Appendix A).

A **prediction** has an id (``P5``) and one or more **clauses**. A clause is the counting unit: a
prediction written with lettered parts counts each part as one unit, and a FAILS condition written
for the whole prediction applies to each part that has none of its own (§3.8).

A clause reads one number from a run's ``result.json``, named by its **metric path**:

* dotted: ``judges.reference:length.gap`` — split on ``.``; a list index is a decimal number;
* JSON pointer (RFC 6901): ``/judges/api:openai~1gpt-4.1/gap`` — for keys that contain a dot or a
  slash (``~1`` is ``/``, ``~0`` is ``~``).

The interval of a metric is its ``ci`` sibling: ``<key>_ci`` beside ``<key>`` (``gap`` →
``gap_ci``), or ``ci`` beside a ``value`` key, or the ``value``/``ci`` pair of a metric that is an
object (``…/overall`` → ``overall.value``, ``overall.ci``).

A metric's **p-value** is its ``p`` sibling: ``<key>_p`` beside ``<key>`` (``rho`` → ``rho_p``), or ``p``
beside a ``value`` key; its sidedness is the ``_alternative`` sibling of the p (``rho_p_alternative``,
``p_alternative``), in scipy's words: ``two-sided`` (the default when the run does not say),
``greater`` or ``less`` (the alternative hypothesis the p tests). A clause may name its p instead
(``p: judges.j.gap_perm_p``) and its sidedness (``p_alternative``). How a p sets a unit's direction is
in ``judgeaudit.ledger.score``.

The **bar** is kept as written (``"≥ 0.15"``, ``"within [0.78, 0.91]"``); its comparator and value
are parsed from it, or given explicitly beside a bar written in prose. Comparators: ``<``, ``<=``,
``>``, ``>=``, ``==`` (to 1e-9), ``between`` (inclusive ``[lo, hi]``), ``sign`` (value ``+1`` or
``-1``: the point estimate has that sign).

The **predicted sign** of a clause (used for *reversed* and for the direction) is its ``sign``
field (``+``, ``-``, or ``none`` for a level rather than an effect). Without it, a clause states an
effect only when its bar says so: a ``sign`` bar; ``>``/``>=`` a bar of 0 or one written with an
explicit plus (``">= +0.15"``, as Table 6 writes its gains); ``<``/``<=`` a bar of 0 or below
(``"<= -0.15"``). A clause whose metric carries a p (a test of zero) states an effect in the direction its
bar points (``>``/``>=`` +, ``<``/``<=`` −) unless its ``sign`` is ``none``. Any other bar (``"S >= 0.90"``, ``"accuracy >= 0.75"``, ``between``, ``==``) states
a **level**, which has no direction of effect: it takes the verdict's default wording of Table 6.

A comparison at the bar itself holds within ``BAR_TOL`` (1e-12, the tolerance of the validity
floor ``S ≥ s_floor``), so an exact hit stored as ``0.49999999999999994`` meets ``>= 0.5``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judgeaudit.errors import InputError

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
Comparator = Literal["<", "<=", ">", ">=", "==", "between", "sign"]
COMPARATORS: tuple[str, ...] = ("<", "<=", ">", ">=", "==", "between", "sign")

BAR_TOL = 1e-12
"""Slack of a comparison at its bar: the validity floor's (``judgeaudit.analyses.validity``)."""
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SYMBOLS = {"≥": ">=", "≤": "<=", "−": "-", "⩾": ">=", "⩽": "<=", "＝": "="}


def _normalise(text: str) -> str:
    for a, b in _SYMBOLS.items():
        text = text.replace(a, b)
    return text.strip()


def parse_bar(text: str) -> tuple[str, float | tuple[float, float]]:
    """``(comparator, value)`` of a bar written as ``"≥ 0.15"``, ``"< 0.6"``, ``"== 1"``,
    ``"between 0.78 and 0.91"``, ``"within [0.78, 0.91]"``, ``"sign +"`` / ``"sign negative"``.
    Anything else raises ``InputError`` (give ``comparator`` and ``value`` beside a prose bar)."""
    t = _normalise(text)
    m = re.fullmatch(rf"(<=|>=|<|>|==|=)\s*({_NUM})", t)
    if m:
        op = "==" if m.group(1) == "=" else m.group(1)
        return op, float(m.group(2))
    m = re.fullmatch(rf"(?:between|within|in)\s*\[?\s*({_NUM})\s*(?:,|and|\s)\s*({_NUM})\s*\]?", t, re.I)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        if lo > hi:
            raise InputError(f"bar {text!r}: the interval's lower end exceeds its upper end", field="bar")
        return "between", (lo, hi)
    m = re.fullmatch(r"sign\s*(\+|-|positive|negative)", t, re.I)
    if m:
        return "sign", 1.0 if m.group(1).lower() in ("+", "positive") else -1.0
    raise InputError(f"bar {text!r} is not one of '< x', '<= x', '> x', '>= x', '== x', "
                     "'between lo and hi', 'sign +|-'; give 'comparator' and 'value' beside it", field="bar")


def _signed_bar(text: str) -> bool:
    """Whether a one-number bar is written with an explicit sign (``">= +0.15"``): an effect."""
    return re.fullmatch(r"(<=|>=|<|>|==|=)\s*[-+](?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", _normalise(text)) is not None


OWN_METRICS = ("R_plus", "wrong_way_rate", "R_excess")
"""Metrics judgeaudit reports that are its own extensions, not quantities of the papers: R⁺ (the
construct flips toward the labelled direction), the wrong-way rate (the flips the other way;
R = R⁺ + wrong-way rate) and R_excess (R − (1 − S))."""


def is_own(metric: str) -> bool:
    """Whether a metric path ends at one of ``OWN_METRICS`` (or its interval)."""
    last = re.split(r"[./]", metric.rstrip("/"))[-1].removesuffix("_ci")
    return last in OWN_METRICS


class Condition(BaseModel):
    """A comparison of one metric against a bar: the body of a clause, or a FAILS condition.

    ``metric`` may be omitted in a FAILS condition (it then reads its clause's metric)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str | None = None
    bar: str = Field(min_length=1)
    comparator: Comparator
    value: float | tuple[float, float]

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("comparator" not in data or "value" not in data) and "bar" in data:
            if data.get("comparator") is not None or data.get("value") is not None:
                raise InputError("give both 'comparator' and 'value', or neither (they are parsed from 'bar')",
                                 field="comparator")
            op, val = parse_bar(str(data["bar"]))
            data = {**data, "comparator": op, "value": val}
        return data

    @model_validator(mode="after")
    def _check(self) -> Condition:
        between = self.comparator == "between"
        if between != isinstance(self.value, tuple):
            raise ValueError(f"comparator {self.comparator!r} needs "
                             f"{'a [lo, hi] pair' if between else 'one number'} as its value")
        if self.comparator == "sign" and self.value not in (1.0, -1.0):
            raise ValueError("a 'sign' bar's value is +1 or -1")
        return self

    def holds(self, x: float) -> bool:
        """Whether the observed ``x`` satisfies the comparison."""
        v = self.value
        match self.comparator:
            case "<":
                return x < v
            case "<=":
                return x <= v + BAR_TOL
            case ">":
                return x > v
            case ">=":
                return x >= v - BAR_TOL
            case "==":
                return math.isclose(x, v, rel_tol=1e-9, abs_tol=BAR_TOL)
            case "between":
                return v[0] - BAR_TOL <= x <= v[1] + BAR_TOL
            case "sign":
                return x * v > 0
        raise AssertionError(self.comparator)  # pragma: no cover


class Clause(Condition):
    """One committed clause: a unit of the ledger. ``run`` (or its prediction's) names the run it
    governs: a ``run_id``, the name of the run's output folder, or an analysis kind (``validity``,
    ``cap``, ``vp``, …, as ``judgeaudit.runinfo`` detects it)."""

    letter: str = ""
    metric: str = Field(min_length=1)
    fails: Condition | None = None
    run: str | None = None
    sign: Literal["+", "-", "none"] | None = None
    p: str | None = Field(default=None, min_length=1)   # metric path of its p-value (default: the p sibling)
    p_alternative: Alternative | None = None             # the sidedness of that p (default: the run's, else two-sided)

    @field_validator("letter")
    @classmethod
    def _letter(cls, v: str) -> str:
        if v and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.-]*", v):
            raise ValueError(f"clause letter {v!r}: letters, digits, space, '_', '.', '-' only")
        return v

    @property
    def predicted_sign(self) -> int:
        """+1, -1, or 0 when the clause states a level rather than a signed effect."""
        if self.sign is not None:
            return {"+": 1, "-": -1, "none": 0}[self.sign]
        if self.comparator == "sign":
            return int(self.value)
        if self.comparator in (">", ">=") and (self.value == 0 or (self.value > 0 and _signed_bar(self.bar))):
            return 1
        if self.comparator in ("<", "<=") and self.value <= 0:
            return -1
        return 0

    def tested_sign(self, has_p: bool) -> int:
        """The predicted sign when the metric carries a p-value (a test of zero): a level bar then
        points the effect's way (``>``/``>=`` +1, ``<``/``<=`` −1) unless ``sign`` is ``none``."""
        s = self.predicted_sign
        if s or not has_p or self.sign == "none":
            return s
        return {">": 1, ">=": 1, "<": -1, "<=": -1}.get(self.comparator, 0)


class Prediction(BaseModel):
    """A numbered prediction: its clauses, an optional FAILS condition for the whole prediction
    (applied to every clause without its own), and a default run for its clauses."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str = ""
    run: str | None = None
    fails: Condition | None = None
    clauses: tuple[Clause, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _letters(self) -> Prediction:
        letters = [c.letter for c in self.clauses]
        if len(set(letters)) != len(letters):
            raise ValueError(f"prediction {self.id}: clause letters repeat ({letters})")
        return self

    def unit_label(self, clause: Clause) -> str:
        """``P5(a)`` for a lettered clause, ``P5`` for the only clause of a prediction."""
        return f"{self.id}({clause.letter})" if clause.letter else self.id

    def units(self) -> list[tuple[str, Clause]]:
        """The counting units: every clause, with the prediction's FAILS and run filled in where the
        clause has none."""
        return [(self.unit_label(c), c.model_copy(update={"fails": c.fails or self.fails, "run": c.run or self.run}))
                for c in self.clauses]


class Commit(BaseModel):
    """One commit entry: the predictions it froze (id → SHA-256 of each), the SHA-256 of the entry
    (over those predictions, the time, the git commit and the previous entry's hash), the UTC time
    and the git commit of the repository the ledger sits in, when there is one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str
    at: str
    git: str | None = None
    parent: str | None = None
    predictions: dict[str, str]


class Ledger(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    predictions: tuple[Prediction, ...] = ()
    commits: tuple[Commit, ...] = ()

    @model_validator(mode="after")
    def _unique(self) -> Ledger:
        ids = [p.id for p in self.predictions]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"prediction ids repeat: {dup}")
        return self

    def prediction(self, pid: str) -> Prediction:
        for p in self.predictions:
            if p.id == pid:
                return p
        raise KeyError(pid)

    def committed_at(self) -> dict[str, Commit]:
        """prediction id → the commit entry that froze it."""
        return {pid: c for c in self.commits for pid in c.predictions}

"""What every checker returns: per-unit pass/fail for one (task item, output)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UnitResult:
    """One checkable unit of an output (an IFEval instruction, a GSM8K or HaluEval answer).

    Attributes:
        unit: the unit's id within its item (``"0:punctuation:no_comma"``, ``"answer"``).
        passed: whether the output satisfies the unit.
        detail: what the checker saw (e.g. the extracted number), for reports; never decides.
    """

    unit: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class CheckResult:
    """The units of one item, in the item's order; ``passed`` when every unit passes."""

    item: str
    units: tuple[UnitResult, ...]

    @property
    def passed(self) -> bool:
        return all(u.passed for u in self.units)

    @property
    def n_passed(self) -> int:
        return sum(u.passed for u in self.units)


@dataclass(frozen=True)
class Fraction:
    """A pass rate with its counts (``value = passed / total``; NaN when total is 0)."""

    passed: int
    total: int

    @property
    def value(self) -> float:
        return self.passed / self.total if self.total else float("nan")

    def to_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "passed": self.passed, "total": self.total}

"""The scale a graded judge answers on: an integer range ``min..max`` or pass/fail.

A grade is stored as a number on the scale. Pass/fail is stored as 1 (pass) and 0 (fail). Which end
is the defect is the scale's ``higher``: ``"worse"`` (judgeaudit's own 1–9 overreach scale: a higher
grade is more overreach) or ``"better"`` (the MT-Bench 1–10 quality rating, Prometheus 1–5, a pass).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator


class Scale(BaseModel):
    """An integer scale ``min..max`` (``pass_fail`` False) or the two-point pass/fail scale."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min: int = 1
    max: int = 9
    pass_fail: bool = False
    higher: Literal["worse", "better"] = "worse"

    @model_validator(mode="after")
    def _check(self) -> Scale:
        if self.pass_fail:
            if (self.min, self.max) != (0, 1):
                raise ValueError("a pass/fail scale is stored as 0 (fail) and 1 (pass): min 0, max 1")
        elif self.max <= self.min:
            raise ValueError(f"scale max ({self.max}) must be above min ({self.min})")
        return self

    @classmethod
    def passfail(cls) -> Scale:
        return cls(min=0, max=1, pass_fail=True, higher="better")

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(range(self.min, self.max + 1))

    @property
    def binary(self) -> bool:
        """Whether the scale has two points (one non-degenerate threshold: one operating point)."""
        return len(self.values) == 2

    def contains(self, value: int) -> bool:
        return self.min <= value <= self.max

    def label(self) -> str:
        return "pass/fail" if self.pass_fail else f"{self.min}-{self.max}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "pass_fail" if self.pass_fail else "integer", "min": self.min, "max": self.max,
                "higher": self.higher, "label": self.label()}


OVERREACH_SCALE = Scale(min=1, max=9, higher="worse")
"""judgeaudit's own graded scale (construct-validity.txt Remark 1: cut by us)."""

"""The scale a graded judge answers on: an integer range ``min..max`` or pass/fail.

A grade is stored as a number on the scale. Pass/fail is stored as 1 (pass) and 0 (fail). Which end
is the defect is the scale's ``higher``: ``"worse"`` (judgeaudit's own 1–9 overreach scale: a higher
grade is more overreach) or ``"better"`` (the MT-Bench 1–10 quality rating, Prometheus 1–5, a pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator


MAX_POINTS = 501
"""The most points a scale may have (0 to 500, or 1 to 501): every point is a threshold that the
analyses estimate and bootstrap, so a wider scale would only exhaust memory."""


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
        elif self.max - self.min + 1 > MAX_POINTS:
            raise ValueError(f"a scale of {self.min} to {self.max} has {self.max - self.min + 1:,} points; a judge's "
                             f"scale has at most {MAX_POINTS} (each point is a threshold the analyses estimate)")
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


def parse_bounds(text: str) -> tuple[float, float]:
    """``"LO,HI"`` as two numbers with LO < HI; ValueError otherwise."""
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        lo = hi = float("nan")
    if not lo < hi:
        raise ValueError(f"scale must be LO,HI with LO < HI, e.g. scale=1,10; got {text!r}")
    return lo, hi


def declared_scale(value: Any, higher: str | None = None) -> Scale:
    """The scale a user declares for a judge of theirs: ``"LO,HI"`` or ``(LO, HI)`` (whole numbers),
    ``"pass_fail"``, a mapping of the fields of ``Scale`` or a ``Scale``. ``higher``: which end is the
    defect, ``"better"`` (the default, as in a judge template: a quality rating) or ``"worse"``.
    ValueError saying what is wrong."""
    if higher is not None and higher not in ("better", "worse"):
        raise ValueError(f"higher must be better or worse, got {higher!r}")
    if isinstance(value, Scale):
        return value if higher is None else value.model_copy(update={"higher": higher})
    if value == "pass_fail":
        return Scale.passfail()
    if isinstance(value, Mapping):
        fields = {**value, **({"higher": higher} if higher else {})}
        try:
            return Scale.model_validate({"higher": "better", **fields})
        except ValidationError as e:
            raise ValueError(f"not a scale ({e.errors()[0]['msg']})") from None
    if isinstance(value, str):
        lo, hi = parse_bounds(value)
    elif isinstance(value, (tuple, list)) and len(value) == 2 and \
            all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        lo, hi = float(value[0]), float(value[1])
        if not lo < hi:
            raise ValueError(f"scale must be (LO, HI) with LO < HI; got {tuple(value)!r}")
    else:
        raise ValueError(f"a scale is LO,HI, (LO, HI), pass_fail or a mapping {{min, max, higher}}; got {value!r}")
    if not (lo.is_integer() and hi.is_integer()):
        raise ValueError(f"a judge's scale runs between whole numbers; got {lo:g},{hi:g}")
    return Scale(min=int(lo), max=int(hi), higher=higher or "better")

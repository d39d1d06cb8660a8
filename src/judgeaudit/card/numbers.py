"""Numbers as a card prints them: each value rounded to what its interval supports, and the
sentences' tests on intervals (a verdict fires only when its interval says so)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def ci_ok(ci: Sequence[float | None] | None) -> bool:
    """``ci`` is an interval: two bounds, neither None nor NaN."""
    return (ci is not None and len(ci) == 2 and all(x is not None for x in ci)
            and not any(math.isnan(float(x)) for x in ci))


def decimals(ci: Sequence[float | None] | None, default: int = 3) -> int:
    """Decimals an interval supports: two significant digits of its width (1 to 4 decimals)."""
    if not ci_ok(ci):
        return default
    w = abs(float(ci[1]) - float(ci[0]))
    if w == 0:
        return default
    return int(min(4, max(1, 1 - math.floor(math.log10(w)))))


def num(x: Any, ci: Sequence[float | None] | None = None, *, sign: bool = False) -> str:
    """``x`` rounded to its interval's resolution ("—" when undefined)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    d = decimals(ci)
    return f"{float(x):+.{d}f}" if sign else f"{float(x):.{d}f}"


def interval(ci: Sequence[float | None] | None, *, sign: bool = False) -> str:
    if not ci_ok(ci):
        return "—"
    d = decimals(ci)
    f = f"{{:{'+' if sign else ''}.{d}f}}"
    return f"[{f.format(float(ci[0]))}, {f.format(float(ci[1]))}]"


def with_ci(x: Any, ci: Sequence[float | None] | None, *, sign: bool = False, digits: int | None = None,
            pct: bool = False) -> str:
    """An estimate with its interval as judgeaudit prints one (a card, a report, the terminal): ``0.31 [0.25,
    0.37]``; ``—`` for no value (None or NaN), the value alone where there is no interval (``ci_ok``). Every
    number to ``digits`` decimals (None: as many as the interval supports, ``decimals``), or with ``pct`` as a
    percentage to one decimal (``31.0% [25.0%, 37.0%]``); ``sign``: each with its sign (a difference)."""
    if x is None or x != x:
        return "—"
    d = 1 if pct else decimals(ci) if digits is None else digits
    form = f"{{:{'+' if sign else ''}.{d}f}}{'%' if pct else ''}"

    def one(v: Any) -> str:
        return form.format(100 * float(v) if pct else float(v))

    return f"{one(x)} [{one(ci[0])}, {one(ci[1])}]" if ci_ok(ci) else one(x)


def p_value(p: Any) -> str:
    return "—" if p is None else f"{float(p):.2g}"


def threshold(t: Any) -> str:
    return "—" if t is None else f"{float(t):.3g}"


def excludes_zero(ci: Sequence[float | None] | None) -> bool:
    return ci_ok(ci) and (float(ci[0]) > 0 or float(ci[1]) < 0)


def above(a_ci: Sequence[float | None] | None, b_ci: Sequence[float | None] | None) -> bool:
    """``a``'s interval lies wholly above ``b``'s (no overlap)."""
    return ci_ok(a_ci) and ci_ok(b_ci) and float(a_ci[0]) > float(b_ci[1])


def below(ci: Sequence[float | None] | None, bound: float) -> bool:
    """The interval lies wholly below ``bound``."""
    return ci_ok(ci) and float(ci[1]) < bound

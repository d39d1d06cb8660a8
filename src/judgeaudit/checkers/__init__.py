"""Checkers: programs outside a judge's loop that decide pass/fail per unit of an output.

Each checker is a pure function from (task item, output) to a :class:`CheckResult` of per-unit
pass/fail (no I/O; readers live beside them). The registry maps a task name to its checker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from judgeaudit.checkers.base import CheckResult, Fraction, UnitResult
from judgeaudit.errors import InputError

__all__ = ["CHECKERS", "CheckResult", "Fraction", "UnitResult", "get_checker"]


def _ifeval(item: Any, output: str, **kw: Any) -> CheckResult:
    from judgeaudit.checkers.ifeval import check_ifeval

    return check_ifeval(item, output, **kw)


def _gsm8k(item: Any, output: str, **kw: Any) -> CheckResult:
    from judgeaudit.checkers.gsm8k import check_gsm8k

    return check_gsm8k(item, output, **kw)


def _halueval_qa(item: Any, output: str, **kw: Any) -> CheckResult:
    from judgeaudit.checkers.halueval_qa import check_halueval_qa

    return check_halueval_qa(item, output, **kw)


CHECKERS: dict[str, Callable[..., CheckResult]] = {
    "ifeval": _ifeval,
    "gsm8k": _gsm8k,
    "halueval_qa": _halueval_qa,
}
"""Task name → checker ``(item, output, **options) -> CheckResult``."""


def get_checker(task: str) -> Callable[..., CheckResult]:
    """The checker of ``task`` (``InputError`` naming the known tasks otherwise)."""
    if task not in CHECKERS:
        raise InputError(f"unknown task {task!r} (known: {', '.join(CHECKERS)})", field="task")
    return CHECKERS[task]

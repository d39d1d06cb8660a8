"""GSM8K: is a solution's final number the answer key? (Cobbe et al. 2021, openai/grade-school-math)

Rules (one unit per item, ``"answer"``):

* **Answer key**: the text after the *last* ``####`` of a reference solution
  (``test.jsonl``'s ``answer``); a reference written in OpenAI's example-solution form, ending in
  a line ``A: <number>``, is read the same way after its last ``A:``.
* **Numbers**: an optional sign (``-`` or ``+``), an optional ``$``, digits with optional
  thousands separators (``1,234``), an optional decimal part (``.50``). They are compared as exact
  decimals after dropping separators, sign ``+`` and ``$``: ``3.0`` equals ``3``, ``$1,234.50``
  equals ``1234.5``; ``-3`` differs from ``3``.
* **A response's final number**: the first number after the last answer marker — a ``####``, or
  a line starting ``A:`` or ``Answer:``, or the phrase ``the answer is`` (case-insensitive) —
  when the response has one; otherwise the last number in the response. Calculator
  annotations ``<<expr=value>>`` are removed first (their values repeat the text that follows).
  A response with no number fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from judgeaudit.checkers.base import CheckResult, UnitResult
from judgeaudit.errors import InputError

_NUMBER = re.compile(r"(?<![\w.])([-+]?)\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d])")
_MARKER = re.compile(r"####|^\s*(?:A|Answer)\s*:|the answer is", flags=re.IGNORECASE | re.MULTILINE)
_CALC = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class GSM8KItem:
    """One GSM8K question with its answer key (an exact decimal)."""

    id: str
    question: str
    answer: Decimal


def parse_number(text: str) -> Decimal:
    """The exact value of one number as written (``"$1,234.50"`` → ``Decimal("1234.50")``);
    ``InputError`` when ``text`` is not a single number."""
    m = _NUMBER.fullmatch(text.strip().rstrip("."))
    if m is None:
        raise InputError(f"not a number: {text!r}", field="answer")
    return _value(m)


def _value(m: re.Match[str]) -> Decimal:
    sign, whole, frac = m.group(1), m.group(2).replace(",", ""), m.group(3) or ""
    try:
        return Decimal(("-" if sign == "-" else "") + whole + frac)
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        raise InputError(f"not a number: {m.group(0)!r}", field="answer") from None


def answer_key(reference: str) -> Decimal:
    """The answer key of a reference solution: the number after its last ``####`` (or, in the
    example-solution form, its last ``A:``)."""
    for marker in ("####", "A:"):
        if marker in reference:
            return parse_number(reference.rsplit(marker, 1)[1])
    raise InputError("reference solution has no '####' answer line", field="answer")


def final_number(response: str) -> Decimal | None:
    """The final number of a response by the module's rule; None when it has none."""
    text = _CALC.sub("", response)
    markers = list(_MARKER.finditer(text))
    if markers:
        after = _NUMBER.search(text, markers[-1].end())
        if after is not None:
            return _value(after)
    numbers = list(_NUMBER.finditer(text))
    return _value(numbers[-1]) if numbers else None


def check_gsm8k(item: GSM8KItem, output: str) -> CheckResult:
    """One unit, ``answer``: whether ``output``'s final number equals the answer key."""
    got = final_number(output)
    passed = got is not None and got == item.answer
    detail = "no number" if got is None else f"{got} vs key {item.answer}"
    return CheckResult(item=item.id, units=(UnitResult("answer", passed, detail),))

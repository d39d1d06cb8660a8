"""GSM8K: is a solution's final number the answer key? (Cobbe et al. 2021, openai/grade-school-math)

Rules (one unit per item, ``"answer"``):

* **Answer key**: the text after the *last* ``####`` of a reference solution
  (``test.jsonl``'s ``answer``); a reference written in OpenAI's example-solution form, ending in
  a line ``A: <number>``, is read the same way after its last ``A:``.
* **Numbers**: an optional sign (``-``, ``+`` or U+2212 ``−``), an optional ``$``, digits with
  optional thousands separators (``1,234``), an optional decimal part (``.50``; the whole part may
  be left out, ``.5``), or a fraction of two integers (``1/2``). They are compared by exact value
  after dropping separators, sign ``+`` and ``$``: ``3.0`` equals ``3``, ``$1,234.50`` equals
  ``1234.5``, ``1/2`` equals ``0.5`` and ``1/3`` equals no finite decimal; ``-3`` and ``−3``
  differ from ``3``. The answer key's own format writes thousands in groups of three after a
  comma and decimals after a point, so a comma group that is not a thousands grouping (``1,50``)
  is an ill-formed number: it is read as neither 150, 1.5 nor its fragments, and a response whose
  final number it is fails (detail ``ill-formed number '1,50'``).
* **A response's final number**: after the last answer marker — a ``####``, or a line starting
  ``A:`` or ``Answer:``, or the phrase ``the answer is`` (case-insensitive) — the last number of
  the statement that follows it (up to the end of its line or sentence, or a comma or semicolon
  followed by a space), so ``the answer is 3 + 12 = 15.`` gives 15 and ``Answer: 8 cookies, since
  2 + 6 = 8 and not 9`` gives 8; when that statement has no number, the first number after the
  marker; with no marker, the last number in the response. Calculator annotations
  ``<<expr=value>>`` are removed first (their values repeat the text that follows). A response
  with no number fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from judgeaudit.checkers.base import CheckResult, UnitResult
from judgeaudit.errors import InputError

_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-+\u2212]?)\$?(?P<whole>\d+(?:,\d+)*)?"
                     r"(?P<frac>(?(whole)(?:\.\d+)?|\.\d+))(?:/(?P<den>\d+))?(?!\d)")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")
_STATEMENT_END = re.compile(r"\n|[.!?](?=\s|$)|[,;](?=\s)")
_LEAD = re.compile(r"[\s:*]*")
_MARKER = re.compile(r"####|^\s*(?:A|Answer)\s*:|the answer is", flags=re.IGNORECASE | re.MULTILINE)
_CALC = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class GSM8KItem:
    """One GSM8K question with its answer key (an exact decimal)."""

    id: str
    question: str
    answer: Decimal


def parse_number(text: str) -> Decimal | Fraction:
    """The exact value of one number as written (``"$1,234.50"`` → ``Decimal("1234.50")``, ``"1/2"`` →
    ``Fraction(1, 2)``); ``InputError`` when ``text`` is not a single well-formed number."""
    m = _NUMBER.fullmatch(text.strip().rstrip("."))
    value = None if m is None else _value(m)
    if value is None:
        raise InputError(f"not a number: {text!r}", field="answer")
    return value


def _value(m: re.Match[str]) -> Decimal | Fraction | None:
    """The match's exact value; None when its comma groups are not a thousands grouping."""
    whole = m.group("whole") or "0"
    if not _THOUSANDS.fullmatch(whole):
        return None
    sign = "-" if m.group("sign") in ("-", "\u2212") else ""
    try:
        value = Decimal(sign + whole.replace(",", "") + m.group("frac"))
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        return None
    if m.group("den") is None:
        return value
    den = int(m.group("den"))
    return Fraction(value) / den if den and not m.group("frac") else None


def answer_key(reference: str) -> Decimal:
    """The answer key of a reference solution: the number after its last ``####`` (or, in the
    example-solution form, its last ``A:``)."""
    for marker in ("####", "A:"):
        if marker in reference:
            return parse_number(reference.rsplit(marker, 1)[1])
    raise InputError("reference solution has no '####' answer line", field="answer")


def _final(response: str) -> re.Match[str] | None:
    """The number token the module's rule picks as a response's final number."""
    text = _CALC.sub("", response)
    markers = list(_MARKER.finditer(text))
    if markers:
        start = _LEAD.match(text, markers[-1].end()).end()
        end = _STATEMENT_END.search(text, start)
        statement = list(_NUMBER.finditer(text, start, end.start() if end else len(text)))
        if statement:
            return statement[-1]
        after = _NUMBER.search(text, markers[-1].end())
        if after is not None:
            return after
    numbers = list(_NUMBER.finditer(text))
    return numbers[-1] if numbers else None


def final_number(response: str) -> Decimal | Fraction | None:
    """The final number of a response by the module's rule; None when it has none or it is ill-formed."""
    m = _final(response)
    return None if m is None else _value(m)


def check_gsm8k(item: GSM8KItem, output: str) -> CheckResult:
    """One unit, ``answer``: whether ``output``'s final number equals the answer key."""
    m = _final(output)
    got = None if m is None else _value(m)
    passed = got is not None and got == item.answer
    if m is None:
        detail = "no number"
    elif got is None:
        detail = f"ill-formed number {m.group(0).strip()!r}"
    else:
        detail = f"{got} vs key {item.answer}"
    return CheckResult(item=item.id, units=(UnitResult("answer", passed, detail),))

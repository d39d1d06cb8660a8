"""A gate policy: a YAML file of bars on card quantities.

    judge: api:openai/gpt-4.1-mini     # optional: the judge whose card ``--from`` builds
    min_units: 30                       # optional: every bar needs at least this many units
    bars:
      - R >= 0.30 at S >= 0.90
      - world.informed.recall - world.blind.recall >= 0.1
      - name: labels not recoverable from surface form
        bar: vp.a_imp <= 0.2
        min_units: 100
      - metric: loop.informed.net
        bar: ">= 0"

A bar is ``QUANTITY OP NUMBER`` (``OP``: ``<``, ``<=``, ``>``, ``>=``, or ``between LO and HI``; the
ledger's bar syntax, ``judgeaudit.ledger.model.parse_bar``), where ``QUANTITY`` is a name of
``judgeaudit.gate.quantities`` or a difference ``A - B`` of two; ``metric:`` beside a bar that is
only ``OP NUMBER`` names the quantity instead. ``… at QUANTITY OP NUMBER`` states the operating point
the bar is read at (``R >= 0.30 at S >= 0.90``: R read where S ≥ 0.90). A bad file raises
``InputError`` naming its line and field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from judgeaudit.errors import InputError
from judgeaudit.yamlfile import line_of, load_yaml
from judgeaudit.ledger.model import Condition, parse_bar

_OP = re.compile(r"(<=|>=|<|>|≥|≤|==|=|\bbetween\b|\bwithin\b|\bsign\b)", re.I)
GATE_COMPARATORS = ("<", "<=", ">", ">=", "between")


@dataclass(frozen=True)
class Bar:
    """One bar: ``terms`` (one quantity, or two whose difference is compared), its ``condition`` (the
    ledger's comparator and value), an optional operating point ``at`` and a unit floor."""

    name: str
    text: str
    terms: tuple[str, ...]
    condition: Condition
    at: Bar | None = None
    min_units: int | None = None
    line: int | None = None

    @property
    def quantity(self) -> str:
        return " - ".join(self.terms)


@dataclass(frozen=True)
class Policy:
    bars: tuple[Bar, ...]
    judge: str | None = None
    path: str | None = None


def parse_expression(text: str, *, metric: str | None = None) -> tuple[tuple[str, ...], Condition]:
    """``(terms, condition)`` of ``"A [- B] OP NUMBER"`` (or of ``"OP NUMBER"`` with ``metric``)."""
    text = str(text).strip()
    if metric is not None:
        lhs, bar = str(metric).strip(), text
    else:
        m = _OP.search(text)
        if m is None or not text[:m.start()].strip():
            raise InputError(f"bar {text!r} is not 'QUANTITY OP NUMBER' (OP one of <, <=, >, >=, between)",
                             field="bar")
        lhs, bar = text[:m.start()].strip(), text[m.start():].strip()
    try:
        op, value = parse_bar(bar)
    except InputError:
        raise InputError(f"bar {text!r}: {bar!r} is not one of '< x', '<= x', '> x', '>= x', 'between lo and hi'",
                         field="bar") from None
    if op not in GATE_COMPARATORS:
        raise InputError(f"bar {text!r}: a gate bar compares with <, <=, >, >= or between (an interval is judged "
                         f"against it), not {op!r}", field="bar")
    terms = tuple(t.strip() for t in re.split(r"\s+-\s+", lhs))
    if len(terms) > 2 or not all(terms) or any(re.search(r"\s", t) for t in terms):
        raise InputError(f"bar {text!r}: the quantity is a name or a difference 'A - B' of two names", field="bar")
    return terms, Condition(metric=lhs, bar=bar, comparator=op, value=value)


def _bar(entry: Any, i: int, default_units: int | None) -> Bar:
    if isinstance(entry, str):
        entry = {"bar": entry}
    if not isinstance(entry, dict):
        raise InputError("a bar is a string or a mapping with 'bar'", field=f"bars[{i}]")
    unknown = sorted(set(entry) - {"bar", "name", "metric", "at", "min_units"})
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (bar, name, metric, at, min_units)",
                         field=f"bars[{i}].{unknown[0]}")
    if "bar" not in entry:
        raise InputError("a bar needs 'bar'", field=f"bars[{i}].bar")
    text = str(entry["bar"])
    at_text = entry.get("at")
    if at_text is None and " at " in text:
        text, at_text = (s.strip() for s in text.split(" at ", 1))
    try:
        terms, cond = parse_expression(text, metric=entry.get("metric"))
    except InputError as e:
        raise InputError(e.message, field=f"bars[{i}].bar") from None
    at = None
    if at_text is not None:
        try:
            at_terms, at_cond = parse_expression(str(at_text))
        except InputError as e:
            raise InputError(f"operating point: {e.message}", field=f"bars[{i}].at") from None
        at = Bar(str(at_text), str(at_text), at_terms, at_cond)
    units = entry.get("min_units", default_units)
    if units is not None and (isinstance(units, bool) or not isinstance(units, int) or units < 1):
        raise InputError(f"min_units is a whole number ≥ 1, got {units!r}", field=f"bars[{i}].min_units")
    full = f"{' - '.join(terms)} {cond.bar}" + (f" at {at.text}" if at else "")
    return Bar(str(entry.get("name") or full), full, terms, cond, at, units)


def load_policy(path: str | Path) -> Policy:
    """The policy in a YAML file (``InputError`` naming the file, line and field when it is bad)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the policy ({e})", path=p) from None
    node, data = load_yaml(text, p)
    if not isinstance(data, dict):
        raise InputError("a policy is a YAML mapping with 'bars'", path=p, line=1)
    unknown = sorted(set(data) - {"bars", "judge", "min_units", "name"})
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (bars, judge, min_units, name)", path=p,
                         line=line_of(node, (unknown[0],)), field=unknown[0])
    bars = data.get("bars")
    if not isinstance(bars, list) or not bars:
        raise InputError("'bars' is a non-empty list", path=p, line=line_of(node, ("bars",)), field="bars")
    units = data.get("min_units")
    if units is not None and (isinstance(units, bool) or not isinstance(units, int) or units < 1):
        raise InputError(f"min_units is a whole number ≥ 1, got {units!r}", path=p,
                         line=line_of(node, ("min_units",)), field="min_units")
    out = []
    for i, entry in enumerate(bars):
        try:
            b = _bar(entry, i, units)
        except InputError as e:
            sub = e.field.split(".", 1)[1] if e.field and "." in e.field else None
            loc = ("bars", i) + ((sub,) if sub and isinstance(entry, dict) else ())
            raise InputError(e.message, path=p, line=line_of(node, loc), field=e.field) from None
        out.append(Bar(b.name, b.text, b.terms, b.condition, b.at, b.min_units, line_of(node, ("bars", i))))
    judge = data.get("judge")
    return Policy(tuple(out), None if judge is None else str(judge), str(p))

"""The quantities a gate policy names, read from a validity card (``card.json``; see
``judgeaudit.card.build``) — each with its point value, its interval, its number of units and, when
it cannot be read, why.

Names (the card's sections; each is a registry entry of ``READERS``, by its first word):

* ``S``, ``R``, ``R_scope``, ``R_strength``, ``gap``, ``R_plus``, ``wrong_way_rate``,
  ``control_flip_rate`` (or ``validity.<name>``) — the validity profile at matched invariance; units:
  the base items its intervals resample (the run's ``bootstrap_unit`` and ``n_base``, as the card
  copies them), not the edits;
* ``world.<arm>.<recall|specificity>`` — a world arm's rate; units: the source items (groups) its
  interval resamples that hold a unit of the rate's denominator (defective answers for recall, clean
  ones for specificity), as the run recorded them (``bootstrap``); a difference of two arms' rates
  is read on the run's paired interval (``paired``);
* ``vp.<a_imp|a_hum|vp>`` or ``vp.<set>.<…>`` — every label set (and mode) of the ruler section, each
  read on its own; units: the set's items;
* ``loop.<regulator>.net`` — a loop regulator's net effect; units: the loop's units when recorded;
* ``cap.<set>.<condition>`` or ``cap.<set>.overall`` — a CAP cell; units: its items;
* ``migrate.equivalent``, ``migrate.comparable`` (1 or 0), ``migrate.<quantity>``, ``migrate.linked.<quantity>``
  — a migrate run naming the judge (``judgeaudit.card.migrate``); units: the resampled anchors;
* ``calibrate.<estimate|human|tpr|tnr|agreement.cohen_kappa|agreement.raw_agreement|…>`` — a calibrate
  run's quantity (``judgeaudit.card.calibrate``); units: the labelled items (positives for TPR,
  negatives for TNR);
* anything else — a dotted path (or JSON pointer) into the card's sections, read with the ledger's
  rules (``judgeaudit.ledger.score.resolve``: the ``ci`` / ``<key>_ci`` sibling), with no unit count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgeaudit.card.schema import CardFile, Sections
from judgeaudit.errors import InputError
from judgeaudit.ledger.score import present, resolve

VALIDITY = ("S", "R", "R_scope", "R_strength", "gap", "R_plus", "wrong_way_rate", "control_flip_rate")
_CONTROL = ("S", "control_flip_rate")


@dataclass(frozen=True)
class Reading:
    """One reading of a quantity: ``missing`` says why there is no usable value (then BLIND)."""

    label: str
    value: float | None = None
    ci: tuple[float, float] | None = None
    n: int | None = None
    missing: str | None = None
    unit: str | None = None
    """What ``n`` counts: the unit the interval resamples (None: the card does not say)."""
    paired: bool | None = None
    """For a difference: True when read on the run's paired interval, False on the unpaired bound."""


def _ci(x: Any) -> tuple[float, float] | None:
    if isinstance(x, list | tuple) and len(x) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool)
                                                           and v == v for v in x):
        return float(x[0]), float(x[1])
    return None


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and x == x else None


def _count(x: Any, where: str | None = None) -> int | None:
    """A recorded unit count: a whole number ≥ 0; None for null or NaN (the count is then unknown: BLIND where a
    floor needs it). Anything else (text, a fraction, a negative number) is a malformed card, an ``InputError``
    naming ``where``, when given."""
    if x is None or (isinstance(x, float) and x != x):
        return None
    v = _num(x)
    if v is not None and v >= 0 and v == int(v):
        return int(v)
    if where is None:
        return None
    raise InputError(f"malformed card: a unit count is a whole number ≥ 0, got {str(x)[:40]!r}", field=where)


def _reading(label: str, value: Any, ci: Any, n: Any, unit: str | None = None,
             undefined: str = "no value", where: str | None = None) -> Reading:
    """A reading with its value, interval and count checked (a null or NaN value is missing)."""
    v = _num(value)
    return Reading(label, v, _ci(ci), _count(n, where), None if v is not None else undefined, unit)


UNIT_NAMES = {"base_id": "base items", "group": "source items"}
"""How the gate names a run's recorded bootstrap unit."""


def unit_name(unit: Any) -> str | None:
    return None if unit is None else UNIT_NAMES.get(str(unit), str(unit))


def _unmeasured(sec: Any, name: str) -> Reading | None:
    if sec is None:
        return Reading(name, missing="the card has no such section")
    if not sec.measured:
        return Reading(name, missing=str(sec.not_measured or "not measured"))
    return None


def _validity(s: Sections, parts: list[str], name: str) -> list[Reading]:
    sec = s.validity
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key = parts[0]
    if key not in VALIDITY or len(parts) != 1:
        return [Reading(name, missing=f"the validity section has no quantity {'.'.join(parts)!r} "
                                      f"(one of {', '.join(VALIDITY)})")]
    if key not in _CONTROL and sec.interpretable is False:
        return [Reading(name, missing=f"uninterpretable: no operating point reaches S ≥ {sec.s_floor}, so R is "
                                      "not read as sensitivity")]
    m = sec.metrics.get(key)
    return [_reading(name, None if m is None else m.value, None if m is None else m.ci, sec.bootstrap.n,
                     unit_name(sec.bootstrap.unit), f"{key} is undefined on this card")]


def _world(s: Sections, parts: list[str], name: str) -> list[Reading]:
    sec = s.world
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2:
        return [Reading(name, missing="a world quantity is world.<arm>.<recall|specificity>")]
    arm, metric = parts
    if arm not in sec.arms:
        return [Reading(name, missing=f"the world run has no {arm!r} arm (arms: {', '.join(sec.arms) or 'none'})")]
    m = sec.arms[arm].get(metric)
    if m is None:
        return [Reading(name, missing=f"the {arm!r} arm reports no {metric}")]
    return [_reading(name, m.value, m.ci, m.n, unit_name(m.unit), f"the {arm!r} arm's {metric} is undefined")]


def _world_paired(s: Sections, a: list[str], b: list[str], name: str) -> Reading | None:
    """``world.<arm>.<m> - world.<arm2>.<m>`` on the run's paired interval (the gain of one arm over
    the other on the units both scored, one resample of source items for both), or None when the
    run wrote none for that pair."""
    sec = s.world
    if not sec.measured or len(a) != 2 or len(b) != 2 or a[1] != b[1]:
        return None
    for row in sec.paired:
        if row.metric != a[1]:
            continue
        if (row.b, row.a) == (a[0], b[0]):
            sign = 1.0
        elif (row.a, row.b) == (a[0], b[0]):
            sign = -1.0
        else:
            continue
        g, ci = _num(row.gain), _ci(row.ci)
        ci = None if ci is None else (ci[0], ci[1]) if sign > 0 else (-ci[1], -ci[0])
        return Reading(name, None if g is None else sign * g, ci, row.n, None if g is not None
                       else "the paired gain is undefined", unit_name(row.unit), paired=True)
    return None


def _vp(s: Sections, parts: list[str], name: str) -> list[Reading]:
    sec = s.vp
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key, wanted = parts[-1], (parts[0] if len(parts) == 2 else None)
    rows = [row for row in sec.rows if wanted is None or row.set == wanted]
    if not rows:
        return [Reading(name, missing=f"the ruler section holds no label set{f' {wanted!r}' if wanted else ''}")]
    out = []
    for row in rows:
        label = f"{name} [{row.set}, {row.mode}]"
        if (q := row.quantity(key)) is None:
            out.append(Reading(label, missing=f"the ruler section has no quantity {key!r}"))
            continue
        out.append(_reading(label, q[0], q[1], row.n))
    return out


def _loop(s: Sections, parts: list[str], name: str) -> list[Reading]:
    sec = s.loop
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2 or parts[1] != "net":
        return [Reading(name, missing="a loop quantity is loop.<regulator>.net")]
    regs = sec.regulators
    if parts[0] not in regs:
        return [Reading(name, missing=f"the loop run has no regulator {parts[0]!r} ({', '.join(regs) or 'none'})")]
    g = regs[parts[0]]
    at, n = sec.n_units()
    return [_reading(name, g.net, g.ci, n, where=f"sections.loop.numbers.{at}")]


def _cap(s: Sections, parts: list[str], name: str) -> list[Reading]:
    sec = s.cap
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2:
        return [Reading(name, missing="a CAP quantity is cap.<set>.<condition|overall>")]
    if parts[0] not in sec.sets:
        return [Reading(name, missing=f"the CAP section has no set {parts[0]!r} ({', '.join(sec.sets) or 'none'})")]
    sb = sec.sets[parts[0]]
    c = sb.overall if parts[1] == "overall" else sb.conditions.get(parts[1])
    if c is None:
        return [Reading(name, missing=f"the CAP set {parts[0]!r} has no condition {parts[1]!r}")]
    return [_reading(name, c.value, c.ci, c.n)]


_CALIBRATE = ("estimate", "human", "tpr", "tnr",
              *(f"agreement.{k}" for k in ("cohen_kappa", "raw_agreement", "constant_agreement", "margin")))


def _calibrate(s: Sections, parts: list[str], name: str) -> list[Reading]:
    """A calibrate run's quantity (``judgeaudit.card.calibrate``); units: the labelled items (TPR: the
    labelled positives, TNR: the labelled negatives)."""
    sec = s.calibrate
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key = ".".join(parts)
    if key not in _CALIBRATE:
        return [Reading(name, missing=f"the calibrate section has no quantity {key!r} (one of "
                                      f"{', '.join(_CALIBRATE)})")]
    head, _, sub = key.partition(".")
    m = (sec.agreement or {}).get(sub) if head == "agreement" else getattr(sec, head)
    if not m:
        return [Reading(name, missing=f"the calibrate run reports no {key} (see its notes)")]
    n = {"tpr": sec.n.positives, "tnr": sec.n.negatives}.get(key, sec.n.labelled)
    v = _num(m.value)
    return [Reading(name, v, _ci(m.ci), n, None if v is not None else f"{key} is undefined in the calibrate run")]


def _migrate(s: Sections, parts: list[str], name: str) -> list[Reading]:
    """A migrate run's verdict as ``migrate.equivalent`` / ``migrate.comparable`` (1 or 0; BLIND when the run was
    BLIND) or one of its quantities (``migrate.<name>``, ``migrate.linked.<name>``); units: the resampled anchors
    (``judgeaudit.card.migrate``)."""
    sec = s.migrate
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    n = sec.n.units
    key = ".".join(parts)
    if key in ("equivalent", "comparable", "verdict"):
        if key == "verdict":
            return [Reading(name, missing="the verdict is a word: bar on migrate.equivalent >= 1 or "
                                          "migrate.comparable >= 1")]
        if sec.verdict == "BLIND":
            return [Reading(name, missing="the migrate run was BLIND: " + "; ".join(sec.reasons))]
        ok = sec.verdict == "EQUIVALENT" or (key == "comparable" and sec.verdict == "LINKABLE")
        return [Reading(name, float(ok), (float(ok), float(ok)), n)]
    linked = parts[0] == "linked"
    qname = ".".join(parts[1:] if linked else parts)
    qs = {q.name: q for q in (sec.linked if linked else sec.quantities)}
    if qname not in qs:
        return [Reading(name, missing=f"the migrate run has no {'linked ' if linked else ''}quantity {qname!r} "
                                      f"(one of {', '.join(qs) or 'none'})")]
    q = qs[qname]
    v = _num(q.value)
    return [Reading(name, v, _ci(q.ci), q.n,
                    None if v is not None else f"{qname} was not computable in the migrate run")]


READERS: dict[str, Callable[[Sections, list[str], str], list[Reading]]] = {
    "validity": _validity, "world": _world, "vp": _vp, "loop": _loop, "cap": _cap, "calibrate": _calibrate,
    "migrate": _migrate,
}
"""Section name → reader of ``<section>.<rest>`` names (a higher layer may register more)."""

PAIRED: dict[str, Callable[[Sections, list[str], list[str], str], Reading | None]] = {
    "world": _world_paired,
}
"""Section name → reader of a difference ``<section>.<a> - <section>.<b>`` on the run's own paired
interval (None: the run wrote none, and the gate falls back to the unpaired bound)."""


def read_paired(card: CardFile | dict[str, Any], first: str, second: str) -> Reading | None:
    """The difference ``first - second`` as the run's paired interval reads it, when it wrote one."""
    s = CardFile.of(card).sections
    h1, _, r1 = first.partition(".")
    h2, _, r2 = second.partition(".")
    if h1 != h2 or h1 not in PAIRED or not r1 or not r2:
        return None
    return PAIRED[h1](s, r1.split("."), r2.split("."), f"{first} - {second}")


def read(card: CardFile | dict[str, Any], name: str) -> list[Reading]:
    """Every reading of quantity ``name`` on ``card`` (several for a name that covers several label sets; a
    ``card.json`` object is read as a ``CardFile``, a key not as a card writes it an error naming it)."""
    card = CardFile.of(card)
    if name in VALIDITY:
        return _validity(card.sections, [name], name)
    head, _, rest = name.partition(".")
    if head in READERS and rest:
        return READERS[head](card.sections, rest.split("."), name)
    s = card.sections_json()     # any other path, read with the ledger's rules
    if not present(s, name):
        return [Reading(name, missing="the card holds no such quantity")]
    value, ci = resolve(s, name)
    return [_reading(name, value, ci, None, undefined="the card holds no number there")]

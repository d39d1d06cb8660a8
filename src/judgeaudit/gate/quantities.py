"""The quantities a gate policy names, read from a validity card (``card.json``; see
``judgeaudit.card.build``) — each with its point value, its interval, its number of units and, when
it cannot be read, why.

Names (the card's sections; each is a registry entry of ``READERS``, by its first word):

* ``S``, ``R``, ``R_scope``, ``R_strength``, ``gap``, ``R_plus``, ``wrong_way_rate``,
  ``control_flip_rate`` (or ``validity.<name>``) — the validity profile at matched invariance; units:
  the construct edits (control edits for ``S`` and ``control_flip_rate``);
* ``world.<arm>.<recall|specificity>`` — a world arm's rate; units: the arm's items when the card holds them;
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


def _ci(x: Any) -> tuple[float, float] | None:
    if isinstance(x, list | tuple) and len(x) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool)
                                                           and v == v for v in x):
        return float(x[0]), float(x[1])
    return None


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and x == x else None


def _map(node: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``node[key]``, a JSON object ({} when absent or null); anything else is a malformed card, an
    ``InputError`` naming the field (``sections.world.arms``)."""
    v = node.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise InputError(f"malformed card: a {type(v).__name__}, where a JSON object is expected",
                         field=f"{where}.{key}")
    return v


def _count(v: Any, where: str) -> int | None:
    """A recorded unit count: a whole number, or None when absent; anything else is a malformed card."""
    if v is None:
        return None
    if isinstance(v, int | float) and not isinstance(v, bool) and v == v and float(v).is_integer() and v >= 0:
        return int(v)
    raise InputError(f"malformed card: a unit count is a whole number ≥ 0, got {str(v)[:40]!r}", field=where)


def _section(s: dict[str, Any], name: str) -> dict[str, Any]:
    return _map(s, name, "sections")


def _unmeasured(sec: dict[str, Any], name: str) -> Reading | None:
    if not sec:
        return Reading(name, missing="the card has no such section")
    if not sec.get("measured", True):
        return Reading(name, missing=str(sec.get("not_measured") or "not measured"))
    return None


def _validity(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    sec = _section(s, "validity")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key = parts[0]
    if key not in VALIDITY or len(parts) != 1:
        return [Reading(name, missing=f"the validity section has no quantity {'.'.join(parts)!r} "
                                      f"(one of {', '.join(VALIDITY)})")]
    if key not in _CONTROL and sec.get("interpretable") is False:
        return [Reading(name, missing=f"uninterpretable: no operating point reaches S ≥ {sec.get('s_floor')}, so R is "
                                      "not read as sensitivity")]
    m = _map(_map(sec, "metrics", "sections.validity"), key, "sections.validity.metrics")
    unit = "control_edits" if key in _CONTROL else "construct_edits"
    n = _count(_map(sec, "n", "sections.validity").get(unit), f"sections.validity.n.{unit}")
    return [Reading(name, _num(m.get("value")), _ci(m.get("ci")), n,
                    None if _num(m.get("value")) is not None else f"{key} is undefined on this card")]


def _world(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    sec = _section(s, "world")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2:
        return [Reading(name, missing="a world quantity is world.<arm>.<recall|specificity>")]
    arm, metric = parts
    arms = _map(sec, "arms", "sections.world")
    if arm not in arms:
        return [Reading(name, missing=f"the world run has no {arm!r} arm (arms: {', '.join(arms) or 'none'})")]
    m = _map(_map(arms, arm, "sections.world.arms"), metric, f"sections.world.arms.{arm}")
    if not m:
        return [Reading(name, missing=f"the {arm!r} arm reports no {metric}")]
    n = _count(_map(sec, "numbers", "sections.world").get(f"arms.{arm}.n"), f"sections.world.numbers.arms.{arm}.n")
    return [Reading(name, _num(m.get("value")), _ci(m.get("ci")), n)]


def _vp(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    sec = _section(s, "vp")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key, wanted = parts[-1], (parts[0] if len(parts) == 2 else None)
    every = sec.get("rows") or []
    if not isinstance(every, list) or not all(isinstance(row, dict) for row in every):
        raise InputError("malformed card: the ruler rows are a list of JSON objects", field="sections.vp.rows")
    rows = [row for row in every if wanted is None or row.get("set") == wanted]
    if not rows:
        return [Reading(name, missing=f"the ruler section holds no label set{f' {wanted!r}' if wanted else ''}")]
    out = []
    for row in rows:
        label = f"{name} [{row.get('set')}, {row.get('mode')}]"
        if key not in row:
            out.append(Reading(label, missing=f"the ruler section has no quantity {key!r}"))
            continue
        out.append(Reading(label, _num(row.get(key)), _ci(row.get(f"{key}_ci")),
                           _count(row.get("n"), "sections.vp.rows.n")))
    return out


def _loop(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    sec = _section(s, "loop")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2 or parts[1] != "net":
        return [Reading(name, missing="a loop quantity is loop.<regulator>.net")]
    regs = _map(sec, "regulators", "sections.loop")
    if parts[0] not in regs:
        return [Reading(name, missing=f"the loop run has no regulator {parts[0]!r} ({', '.join(regs) or 'none'})")]
    g = _map(regs, parts[0], "sections.loop.regulators")
    n = next((_count(v, f"sections.loop.numbers.{k}") for k, v in _map(sec, "numbers", "sections.loop").items()
              if k.split(".")[-1] == "n_units"), None)
    return [Reading(name, _num(g.get("net")), _ci(g.get("ci")), n)]


def _cap(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    sec = _section(s, "cap")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    if len(parts) != 2:
        return [Reading(name, missing="a CAP quantity is cap.<set>.<condition|overall>")]
    sets = _map(sec, "sets", "sections.cap")
    if parts[0] not in sets:
        return [Reading(name, missing=f"the CAP section has no set {parts[0]!r} ({', '.join(sets) or 'none'})")]
    where = f"sections.cap.sets.{parts[0]}"
    sb = _map(sets, parts[0], "sections.cap.sets")
    cell = (_map(sb, "overall", where) if parts[1] == "overall"
            else _map(_map(sb, "conditions", where), parts[1], f"{where}.conditions"))
    if not cell:
        return [Reading(name, missing=f"the CAP set {parts[0]!r} has no condition {parts[1]!r}")]
    return [Reading(name, _num(cell.get("value")), _ci(cell.get("ci")), _count(cell.get("n"), f"{where}.n"))]


_CALIBRATE = {"estimate": ("estimate",), "human": ("human",), "tpr": ("tpr",), "tnr": ("tnr",),
              **{f"agreement.{k}": ("agreement", k) for k in ("cohen_kappa", "raw_agreement", "constant_agreement",
                                                              "margin")}}


def _calibrate(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    """A calibrate run's quantity (``judgeaudit.card.calibrate``); units: the labelled items (TPR: the
    labelled positives, TNR: the labelled negatives)."""
    sec = s.get("calibrate")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    key = ".".join(parts)
    if key not in _CALIBRATE:
        return [Reading(name, missing=f"the calibrate section has no quantity {key!r} (one of "
                                      f"{', '.join(_CALIBRATE)})")]
    m: Any = sec
    for k in _CALIBRATE[key]:
        m = (m or {}).get(k)
    if not m:
        return [Reading(name, missing=f"the calibrate run reports no {key} (see its notes)")]
    n = (sec.get("n") or {}).get({"tpr": "positives", "tnr": "negatives"}.get(key, "labelled"))
    v = _num(m.get("value"))
    return [Reading(name, v, _ci(m.get("ci")), n if isinstance(n, int) else None,
                    None if v is not None else f"{key} is undefined in the calibrate run")]


def _migrate(s: dict[str, Any], parts: list[str], name: str) -> list[Reading]:
    """A migrate run's verdict as ``migrate.equivalent`` / ``migrate.comparable`` (1 or 0; BLIND when the run was
    BLIND) or one of its quantities (``migrate.<name>``, ``migrate.linked.<name>``); units: the resampled anchors
    (``judgeaudit.card.migrate``)."""
    sec = s.get("migrate")
    if (r := _unmeasured(sec, name)) is not None:
        return [r]
    n = (sec.get("n") or {}).get("units")
    key = ".".join(parts)
    if key in ("equivalent", "comparable", "verdict"):
        if key == "verdict":
            return [Reading(name, missing="the verdict is a word: bar on migrate.equivalent >= 1 or "
                                          "migrate.comparable >= 1")]
        if sec["verdict"] == "BLIND":
            return [Reading(name, missing="the migrate run was BLIND: " + "; ".join(sec.get("reasons") or []))]
        ok = sec["verdict"] == "EQUIVALENT" or (key == "comparable" and sec["verdict"] == "LINKABLE")
        return [Reading(name, float(ok), (float(ok), float(ok)), n if isinstance(n, int) else None)]
    linked = parts[0] == "linked"
    qname = ".".join(parts[1:] if linked else parts)
    qs = {q["name"]: q for q in sec.get("linked" if linked else "quantities") or []}
    if qname not in qs:
        return [Reading(name, missing=f"the migrate run has no {'linked ' if linked else ''}quantity {qname!r} "
                                      f"(one of {', '.join(qs) or 'none'})")]
    q = qs[qname]
    v = _num(q.get("value"))
    return [Reading(name, v, _ci(q.get("ci")), q.get("n") if isinstance(q.get("n"), int) else None,
                    None if v is not None else f"{qname} was not computable in the migrate run")]


READERS: dict[str, Callable[[dict[str, Any], list[str], str], list[Reading]]] = {
    "validity": _validity, "world": _world, "vp": _vp, "loop": _loop, "cap": _cap, "calibrate": _calibrate,
    "migrate": _migrate,
}
"""Section name → reader of ``<section>.<rest>`` names (a higher layer may register more)."""


def read(card: dict[str, Any], name: str) -> list[Reading]:
    """Every reading of quantity ``name`` on ``card`` (several for a name that covers several label sets)."""
    s = card.get("sections") or {}
    if name in VALIDITY:
        return _validity(s, [name], name)
    head, _, rest = name.partition(".")
    if head in READERS and rest:
        return READERS[head](s, rest.split("."), name)
    if not present(s, name):
        return [Reading(name, missing="the card holds no such quantity")]
    value, ci = resolve(s, name)
    return [Reading(name, value, ci, None, None if value is not None else "the card holds no number there")]

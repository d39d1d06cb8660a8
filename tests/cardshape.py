"""A planted card made whole: ``whole(card)`` adds every key a built card writes (``judgeaudit.card.build``) that a
test's planted card leaves out, each with the value of a run that recorded nothing there (None, an empty list or
mapping), so that a test plants only the numbers it is about and the card is still read as ``CardFile`` reads a
card.json. A key the test planted is never changed; a section or block that is not a JSON object is left as it is
(a malformed card stays malformed)."""

from __future__ import annotations

import copy
from typing import Any


def _source(kind: str) -> dict[str, Any]:
    return {"path": f"/runs/{kind}/result.json", "run_id": None, "created_at": None}


def _fill(d: Any, defaults: dict[str, Any]) -> None:
    if isinstance(d, dict):
        for k, v in defaults.items():
            d.setdefault(k, copy.deepcopy(v))


_VALUE = {"value": None, "ci": None}
_VALIDITY = {"source": _source("validity"), "s_floor": None, "direction_source": None,
             "n": {"base_items": None, "construct_edits": None, "control_edits": None},
             "bootstrap": {"unit": None, "n": None}, "interpretable": None, "single_point": None, "tau": None,
             "tau_in_bootstrap": None, "metrics": {}, "gap_perm_p": None, "per_axis": {}, "notes": [], "template": None,
             "scale": None}
_VP_ROW = {"set": None, "mode": None, "n": None, "label_origin": None, "a_imp": None, "a_imp_ci": None,
           "a_imp_member": None, "null_p": None, "null_p_bh": None, "null_p95": None, "clears_null": None,
           "a_hum": None, "a_hum_ci": None, "vp": None, "resolvable": None, "source": _source("vp")}
_PAIRED = {"a_value": None, "b_value": None, "gain": None, "ci": None, "n_pairs": None, "pair_unit": None,
           "mcnemar_p": None, "n": None, "unit": None}
_RATE = {"value": None, "ci": None, "n": None, "unit": None}
_CALIBRATE = {"source": _source("calibrate"), "target": None, "level": None, "estimate": _VALUE, "human": _VALUE,
              "agreement": None, "tpr": None, "tnr": None, "notes": []}
_MIGRATE = {"source": _source("migrate"), "reasons": [], "role": "old", "old_judge": "old", "new_judge": "new",
            "quantities": [], "linked": [], "link_hash": None}
_QUANTITY = {"label": "quantity", "value": None, "ci": None, "margin": None, "test": None, "status": "measured",
             "n": None, "unit": None, "anchors_needed": None}


def whole(card: dict[str, Any]) -> dict[str, Any]:
    """``card`` (changed in place, and returned) with every key a built card writes."""
    _fill(card, {"judge": "j", "generated_at": "2026-01-01T00:00:00+00:00", "from": [], "verdict": []})
    s = card.get("sections")
    if not isinstance(s, dict):
        return card
    absent = {"measured": False, "not_measured": "not measured"}
    _fill(s, {k: absent for k in ("validity", "cap", "vp", "world", "loop", "ledger")})
    _fill(s, {"checklist": {"measured": True, "items": []}})

    def measured(k: str) -> dict[str, Any] | None:
        sec = s.get(k)
        return sec if isinstance(sec, dict) and sec.get("measured") is True else None

    if (v := measured("validity")) is not None:
        _fill(v, _VALIDITY)
        for k in ("n", "bootstrap"):
            _fill(v.get(k), _VALIDITY[k])
    if (c := measured("cap")) is not None:
        for sb in (c.get("sets") or {}).values() if isinstance(c.get("sets"), dict) else ():
            _fill(sb, {"source": _source("cap")})
    if (vp := measured("vp")) is not None and isinstance(vp.get("rows"), list):
        for row in vp["rows"]:
            _fill(row, _VP_ROW)
    if (w := measured("world")) is not None:
        _fill(w, {"source": _source("world"), "numbers": {}, "arms": {}, "paired": []})
        for arm in w["arms"].values() if isinstance(w["arms"], dict) else ():
            for rate in arm.values() if isinstance(arm, dict) else ():
                _fill(rate, _RATE)
        for row in w["paired"] if isinstance(w["paired"], list) else ():
            _fill(row, _PAIRED)
    if (lp := measured("loop")) is not None:
        _fill(lp, {"source": _source("loop"), "numbers": {}, "judge2": None, "regulators": {}})
    if (cal := measured("calibrate")) is not None:
        _fill(cal, _CALIBRATE)
        _fill(cal, {"n": {}})
        _fill(cal["n"], {"labelled": None, "unlabelled": None, "positives": None, "negatives": None})
    if (m := measured("migrate")) is not None:
        _fill(m, _MIGRATE)
        _fill(m, {"n": {}})
        _fill(m["n"], {"anchors": None, "units": None, "unit": None})
        for q in m["quantities"] + m["linked"]:
            _fill(q, _QUANTITY)
    return card

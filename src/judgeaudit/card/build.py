"""One judge's validity card, gathered from existing run results (never recomputed).

Sections: the validity profile — (S, R) at matched invariance with per-axis R, R⁺ and the
wrong-way rate; the CAP profile (per condition, strict vs consistency); the validation power of
the label sets in the runs given (the ruler); the world gap and loop safety (when such results are
present); the §6.1 checklist; the ledger status. Each section states its source runs, its n and
its intervals, or "not measured — run: <command>". The verdict paragraph is produced by the rules
in ``verdict`` below, from the numbers in the sections only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgeaudit.card.checklist import checklist
from judgeaudit.card.sources import Run, of_kind
from judgeaudit.default_runs import DEFAULT_RUNS
from judgeaudit.runinfo import utc_now

COMMANDS = {
    **{k: f"{r.command} (or: judgeaudit card --judge {{judge}} --run-missing --out DIR)" for k, r in DEFAULT_RUNS.items()},
    "ledger": "judgeaudit card --judge {judge} --from DIR --ledger FILE --out DIR",
}
VALIDITY_KEYS = ("S", "R", "R_scope", "R_strength", "gap", "R_plus", "wrong_way_rate", "control_flip_rate")
SECTIONS = ("validity", "cap", "vp", "world", "loop", "checklist", "ledger")


def _src(r: Run) -> dict[str, Any]:
    return {"path": str(r.path), "run_id": r.run_id, "created_at": r.created_at}


def _absent(kind: str, judge: str) -> dict[str, Any]:
    return {"measured": False, "not_measured": f"not measured — run: {COMMANDS[kind].format(judge=judge)}"}


def _unusable(r: Run, judge: str) -> dict[str, Any] | None:
    """The section's "not measured" entry when ``judge`` was asked in run ``r`` and gave no usable
    verdict (the run's ``calls`` summary), else None."""
    c = (r.data.get("calls") or {}).get(judge) or {}
    if not c.get("calls") or c.get("usable"):
        return None
    why = f"; first: {c['reasons'][0]}" if c.get("reasons") else ""
    return {"measured": False, "not_measured": f"not measured — {judge} gave no usable verdict in {r.path.parent} "
                                               f"({c.get('failed_calls')} of {c['calls']} calls failed{why})"}


def _val(block: dict[str, Any], key: str) -> dict[str, Any]:
    return {"value": block.get(key), "ci": block.get(f"{key}_ci")}


def validity_section(runs: Sequence[Run], judge: str) -> dict[str, Any]:
    hits = [r for r in of_kind(runs, "validity") if judge in r.data.get("judges", {})]
    if not hits:
        return _absent("validity", judge)
    r = hits[-1]
    if (bad := _unusable(r, judge)) is not None:
        return bad
    b = r.data["judges"][judge]
    d = b.get("directional") or {}
    return {
        "measured": True, "source": _src(r), "s_floor": r.data.get("s_floor"),
        "n": {"base_items": r.data.get("n_base"), "construct_edits": b.get("n_construct"),
              "control_edits": b.get("n_control")},
        "interpretable": b.get("interpretable"), "tau": b.get("tau"),
        "metrics": {k: _val(b, k) for k in VALIDITY_KEYS},
        "gap_perm_p": b.get("gap_perm_p"),
        "per_axis": {ax: {"R": _val(b, f"R_{ax}"), "R_plus": _val(d.get(ax) or {}, "R_plus"),
                          "wrong_way_rate": _val(d.get(ax) or {}, "wrong_way_rate")} for ax in ("scope", "strength")},
    }


def cap_section(runs: Sequence[Run], judge: str) -> dict[str, Any]:
    sets = {}
    for r in of_kind(runs, "cap"):
        if _unusable(r, judge) is not None:
            continue
        for s, sb in r.data.get("sets", {}).items():
            j = sb.get("judges", {}).get(judge)
            if j is None:
                continue
            conds = {}
            for c, e in j.get("conditions", {}).items():
                conds[c] = {"value": e.get("value"), "ci": e.get("ci"), "n": e.get("n"), "coverage": e.get("coverage")}
                for k in ("strict", "consistency"):
                    if isinstance(e.get(k), dict):
                        conds[c][k] = {"value": e[k].get("value"), "ci": e[k].get("ci")}
            ov = j.get("overall") or {}
            sets[s] = {"source": _src(r), "overall": {"value": ov.get("value"), "ci": ov.get("ci"), "n": ov.get("n")},
                       "conditions": conds}
    return {"measured": True, "sets": sets} if sets else _absent("cap", judge)


def vp_section(runs: Sequence[Run], judge: str) -> dict[str, Any]:
    rows = []
    for r in of_kind(runs, "vp"):
        for s, sb in r.data.get("sets", {}).items():
            for mode, mb in sb.items():
                if isinstance(mb, dict) and mb.get("applicable"):
                    null = mb.get("a_imp_null") or {}
                    rows.append({"set": s, "mode": mode, "n": mb.get("n"), "label_origin": sb.get("meta", {}).get(
                        "label_origin"), "a_imp": mb.get("a_imp"), "a_imp_ci": mb.get("a_imp_ci"),
                        "a_imp_member": mb.get("a_imp_member"), "null_p": null.get("p_value"),
                        "clears_null": null.get("clears_null"), "a_hum": mb.get("a_hum"),
                        "a_hum_ci": mb.get("a_hum_ci"), "vp": mb.get("vp"), "resolvable": mb.get("resolvable"),
                        "source": _src(r)})
    return {"measured": True, "rows": rows} if rows else _absent("vp", judge)


def _numbers(x: Any, prefix: str = "") -> list[tuple[str, float]]:
    if isinstance(x, dict):
        return [n for k, v in x.items() for n in _numbers(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(x, int | float) and not isinstance(x, bool):
        return [(prefix, float(x))]
    return []


def generic_section(runs: Sequence[Run], judge: str, kind: str) -> dict[str, Any]:
    """World and loop results, read generically: the judge's block (``judges[<judge>]``) or the whole
    result's numbers, each with its path (intervals are the ``*_ci`` / ``ci`` entries beside them)."""
    hits = [r for r in of_kind(runs, kind) if judge in (r.data.get("judges") or {}) or "judges" not in r.data]
    if not hits:
        return _absent(kind, judge)
    r = hits[-1]
    if (bad := _unusable(r, judge)) is not None:
        return bad
    block = (r.data.get("judges") or {}).get(judge, r.data)
    nums = [(p, v) for p, v in _numbers({k: v for k, v in block.items() if k not in ("run_id", "created_at")})]
    return {"measured": True, "source": _src(r), "numbers": dict(nums[:60])}


def ledger_section(ledger_path: str | Path | None, from_dirs: Sequence[str | Path], judge: str) -> dict[str, Any]:
    if ledger_path is None:
        return _absent("ledger", judge)
    from judgeaudit.errors import InputError
    from judgeaudit.ledger.report import tally
    from judgeaudit.ledger.score import load_results, score
    from judgeaudit.ledger.store import read_ledger

    try:
        scores = score(read_ledger(ledger_path), load_results(from_dirs), path=ledger_path)
    except InputError as e:
        return {"measured": False, "not_measured": f"ledger not scored: {e}"}
    t = tally(scores)
    return {"measured": True, "ledger": str(ledger_path), "n_units": t.n_units, "n_predictions": t.n_predictions,
            "verdicts": t.verdicts, "directions": t.directions, "sentence": t.sentence(),
            "units": [{"unit": s.unit, "bar": s.bar, "verdict": s.verdict, "direction": s.direction,
                       "value": s.value, "ci": list(s.ci) if s.ci else None} for s in scores]}


def _excludes_zero(ci: Sequence[float] | None) -> bool:
    return bool(ci) and None not in ci and (ci[0] > 0 or ci[1] < 0)


def verdict(card: dict[str, Any]) -> list[str]:
    """The verdict paragraph, one sentence per rule that applies."""
    s, j, out = card["sections"], card["judge"], []
    v = s["validity"]
    if v["measured"]:
        m = v["metrics"]
        S, R = m["S"]["value"], m["R"]["value"]
        if not v["interpretable"]:
            out.append(f"{j} is uninterpretable on construct sensitivity: no operating point reaches invariance "
                       f"S ≥ {v['s_floor']} (S = {S:.3f}), so its R is not read as sensitivity.")
        else:
            out.append(f"At matched invariance (S = {S:.3f} ≥ {v['s_floor']}), {j} moves on R = {R:.3f} of "
                       "construct-changing edits.")
            gap = m["gap"]
            if gap["value"] is not None and gap["value"] > 0 and _excludes_zero(gap["ci"]):
                out.append(f"It is insensitive on strength at matched invariance (R_strength "
                           f"{m['R_strength']['value']:.3f} vs R_scope {m['R_scope']['value']:.3f}; the gap's interval "
                           "excludes zero).")
            elif gap["value"] is not None and gap["value"] < 0 and _excludes_zero(gap["ci"]):
                out.append(f"It is insensitive on scope at matched invariance (R_scope {m['R_scope']['value']:.3f} "
                           f"vs R_strength {m['R_strength']['value']:.3f}; the gap's interval excludes zero).")
            rp, ww = m["R_plus"]["value"], m["wrong_way_rate"]["value"]
            if rp is not None and ww is not None and ww > rp:
                out.append(f"Most of its construct flips go the wrong way (wrong-way rate {ww:.3f} vs R⁺ {rp:.3f}).")
    for row in s["vp"].get("rows", []) if s["vp"]["measured"] else []:
        if row["clears_null"] and row["a_imp_member"] == "length_only":
            out.append(f"Its validation set {row['set']} ({row['mode']}) is recoverable from length alone "
                       f"(a_imp {row['a_imp']:.3f}, above its permutation null).")
        elif row["clears_null"]:
            out.append(f"Its validation set {row['set']} ({row['mode']}) is recoverable from surface form alone "
                       f"({row['a_imp_member']}: a_imp {row['a_imp']:.3f}, above its permutation null).")
        if row["vp"] is not None and row["resolvable"] is False:
            out.append(f"The ruler {row['set']} ({row['mode']}) cannot resolve a judge from its impoverished "
                       f"baseline (VP {row['vp']:+.3f}).")
    if s["cap"]["measured"]:
        for name, sb in s["cap"]["sets"].items():
            vals = {c: e["value"] for c, e in sb["conditions"].items() if e["value"] is not None}
            if vals:
                c = min(vals, key=vals.get)
                out.append(f"On {name} its CAP profile is weakest on {c} ({vals[c]:.3f}).")
    ok = sum(i["ok"] for i in s["checklist"]["items"])
    out.append(f"§6.1 checklist: {ok} of 6 items met.")
    absent = [k for k in SECTIONS if not s[k].get("measured", True)]
    if absent:
        out.append("Not measured: " + ", ".join(absent) + ".")
    return out


def build_card(judge: str, runs: Sequence[Run], *, from_dirs: Sequence[str | Path] = (),
               ledger: str | Path | None = None, notes: dict[str, str] | None = None) -> dict[str, Any]:
    """The card.json content for ``judge``; ``notes`` replaces the "not measured" line of a section
    that stays unmeasured (e.g. why its default run was not made)."""
    items = checklist(runs, judge)
    sections = {
        "validity": validity_section(runs, judge),
        "cap": cap_section(runs, judge),
        "vp": vp_section(runs, judge),
        "world": generic_section(runs, judge, "world"),
        "loop": generic_section(runs, judge, "loop"),
        "checklist": {"measured": True, "items": [i.to_dict() for i in items]},
        "ledger": ledger_section(ledger, from_dirs, judge),
    }
    for k, text in (notes or {}).items():
        if not sections[k].get("measured", True):
            sections[k]["not_measured"] = text
    card = {"judge": judge, "generated_at": utc_now(), "from": [str(d) for d in from_dirs], "sections": sections}
    card["verdict"] = verdict(card)
    return card

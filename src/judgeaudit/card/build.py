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
from judgeaudit.card.numbers import above, below, ci_ok, excludes_zero, p_value, with_ci
from judgeaudit.card.sources import Run, of_kind
from judgeaudit.card.defaults import DEFAULT_COMMANDS
from judgeaudit.runinfo import utc_now

COMMANDS = {
    **{k: f"{c} (or: judgeaudit card --judge {{judge}} --run-missing --out DIR)" for k, c in DEFAULT_COMMANDS.items()},
    "ledger": "judgeaudit card --judge {judge} --from DIR --ledger FILE --out DIR",
}
VALIDITY_KEYS = ("S", "R", "R_scope", "R_strength", "gap", "R_plus", "wrong_way_rate", "control_flip_rate")
SECTIONS = ("validity", "cap", "vp", "world", "loop", "checklist", "ledger")


def spec_family(judge: str) -> str | None:
    """The judge's model family from its spec (``?family=`` when given, else the family table)."""
    from judgeaudit.families import family_of, resolve, split_spec_family

    kind, _, arg = judge.partition(":")
    if kind == "local" and not arg:
        from judgeaudit.judges.local import MODEL_NAME

        return family_of(MODEL_NAME)
    if kind in ("api", "hf") and arg:
        from judgeaudit.errors import InputError

        try:
            model, override = split_spec_family(arg)
        except InputError:   # another ?option (transport=…): the family of the model name alone
            model, override = arg.split("?", 1)[0], None
        return resolve(model, override)
    return None


def _src(r: Run, judge: str | None = None) -> dict[str, Any]:
    out = {"path": str(r.path.resolve()), "run_id": r.run_id, "created_at": r.created_at}
    if judge is not None:
        out |= {"judge": judge, "family": spec_family(judge)}
    if isinstance(r.data.get("inputs"), dict):
        from judgeaudit.runinfo import changed_inputs

        out["inputs"] = r.data["inputs"]
        out["inputs_changed"] = changed_inputs(r.data)   # flagged on the card: the run read other files
    return out


def section_sources(sec: dict[str, Any]) -> list[dict[str, Any]]:
    """The sources (``_src``) of a measured card section: its own, each CAP set's, each vp row's."""
    if not sec.get("measured"):
        return []
    srcs = [sec.get("source")] + [sb.get("source") for sb in (sec.get("sets") or {}).values()
                                  if isinstance(sb, dict)] + [r.get("source") for r in sec.get("rows") or []
                                                              if isinstance(r, dict)]
    return list({x["path"]: x for x in srcs if isinstance(x, dict) and x.get("path")}.values())


def attributed(r: Run, judge: str) -> bool:
    """Run ``r`` was made by ``judge``: it is a key of the run's ``judges`` block, or the run's
    ``judge`` (a loop's audited judge). A run naming no judge is nobody's."""
    d = r.data
    return judge in (d.get("judges") or {}) or d.get("judge") == judge


def _absent(kind: str, judge: str) -> dict[str, Any]:
    return {"measured": False, "not_measured": f"not measured — run: {COMMANDS[kind].format(judge=judge)}"}


def _unusable(r: Run, judge: str) -> dict[str, Any] | None:
    """The section's "not measured" entry when ``judge`` was asked in run ``r`` and gave no usable
    verdict (the run's ``calls`` summary), else None."""
    c = (r.data.get("calls") or {}).get(judge) or {}
    if not c.get("calls") or c.get("usable"):
        return None
    why = f"; first: {c['reasons'][0]}" if c.get("reasons") else ""
    return {"measured": False, "failed": True,
            "not_measured": f"not measured — {judge} gave no usable verdict in {r.path.parent} "
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
        "measured": True, "source": _src(r, judge), "s_floor": r.data.get("s_floor"),
        "direction_source": r.data.get("direction_source"),
        "n": {"base_items": r.data.get("n_base"), "construct_edits": b.get("n_construct"),
              "control_edits": b.get("n_control")},
        "bootstrap": {"unit": r.data.get("bootstrap_unit"), "n": r.data.get("n_base")},
        "interpretable": b.get("interpretable"), "single_point": b.get("single_point"), "tau": b.get("tau"),
        "tau_in_bootstrap": r.data.get("tau_in_bootstrap"),
        "metrics": {k: _val(b, k) for k in VALIDITY_KEYS},
        "gap_perm_p": b.get("gap_perm_p"),
        "per_axis": {ax: {"R": _val(b, f"R_{ax}"), "R_plus": _val(d.get(ax) or {}, "R_plus"),
                          "wrong_way_rate": _val(d.get(ax) or {}, "wrong_way_rate")} for ax in ("scope", "strength")},
        "notes": list(b.get("notes") or []),
        "template": b.get("template"), "scale": b.get("scale"),
    }


def instrument_line(section: dict[str, Any]) -> str | None:
    """The sentence naming the template and scale a validity section was measured with (None: the run
    recorded neither)."""
    t, sc = section.get("template"), section.get("scale")
    if not t and not sc:
        return None
    parts = []
    if t:
        parts.append(f"template {t['name']} {t['version']} (sha256 {t['sha256']}"
                     + (", judgeaudit's default" if t.get("default") else "") + ")")
    if sc:
        parts.append(f"scale {sc['label']}, a higher grade is {sc['higher']}"
                     + ("; τ is on the reflected grade" if sc.get("reflected") else ""))
        if sc.get("binary"):
            parts.append("a two-point scale: one operating point, not a frontier")
    return "Measured with " + "; ".join(parts) + "."


def cap_section(runs: Sequence[Run], judge: str) -> dict[str, Any]:
    sets, failed = {}, None
    for r in of_kind(runs, "cap"):
        if (bad := _unusable(r, judge)) is not None:
            failed = bad
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
            sets[s] = {"source": _src(r, judge), "overall": {"value": ov.get("value"), "ci": ov.get("ci"),
                                                              "n": ov.get("n")}, "conditions": conds}
    if sets:
        return {"measured": True, "sets": sets}
    return failed or _absent("cap", judge)


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
                        "null_p95": null.get("p95"),
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
    """World and loop results of ``judge`` (``attributed``: a run of another judge is not shown), read
    generically: the judge's block (``judges[<judge>]``) or the whole result's numbers, each with its
    path (intervals are the ``*_ci`` / ``ci`` entries beside them)."""
    hits = [r for r in of_kind(runs, kind) if attributed(r, judge)]
    if not hits:
        return _absent(kind, judge)
    r = hits[-1]
    if (bad := _unusable(r, judge)) is not None:
        return bad
    block = (r.data.get("judges") or {}).get(judge, r.data)
    nums = [(p, v) for p, v in _numbers({k: v for k, v in block.items() if k not in ("run_id", "created_at")})]
    out = {"measured": True, "source": _src(r, judge), "numbers": dict(nums[:60])}
    if kind == "loop":
        out["judge2"] = r.data.get("judge2")
        out["regulators"] = {name: {"net": g.get("net"), "ci": g.get("net_ci")}
                             for name, g in (r.data.get("regulators") or {}).items() if isinstance(g, dict)}
    if kind == "world":
        def boot(a: dict[str, Any], m: str) -> dict[str, Any]:     # the units the interval resamples, as recorded
            b = a.get("bootstrap") if isinstance(a.get("bootstrap"), dict) else {}
            n = b.get("n") if isinstance(b.get("n"), dict) else {}
            return {"n": n.get(m), "unit": b.get("unit")}
        out["arms"] = {arm: {m: {"value": a.get(m), "ci": (a.get("ci") or {}).get(m), **boot(a, m)}
                             for m in ("recall", "specificity") if a.get(m) is not None}
                       for arm, a in (block.get("arms") or {}).items() if isinstance(a, dict)}
        out["paired"] = [{"a": p.get("a"), "b": p.get("b"), "metric": p.get("metric"), "gain": p.get("gain"),
                          "ci": p.get("ci"), "n": (p.get("bootstrap") or {}).get("n"),
                          "unit": (p.get("bootstrap") or {}).get("unit")}
                         for p in r.data.get("paired") or [] if isinstance(p, dict) and p.get("judge") == judge
                         and p.get("matcher") is None and p.get("metric") in ("recall", "specificity")]
    return out


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


LOW_R = 0.5
"""judgeaudit's reading of Table 1's "R low" column (construct-validity.txt): R's interval lies wholly
below 0.5, the judge misses more than half of the construct changes on that axis (§5.1 reads the field's
R = 0.319 at S = 0.945 as the insensitive cell)."""
SURFACE_RECOVERABLE = 0.30
"""judgeaudit's reading of the a_imp scale (§5.4): per-item a_imp of 0.07–0.30 "reads as healthy
headroom", so a set is called recoverable from surface form only when a_imp's interval lies wholly
above 0.30 (and it clears its permutation null); below that, surface form reproduces part of it when its
interval lies above 0 and it clears its null (``_vp_recovery``)."""
ALPHA = 0.05
"""The level of the permutation tests a sentence rests on beside its 95% interval (§5.2: the gap's
bootstrap interval excludes zero and its axis-label permutation null gives p < 0.05)."""
EXTENSION = "judgeaudit's own extension, not a paper quantity"
EXTENSIONS = "judgeaudit's own extensions, not paper quantities"


def _validity_verdict(v: dict[str, Any], j: str) -> list[str]:
    m, out = v["metrics"], []
    S, R = m["S"], m["R"]
    if S["value"] is None:
        return [f"{j} has no invariance measured (S undefined: no usable control edits), so its R is not read "
                "(Corollary 1)."]
    if v.get("single_point"):
        out.append(f"{j} gives a single grade: a constant instrument at the corner (S, R) = (1, 0) of Proposition 2, "
                   "which does not read its input.")
        return out
    if not v["interpretable"]:
        out.append(f"{j} is uninterpretable on construct sensitivity: no operating point that moves its verdict "
                   f"reaches invariance S ≥ {v['s_floor']} (best S = {with_ci(S['value'], S['ci'])}), so its R is "
                   "not read as sensitivity.")
        return out
    if R["value"] is None:
        return [f"At matched invariance (S = {with_ci(S['value'], S['ci'])} ≥ {v['s_floor']}), {j} has no R "
                "(no usable construct edits)."]
    out.append(f"At matched invariance (S = {with_ci(S['value'], S['ci'])} ≥ {v['s_floor']}), {j} moves on "
               f"R = {with_ci(R['value'], R['ci'])} of construct-changing edits.")
    gap, sc, st = m["gap"], m["R_scope"], m["R_strength"]
    p = v.get("gap_perm_p")
    if gap["value"] is not None and excludes_zero(gap["ci"]) and p is not None and p >= ALPHA:
        out.append(f"The scope − strength gap ({with_ci(gap['value'], gap['ci'], sign=True)}) is not established: "
                   f"its interval excludes zero but its axis-label permutation p = {p_value(p)}.")
    elif sc["value"] is not None and st["value"] is not None and excludes_zero(gap["ci"]):
        both = (f"the gap's interval excludes zero and its axis-label permutation p = {p_value(p)}" if p is not None
                else "the gap's interval excludes zero; no permutation null was run")
        low, high, name = (st, sc, "strength") if gap["value"] > 0 else (sc, st, "scope")
        other = "scope" if name == "strength" else "strength"
        if below(low["ci"], LOW_R):
            out.append(f"It is insensitive on {name} at matched invariance (R_{name} {with_ci(low['value'], low['ci'])}"
                       f", below {LOW_R} with its interval, vs R_{other} {with_ci(high['value'], high['ci'])}; "
                       f"{both}).")
        else:
            out.append(f"It moves less on {name} than on {other} (R_{name} {with_ci(low['value'], low['ci'])} vs "
                       f"{with_ci(high['value'], high['ci'])}; {both}).")
    rp, ww = m["R_plus"], m["wrong_way_rate"]
    if above(ww["ci"], rp["ci"]):
        out.append(f"Most of its construct flips go the wrong way (wrong-way rate {with_ci(ww['value'], ww['ci'])}, "
                   f"its interval above R⁺'s {with_ci(rp['value'], rp['ci'])}; both are {EXTENSIONS}).")
    if v.get("direction_source") != "human":
        out.append("Its construct directions are author-intended and not human-verified: every construct edit is "
                   "assumed to change the correct verdict.")
    return out


def _vp_recovery(row: dict[str, Any]) -> str | None:
    """The sentence on how much of a label set surface form recovers (§5.4). Recovery is claimed only
    when a_imp clears its label-permutation null *and* its bootstrap interval lies above 0; where the two
    disagree the sentence says so and claims nothing; neither: no sentence."""
    if row["a_imp"] is None:
        return None
    a = with_ci(row["a_imp"], row["a_imp_ci"])
    what = "length alone" if row["a_imp_member"] == "length_only" else "surface form alone"
    member = "" if row["a_imp_member"] == "length_only" else f"{row['a_imp_member']}: "
    ci = row["a_imp_ci"] if ci_ok(row["a_imp_ci"]) else None
    null, interval_above = bool(row["clears_null"]), ci is not None and float(ci[0]) > 0
    if null and interval_above:
        if float(ci[0]) > SURFACE_RECOVERABLE:
            return (f"Its validation set {row['set']} ({row['mode']}) is recoverable from {what} "
                    f"({member}a_imp {a}, above {SURFACE_RECOVERABLE} with its interval and above its "
                    "permutation null).")
        return (f"{what[0].upper()}{what[1:]} reproduces part of its validation set {row['set']} "
                f"({row['mode']}) ({member}a_imp {a}, above its permutation null and its interval above 0; "
                f"§5.4 reads a_imp up to {SURFACE_RECOVERABLE} as headroom).")
    if null == interval_above or ci is None:
        return None
    p = f" (p = {p_value(row.get('null_p'))})" if row.get("null_p") is not None else ""
    why = (f"clears its permutation null{p} but its 95% interval includes 0" if null
           else "its 95% interval excludes 0 but it does not clear its permutation null")
    return (f"Recovery of {row['set']} ({row['mode']}) from {what} is not established: {member}a_imp {a} {why}, "
            "and §5.4 reads a_imp against both.")


def _cap_verdict(name: str, sb: dict[str, Any]) -> str | None:
    """The weakest direct-coverage cell, named only when its interval lies wholly below another direct
    cell's (cells of other coverage statuses are not compared)."""
    cells = {c: e for c, e in sb["conditions"].items()
             if e.get("coverage") == "direct" and e.get("value") is not None and ci_ok(e.get("ci"))}
    if len(cells) < 2:
        return None
    c = min(cells, key=lambda k: cells[k]["value"])
    above_it = [k for k in cells if k != c and above(cells[k]["ci"], cells[c]["ci"])]
    if not above_it:
        return (f"On {name} no direct-coverage CAP condition is distinguishably weakest (the intervals of "
                f"{', '.join(sorted(cells))} overlap the lowest, {c}).")
    e = cells[c]
    return (f"On {name} its CAP profile is weakest on {c} ({with_ci(e['value'], e['ci'])}, n = {e['n']}; below "
            f"{', '.join(sorted(above_it))} with intervals; direct-coverage cells compared).")


def verdict(card: dict[str, Any]) -> list[str]:
    """The verdict paragraph, one sentence per rule that applies; each sentence is true of its numbers
    with their intervals."""
    s, j, out = card["sections"], card["judge"], []
    if s["validity"]["measured"]:
        out += _validity_verdict(s["validity"], j)
    for row in s["vp"].get("rows", []) if s["vp"]["measured"] else []:
        if (line := _vp_recovery(row)) is not None:
            out.append(line)
        if row["vp"] is not None and row["resolvable"] is False:
            out.append(f"The ruler {row['set']} ({row['mode']}) cannot resolve a judge from its impoverished "
                       f"baseline (VP {row['vp']:+.3f}).")
    if s["cap"]["measured"]:
        out += [x for name, sb in s["cap"]["sets"].items() if (x := _cap_verdict(name, sb))]
    for k in SECTIONS:
        for why in dict.fromkeys(w for src in section_sources(s[k]) for w in src.get("inputs_changed") or []):
            out.append(f"The {k} run's input changed after it ran ({why}): its numbers are of the files it read then.")
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

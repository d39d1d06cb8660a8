"""One judge's validity card, gathered from existing run results (never recomputed).

Sections: the validity profile — (S, R) at matched invariance with per-axis R, R⁺ and the
wrong-way rate; the CAP profile (per condition, strict vs consistency); the validation power of
the label sets in the runs given (the ruler); the world gap and loop safety (when such results are
present); the §6.1 checklist; the ledger status. Each section states its source runs, its n and
its intervals, or "not measured — run: <command>". The verdict paragraph is produced by the rules
in ``verdict`` below, from the numbers in the sections only.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judgeaudit.analyses.validity.schema import Estimate
from judgeaudit.analyses.world.schema import WorldAnalysis
from judgeaudit.card.checklist import checklist
from judgeaudit.card.schema import (SCHEMA_VERSION, SECTIONS, CapSet, CardFile, Lead, LoopSection, Unmeasured,
                                    ValiditySection, Value, VpRow, WorldSection)
from judgeaudit.card.numbers import above, below, ci_ok, excludes_zero, p_value, with_ci
from judgeaudit.card.sources import Run, of_kind, one_run
from judgeaudit.card.defaults import DEFAULT_COMMANDS
from judgeaudit.errors import InputError
from judgeaudit.runinfo import utc_now

COMMANDS = {
    **{k: f"{c} (or: judgeaudit card --judge {{judge}} --run-missing --out DIR)" for k, c in DEFAULT_COMMANDS.items()},
    "ledger": "judgeaudit card --judge {judge} --from DIR --ledger FILE --out DIR",
}
VALIDITY_KEYS = ("S", "R", "R_scope", "R_strength", "gap", "R_plus", "wrong_way_rate", "control_flip_rate")


RECORD_TABLES = ("verdicts.parquet", "decisions.parquet", "units.parquet")
"""The per-call tables of a run folder that may record a judge's model family (``Verdict.family``)."""


def recorded_family(r: Run, judge: str) -> tuple[str | None, str]:
    """The model family run ``r`` recorded for ``judge`` and where it was read: the judge's block in
    ``result.json`` (``family``), else the ``family`` column of the run's per-call tables (rows of
    ``judge_id`` or ``judge`` = ``judge``; distinct values joined by ", "); ``(None, "not recorded")``
    when the run records none. The spec string is never re-read: the backend resolved the family
    when it ran (a ``family=`` option, a replay file's column, the embedded model), and the card
    shows what it resolved."""
    block = r.judged.block(judge)
    if block is not None and block.family:
        return block.family, "result.json"
    import pandas as pd
    import pyarrow.parquet as pq

    for name in RECORD_TABLES:
        f = r.path.parent / name
        if not f.is_file():
            continue
        try:
            cols = set(pq.read_schema(f).names)
            who = next((c for c in ("judge_id", "judge") if c in cols), None)
            if who is None or "family" not in cols:
                continue
            df = pd.read_parquet(f, columns=[who, "family"])
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read this run table ({e})", path=f) from None
        fams = df.loc[df[who].astype(str) == judge, "family"].dropna().astype(str)
        if len(fams):
            return ", ".join(sorted(set(fams))), name
    return None, "not recorded"


def _src(r: Run, judge: str | None = None) -> dict[str, Any]:
    out = {"path": str(r.path.resolve()), "run_id": r.run_id, "created_at": r.created_at}
    if judge is not None:
        fam, where = recorded_family(r, judge)
        out |= {"judge": judge, "family": fam, "family_from": where}
    if r.stamp.inputs is not None:
        from judgeaudit.runinfo import changed_inputs

        out["inputs"] = r.stamp.inputs.model_dump(mode="json", exclude_unset=True)
        out["inputs_changed"] = changed_inputs(r.stamp)   # flagged on the card: the run read other files
    return out


def _src_once(memo: dict[int, dict[str, Any]], r: Run, judge: str | None = None) -> dict[str, Any]:
    """``_src(r, judge)`` made once per run of a section (whose sets share the run: its inputs hashed once), a
    copy for each set."""
    if id(r) not in memo:
        memo[id(r)] = _src(r, judge)
    return copy.deepcopy(memo[id(r)])


def card_families(card: dict[str, Any] | CardFile) -> list[str]:
    """The model families the card's runs recorded for its judge (each once, in section order)."""
    return CardFile.of(card).families()


def attributed(r: Run, judge: str) -> bool:
    """Run ``r`` was made by ``judge``: it is a key of the run's ``judges`` block, or the run's
    ``judge`` (a loop's audited judge). A run naming no judge is nobody's."""
    return r.judged.block(judge) is not None or r.judged.judge == judge


def _absent(kind: str, judge: str) -> dict[str, Any]:
    return {"measured": False, "not_measured": f"not measured — run: {COMMANDS[kind].format(judge=judge)}"}


def _unusable_line(r: Run, judge: str) -> str | None:
    """The line saying ``judge`` was asked in run ``r`` and gave no usable verdict (the run's ``calls`` summary),
    else None."""
    c = r.judged.calls_of(judge)
    if c is None or not c.calls or c.usable:
        return None
    why = f"; first: {c.reasons[0]}" if c.reasons else ""
    return (f"run, but {judge} gave no usable verdict in {r.path.parent} ({c.calls} calls: {c.failed_calls or 0} "
            f"failed, {c.parse_failures or 0} did not parse{why})")


def _unusable(r: Run, judge: str) -> dict[str, Any] | None:
    """The section's "not measured" entry when ``judge`` was asked in run ``r`` and gave no usable
    verdict (``_unusable_line``), else None."""
    line = _unusable_line(r, judge)
    return None if line is None else {"measured": False, "failed": True, "not_measured": line}


def _val(e: Estimate) -> dict[str, Any]:
    return {"value": e.value, "ci": None if e.ci is None else list(e.ci)}


def validity_section(runs: Sequence[Run], judge: str, chosen: Sequence[str | Path] = ()) -> dict[str, Any]:
    hits = [r for r in of_kind(runs, "validity") if judge in r.validity.judges]   # read through its type
    if not hits:
        return _absent("validity", judge)
    r = one_run(hits, f"validity runs of {judge}", chosen)
    if (bad := _unusable(r, judge)) is not None:
        return bad
    v = r.validity
    b = v.judges[judge]
    return {
        "measured": True, "source": _src(r, judge), "s_floor": v.s_floor,
        "direction_source": v.direction_source,
        "n": {"base_items": v.n_base, "construct_edits": b.n_construct, "control_edits": b.n_control},
        "bootstrap": {"unit": v.bootstrap_unit, "n": v.n_base},
        "interpretable": b.interpretable, "single_point": b.single_point, "tau": b.tau,
        "tau_in_bootstrap": v.tau_in_bootstrap,
        "metrics": {k: _val(v.estimate(judge, k)) for k in VALIDITY_KEYS},
        "gap_perm_p": b.gap_perm_p,
        "per_axis": {ax: {"R": _val(v.estimate(judge, f"R_{ax}")),
                          "R_plus": _val(v.directional(judge, ax, "R_plus")),
                          "wrong_way_rate": _val(v.directional(judge, ax, "wrong_way_rate"))}
                     for ax in ("scope", "strength")},
        "notes": list(b.notes),
        "template": b.template, "scale": b.scale,
    }


def instrument_line(t: dict[str, Any] | None, sc: dict[str, Any] | None) -> str | None:
    """The sentence naming the template ``t`` and scale ``sc`` a validity section was measured with (None: the run
    recorded neither)."""
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


def cap_section(runs: Sequence[Run], judge: str, chosen: Sequence[str | Path] = ()) -> dict[str, Any]:
    from judgeaudit.analyses.cap.schema import CapFile

    sets, failed = {}, None
    cap_runs = of_kind(runs, "cap")
    typed = {id(r): CapFile.of(r.data, path=r.path) for r in cap_runs}   # a key renamed: an error naming it
    by_set: dict[str, list[Run]] = {}
    for r in cap_runs:
        for s, sb in typed[id(r)].sets.items():
            if judge in sb.judges:
                by_set.setdefault(s, []).append(r)
    use = {s: one_run(h, f"CAP runs of {judge} on set {s}", chosen) for s, h in by_set.items()}
    sources: dict[int, dict[str, Any]] = {}
    for r in cap_runs:
        if (bad := _unusable(r, judge)) is not None:
            failed = bad
            continue
        for s, sb in typed[id(r)].sets.items():
            j = sb.judges.get(judge)
            if j is None or use.get(s) is not r:
                continue
            sets[s] = {"source": _src_once(sources, r, judge), "overall": j.overall.summary(condition=False),
                       "conditions": {c: e.summary() for c, e in j.conditions.items()}}
    if sets:
        return {"measured": True, "sets": sets}
    return failed or _absent("cap", judge)


def vp_section(runs: Sequence[Run], judge: str, chosen: Sequence[str | Path] = ()) -> dict[str, Any]:
    from judgeaudit.analyses.validation_power.schema import reader

    rows = []
    vp_runs = of_kind(runs, "vp")
    typed = {id(r): reader(r.data, path=r.path) for r in vp_runs}   # a key renamed or missing: an error naming it
    by_row: dict[tuple[str, str], list[Run]] = {}
    for r in vp_runs:
        for s, mode, row, _ in typed[id(r)].rows():
            if row.applicable:
                by_row.setdefault((s, mode), []).append(r)
    use = {k: one_run(h, f"validation-power runs of set {k[0]} ({k[1]})", chosen) for k, h in by_row.items()}
    bh = {id(r): _a_imp_p_bh(typed[id(r)]) for r in vp_runs}
    sources: dict[int, dict[str, Any]] = {}
    for r in vp_runs:
        for s, mode, mb, meta in typed[id(r)].rows():
            if mb.applicable and use[(s, mode)] is r:
                null = mb.a_imp_null
                unit = typed[id(r)].unit(mb)
                rows.append({"set": s, "mode": mode, "n": mb.n, "label_origin": meta.get("label_origin"),
                             "a_imp": mb.a_imp, "a_imp_ci": None if mb.a_imp_ci is None else list(mb.a_imp_ci),
                             "a_imp_member": mb.a_imp_member, "null_p": null.p_value if null else None,
                             "null_p_bh": bh[id(r)].get((s, mode)),
                             "null_p95": null.p95 if null else None,
                             "clears_null": null.clears_null if null else None, "a_hum": mb.a_hum,
                             "a_hum_ci": None if mb.a_hum_ci is None else list(mb.a_hum_ci), "vp": mb.vp,
                             "resolvable": mb.resolvable, "source": _src_once(sources, r),
                             **({"unit": unit.model_dump()} if unit is not None else {})})
    return {"measured": True, "rows": rows} if rows else _absent("vp", judge)


def _a_imp_p_bh(run: Any) -> dict[tuple[str, str], float | None]:
    """Per (set, mode) of a validation-power run (``VpRows``) the Benjamini–Hochberg-adjusted p of a_imp against
    its permutation null — the p its report's ceiling table prints and tests (``p (BH)``): the run's
    ``p_value_bh`` where recorded, else adjusted here across the run's applicable rows (the same
    family, ``ValidationPowerResult.a_imp_p_bh``)."""
    from judgeaudit.stats.tests import bh_adjust

    rows = [(s, mode, mb.a_imp_null) for s, mode, mb, _ in run.rows() if mb.applicable]
    if all(n is not None and "p_value_bh" in n.model_fields_set for *_, n in rows):
        return {(s, m): n.p_value_bh for s, m, n in rows}
    adj = bh_adjust([float("nan") if n is None or n.p_value is None else float(n.p_value) for *_, n in rows])
    return {(s, m): (None if np.isnan(a) else float(a)) for (s, m, _), a in zip(rows, adj, strict=True)}


def _numbers(x: Any, prefix: str = "") -> list[tuple[str, float]]:
    if isinstance(x, dict):
        return [n for k, v in x.items() for n in _numbers(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(x, int | float) and not isinstance(x, bool):
        return [(prefix, float(x))]
    return []


def generic_section(runs: Sequence[Run], judge: str, kind: str, chosen: Sequence[str | Path] = ()) -> dict[str, Any]:
    """World and loop results of ``judge`` (``attributed``: a run of another judge is not shown), read
    generically: the judge's block (``judges[<judge>]``) or the whole result's numbers, each with its
    path (intervals are the ``*_ci`` / ``ci`` entries beside them)."""
    hits = [r for r in of_kind(runs, kind) if attributed(r, judge)]
    if not hits:
        return _absent(kind, judge)
    r = one_run(hits, f"{kind} runs of {judge}", chosen)
    unusable = _unusable_line(r, judge)
    if unusable is not None and kind != "loop":
        return _unusable(r, judge)
    own = r.judged.block(judge)   # the judge's block, else the whole result
    block = r.data if own is None else own.model_dump(mode="json", exclude_unset=True)
    nums = [(p, v) for p, v in _numbers({k: v for k, v in block.items() if k not in ("run_id", "created_at")})]
    out = {"measured": True, "source": _src(r, judge), "numbers": dict(nums[:60])}
    if kind == "loop":
        from judgeaudit.loop.engine import NO_USABLE_REPORT
        from judgeaudit.loop.schema import LoopArms, LoopFile

        # a key renamed or missing: an error naming it (a versioned file is read whole, an earlier one for its arms)
        lp = (LoopFile if "schema_version" in r.data else LoopArms).of(r.data, path=r.path)
        out["judge2"] = lp.judge2
        # an arm whose every report vote failed or did not parse took no action: its net is not the judge's
        out["regulators"] = {name: ({"net": None, "ci": None, "status": NO_USABLE_REPORT} if not lp.usable(name)
                                    else {"net": g.net, "ci": None if g.net_ci is None else list(g.net_ci)})
                             for name, g in lp.regulators.items()}
        if (unit := lp.interval_unit) is not None:   # what every arm's interval resampled, as the run recorded it
            out["unit"] = unit.model_dump()
        if lp.identities is not None and judge in lp.identities:
            out["identity"] = lp.identities[judge].model_dump(mode="json")
        if unusable is not None:
            out["judge_unusable"] = unusable
    if kind == "world":
        out |= _world_rates(WorldAnalysis.of(r.data, path=r.path), judge)   # a key renamed or missing: an error naming it
    return out


def _world_rates(w: WorldAnalysis, judge: str) -> dict[str, Any]:
    """Recall and specificity of ``judge`` per arm, and their paired gains (no matcher), each with its interval
    and the units it resamples as recorded (what a gate's unit floor counts)."""
    def rate(arm: str, m: str) -> dict[str, Any]:
        e = w.estimate(judge, arm, m)
        boot = w.arm(judge, arm).bootstrap
        return {"value": e.value, "ci": None if e.ci is None else list(e.ci),
                "n": None if boot is None else e.unit.n, "unit": None if boot is None else e.unit.resampled}

    return {"arms": {arm: {m: rate(arm, m) for m in ("recall", "specificity") if getattr(a, m) is not None}
                     for arm, a in w.judges[judge].arms.items()},
            "paired": [{"a": g.a, "b": g.b, "metric": g.metric, "a_value": g.a_value, "b_value": g.b_value,
                        "gain": g.value, "ci": None if g.ci is None else list(g.ci), "n_pairs": g.n_pairs,
                        "pair_unit": g.pair_unit, "mcnemar_p": None if g.mcnemar is None else g.mcnemar.p,
                        "n": g.unit.n, "unit": g.unit.resampled}
                       for g in w.gains(judge) if g.metric in ("recall", "specificity")]}


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


def _validity_verdict(v: ValiditySection, j: str) -> list[str]:
    out = []

    def m(name: str) -> Value:
        return v.metrics.get(name) or Value(value=None, ci=None)

    S, R = m("S"), m("R")
    if S.value is None:
        return [f"{j} has no invariance measured (S undefined: no usable control edits), so its R is not read "
                "(Corollary 1)."]
    if v.single_point:
        out.append(f"{j} gives a single grade: a constant instrument at the corner (S, R) = (1, 0) of Proposition 2, "
                   "which does not read its input.")
        return out
    if not v.interpretable:
        out.append(f"{j} is uninterpretable on construct sensitivity: no operating point that moves its verdict "
                   f"reaches invariance S ≥ {v.s_floor} (best S = {with_ci(S.value, S.ci)}), so its R is "
                   "not read as sensitivity.")
        return out
    if R.value is None:
        return [f"At matched invariance (S = {with_ci(S.value, S.ci)} ≥ {v.s_floor}), {j} has no R "
                "(no usable construct edits)."]
    out.append(f"At matched invariance (S = {with_ci(S.value, S.ci)} ≥ {v.s_floor}), {j} moves on "
               f"R = {with_ci(R.value, R.ci)} of construct-changing edits.")
    gap, sc, st = m("gap"), m("R_scope"), m("R_strength")
    p = v.gap_perm_p
    if gap.value is not None and excludes_zero(gap.ci) and p is not None and p >= ALPHA:
        out.append(f"The scope − strength gap ({with_ci(gap.value, gap.ci, sign=True)}) is not established: "
                   f"its interval excludes zero but its axis-label permutation p = {p_value(p)}.")
    elif sc.value is not None and st.value is not None and excludes_zero(gap.ci):
        both = (f"the gap's interval excludes zero and its axis-label permutation p = {p_value(p)}" if p is not None
                else "the gap's interval excludes zero; no permutation null was run")
        low, high, name = (st, sc, "strength") if gap.value > 0 else (sc, st, "scope")
        other = "scope" if name == "strength" else "strength"
        if below(low.ci, LOW_R):
            out.append(f"It is insensitive on {name} at matched invariance (R_{name} {with_ci(low.value, low.ci)}"
                       f", below {LOW_R} with its interval, vs R_{other} {with_ci(high.value, high.ci)}; "
                       f"{both}).")
        else:
            out.append(f"It moves less on {name} than on {other} (R_{name} {with_ci(low.value, low.ci)} vs "
                       f"{with_ci(high.value, high.ci)}; {both}).")
    rp, ww = m("R_plus"), m("wrong_way_rate")
    if above(ww.ci, rp.ci):
        out.append(f"Most of its construct flips go the wrong way (wrong-way rate {with_ci(ww.value, ww.ci)}, "
                   f"its interval above R⁺'s {with_ci(rp.value, rp.ci)}; both are {EXTENSIONS}).")
    if v.direction_source != "human":
        out.append("Its construct directions are author-intended and not human-verified: every construct edit is "
                   "assumed to change the correct verdict.")
    return out


def _vp_recovery(row: VpRow) -> str | None:
    """The sentence on how much of a label set surface form recovers (§5.4). Recovery is claimed only
    when a_imp is above its label-permutation null — its Benjamini–Hochberg-adjusted p across the run's
    rows at most ``ALPHA``, the p the validation-power report prints — *and* its bootstrap interval lies
    above 0; where the two disagree the sentence says so and claims nothing; neither: no sentence."""
    if row.a_imp is None:
        return None
    a = with_ci(row.a_imp, row.a_imp_ci)
    what = "length alone" if row.a_imp_member == "length_only" else "surface form alone"
    member = "" if row.a_imp_member == "length_only" else f"{row.a_imp_member}: "
    ci = row.a_imp_ci if ci_ok(row.a_imp_ci) else None
    p_bh = row.null_p_bh
    # a permutation p counted with the observed statistic among the permutations is valid at p ≤ α
    null, interval_above = p_bh is not None and float(p_bh) <= ALPHA, ci is not None and float(ci[0]) > 0
    p = f"Benjamini–Hochberg-adjusted p = {p_value(p_bh)}"
    if null and interval_above:
        if float(ci[0]) > SURFACE_RECOVERABLE:
            return (f"Its validation set {row.set} ({row.mode}) is recoverable from {what} "
                    f"({member}a_imp {a}, above {SURFACE_RECOVERABLE} with its interval and above its "
                    f"permutation null, {p}).")
        return (f"{what[0].upper()}{what[1:]} reproduces part of its validation set {row.set} "
                f"({row.mode}) ({member}a_imp {a}, above its permutation null ({p}) and its interval above 0; "
                f"§5.4 reads a_imp up to {SURFACE_RECOVERABLE} as headroom).")
    if null == interval_above or ci is None:
        return None
    why = (f"is above its permutation null ({p}) but its 95% interval includes 0" if null
           else ("its 95% interval excludes 0 but it is not above its permutation null at the rows' false "
                 f"discovery rate ({p})" if p_bh is not None else
                 "its 95% interval excludes 0 but no permutation null was run"))
    return (f"Recovery of {row.set} ({row.mode}) from {what} is not established: {member}a_imp {a} {why}, "
            "and §5.4 reads a_imp against both.")


def _cap_verdict(name: str, sb: CapSet) -> str | None:
    """The weakest direct-coverage cell, named only when its interval lies wholly below another direct
    cell's (cells of other coverage statuses are not compared)."""
    cells = {c: e for c, e in sb.conditions.items() if e.coverage == "direct" and e.value is not None and ci_ok(e.ci)}
    if len(cells) < 2:
        return None
    c = min(cells, key=lambda k: cells[k].value)
    above_it = [k for k in cells if k != c and above(cells[k].ci, cells[c].ci)]
    if not above_it:
        return (f"On {name} no direct-coverage CAP condition is distinguishably weakest (the intervals of "
                f"{', '.join(sorted(cells))} overlap the lowest, {c}).")
    e = cells[c]
    return (f"On {name} its CAP profile is weakest on {c} ({with_ci(e.value, e.ci)}, n = {e.n}; below "
            f"{', '.join(sorted(above_it))} with intervals; direct-coverage cells compared).")


def _world_verdict(w: WorldSection) -> list[str]:
    """One sentence per paired arm difference of recall and specificity (b − a on the units both arms
    scored): a direction is claimed only when its interval excludes zero *and* the exact McNemar test
    on its stratum's paired table gives p < ``ALPHA``; where they disagree the sentence says so."""
    out = []
    for p in w.paired:
        g, ci, mp = p.gain, p.ci, p.mcnemar_p
        if g is None or not ci_ok(ci):
            continue
        d = f"{p.b} − {p.a} {p.metric} {with_ci(g, ci, sign=True)} on {p.n_pairs} paired {p.pair_unit or 'unit'}s"
        mc = "no McNemar test" if mp is None else f"exact McNemar p = {p_value(mp)}"
        sig = mp is not None and float(mp) < ALPHA
        if excludes_zero(ci) and sig:
            out.append(f"In the world run its {p.metric} is {'higher' if g > 0 else 'lower'} when {p.b} than "
                       f"when {p.a} ({d}; {mc}).")
        elif excludes_zero(ci) or sig:
            why = "its interval excludes zero" if excludes_zero(ci) else "its interval includes zero"
            out.append(f"In the world run the {p.b} − {p.a} difference in {p.metric} is not established "
                       f"({d}; {why} and the {mc}).")
        else:
            out.append(f"In the world run its {p.metric} is not distinguishably different between {p.b} and "
                       f"{p.a} ({d}; {mc}).")
    return out


def _loop_verdict(lp: LoopSection, j: str) -> list[str]:  # noqa: ARG001
    """Per loop arm, the net (fixed − broken over units) when its interval says which way it goes;
    otherwise that it is not distinguishable from zero; an arm without a usable report, said so."""
    out = []
    if lp.judge_unusable:
        out.append(f"In the loop run, {lp.judge_unusable[len('run, but '):]}; the arms it reports to are not "
                   "read.")
    for name, g in lp.regulators.items():
        net, ci = g.net, g.ci
        if net is None or not ci_ok(ci):
            continue
        n = f"net {with_ci(net, ci, sign=True)} of checked units, fixed − broken"
        if float(ci[0]) > 0:
            out.append(f"In the loop, arm {name} fixes more than it breaks ({n}).")
        elif float(ci[1]) < 0:
            out.append(f"In the loop, arm {name} breaks more than it fixes ({n}).")
        else:
            out.append(f"In the loop, arm {name}'s net effect is not distinguishable from zero ({n}).")
    return out


JUDGE_FINDINGS = ("validity", "cap", "world", "loop")
"""The sections whose sentences are about the judge itself, in the order the card leads with them."""


def _findings(card: CardFile, k: str) -> list[str]:
    """The sentences of section ``k`` about the judge (each true of its numbers with their intervals); a
    section measured where no rule fires says where its numbers are; one not measured, or run with no
    usable verdict, says so."""
    sec, j = getattr(card.sections, k), card.judge
    if isinstance(sec, Unmeasured):
        return [sec.not_measured[0].upper() + sec.not_measured[1:] + "."] if sec.failed else ["Not measured."]
    out = {"validity": lambda: _validity_verdict(sec, j),
           "cap": lambda: [x for name, sb in sec.sets.items() if (x := _cap_verdict(name, sb))],
           "world": lambda: _world_verdict(sec), "loop": lambda: _loop_verdict(sec, j)}[k]()
    if out:
        return out
    if k == "world":
        return ["In the world run no paired arm difference was recorded (no sentence on a direction); each "
                "arm's rate and interval are in its section below."]
    return ["Measured; no sentence of the card's rules applies to its numbers (they are in its section below)."]


def _label_sets(card: CardFile) -> list[str]:
    """The sentences on the label sets the judge is validated against (the ruler, §5.4): about the data,
    not the judge."""
    vp, out = card.measured("vp"), []
    for row in vp.rows if vp is not None else []:
        if (line := _vp_recovery(row)) is not None:
            out.append(line)
        if row.vp is not None and row.resolvable is False:
            out.append(f"The ruler {row.set} ({row.mode}) cannot resolve a judge from its impoverished "
                       f"baseline (VP {row.vp:+.3f}).")
    return out


def lead(card: CardFile | dict[str, Any]) -> dict[str, Any]:
    """What the card opens on: ``judge`` — per section of ``JUDGE_FINDINGS`` (then calibrate and migrate
    when present) its sentences about the judge; ``label_sets`` — the sentences on the label sets it is
    validated against; ``status`` — changed inputs, a retirement, the checklist's count and what was not
    measured. A card's dict is read as ``CardFile`` (a key not as a card writes it: an error naming it)."""
    card = CardFile.of(card)
    j = card.judge
    judge = [[k, _findings(card, k)] for k in JUDGE_FINDINGS]
    if (cal := card.measured("calibrate")) is not None:
        from judgeaudit.card.calibrate import calibrate_verdict

        judge.append(["calibrate", calibrate_verdict(cal)])
    if (mig := card.measured("migrate")) is not None:
        from judgeaudit.card.migrate import migrate_verdict

        judge.append(["migrate", migrate_verdict(mig)])
    status = []
    for k in SECTIONS:
        for why in dict.fromkeys(w for src in card.sources(k) for w in src.inputs_changed or []):
            status.append(f"The {k} run's input changed after it ran ({why}): its numbers are of the files it read "
                          "then.")
    if card.retirement:
        status.append(card.retirement[0].upper() + card.retirement[1:] + ".")
    ok = sum(i.ok for i in card.sections.checklist.items)
    status.append(f"§6.1 checklist: {ok} of 6 items met.")
    unmeasured = [(k, getattr(card.sections, k)) for k in SECTIONS]
    failed = [k for k, sec in unmeasured if isinstance(sec, Unmeasured) and sec.failed]
    absent = [k for k, sec in unmeasured if isinstance(sec, Unmeasured) and not sec.failed]
    if failed:
        status.append(f"Run, but {j} gave no usable verdict: " + ", ".join(failed) + ".")
    if absent:
        status.append("Not measured: " + ", ".join(absent) + ".")
    return {"judge": judge, "label_sets": _label_sets(card), "status": status}


def verdict(card: CardFile | dict[str, Any], parts: Lead | dict[str, Any] | None = None) -> list[str]:
    """The verdict paragraph, one sentence per rule that applies, each true of its numbers with their
    intervals: the judge's findings (of the sections measured), the label sets', then the status (``lead``)."""
    card = CardFile.of(card)
    parts = Lead.model_validate(parts if parts is not None else lead(card))
    return ([x for k, xs in parts.findings() or [] if card.measured(k) is not None for x in xs] + parts.label_sets
            + parts.status)


def build_card(judge: str, runs: Sequence[Run], *, from_dirs: Sequence[str | Path] = (),
               ledger: str | Path | None = None, notes: dict[str, str] | None = None,
               chosen: Sequence[str | Path] = ()) -> CardFile:
    """The card of ``judge`` (``CardFile``: what card.json holds); ``notes`` replaces the "not measured" line of a
    section that stays unmeasured (e.g. why its default run was not made). A section measured by several runs
    reads the one in ``chosen`` (``--run``); else ``InputError`` lists them (``one_run``)."""
    for c in chosen:
        if not any(Path(c).resolve() in (r.path.resolve(), r.path.parent.resolve()) for r in runs):
            raise InputError("no run under the folders given is here", path=c, field="--run")
    items = checklist(runs, judge)
    sections = {
        "validity": validity_section(runs, judge, chosen),
        "cap": cap_section(runs, judge, chosen),
        "vp": vp_section(runs, judge, chosen),
        "world": generic_section(runs, judge, "world", chosen),
        "loop": generic_section(runs, judge, "loop", chosen),
        "checklist": {"measured": True, "items": [i.to_dict() for i in items]},
        "ledger": ledger_section(ledger, from_dirs, judge),
    }
    from judgeaudit.card.calibrate import calibrate_section

    if (cal := calibrate_section(runs, judge, _src, chosen)) is not None:   # shown only when a calibrate run was given
        sections["calibrate"] = cal
    from judgeaudit.card.migrate import migrate_section, retirement_line

    if (mig := migrate_section(runs, judge, _src, chosen)) is not None:   # shown only when a migrate run names the judge
        sections["migrate"] = mig
    card = {"schema_version": SCHEMA_VERSION, "judge": judge, "generated_at": utc_now(),
            "from": [str(d) for d in from_dirs], "sections": sections}
    if (line := retirement_line(runs, judge)) is not None:
        card["retirement"] = line
    if chosen:
        card["chosen"] = [str(Path(c).resolve()) for c in chosen]
    draft = CardFile.of({**card, "verdict": []})   # its sentences read the sections typed
    if notes := {k: text for k, text in (notes or {}).items() if isinstance(getattr(draft.sections, k), Unmeasured)}:
        sections |= {k: {**sections[k], "not_measured": text} for k, text in notes.items()}
        draft = CardFile.of({**card, "verdict": []})
    parts = lead(draft)
    return CardFile.of({**card, "lead": parts, "verdict": verdict(draft, parts)})

"""The audit quantities of a migration: each judge's own runs (validity, CAP, world) compared new − old with
card diff's paired bootstrap (``card.paired``), each quantity tested against a margin.

* **validity** — S and R, each judge at its own matched-invariance point, τ re-selected in every paired resample
  (``paired.compare_validity``): non-inferiority at −margin (a new judge more invariant or more sensitive is no
  loss); R_scope, R_strength, the gap, R⁺ and the wrong-way rate descriptive;
* **CAP** — every condition's cell and the set's overall value (Σ num / Σ den over the set's pairs, as the CAP
  card reads it; ``paired.cap_units``) per set both judges were run on: a two-sided TOST within ±margin (a CAP
  condition is what the judge's verdicts rest on; a new judge far off it in either direction grades something
  else); the strict and consistency readings descriptive. CAP grades pairs by preference, with no threshold;
* **world** — each judge's world gain, the paired difference of its recall and of its specificity between every
  arm and the run's first arm (e.g. informed − blind; ``stats.paired`` metrics over the run's clusters), and new −
  old of that gain, the two runs resampled on the same clusters: a two-sided TOST within ±margin.

Each quantity's intervals come from one set of resamples: the 95% interval is reported, the 90% interval is the
TOST's (α = 0.05 each side). Paired over the units both runs share; two runs that share some units but fewer than
``card.diff.MIN_SHARED`` give descriptive rows (a bootstrap over a handful of units has no useful width).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.migrate import Quantity, audit_quantity
from judgeaudit.card.diff import MIN_SHARED
from judgeaudit.card.paired import Compared, Frontier, Units, compare, compare_validity, world_units
from judgeaudit.errors import InputError

AUDITED = {"validity.S": "S (invariance on construct-preserving edits)",
           "validity.R": "R (sensitivity on construct-changing edits)"}
WORLD_METRICS = ("recall", "specificity")


def _quantities(c90: dict[str, Compared], c95: dict[str, Compared], label: dict[str, str],
                margin: dict[str, float | None], *, two_sided: bool) -> list[Quantity]:
    out = []
    for name, c in c95.items():
        few = 0 < c.n_shared < MIN_SHARED
        how = c.how + (f"; only {c.n_shared} shared {c.unit}s (fewer than {MIN_SHARED}): descriptive" if few else "")
        out.append(audit_quantity(name, f"{label.get(name, name)}, new − old", c.diff, c90[name].ci, c.ci,
                                  margin=None if few else margin.get(name), n=c.n_shared or min(c.n_a, c.n_b),
                                  unit=c.unit, definition=how, two_sided=two_sided))
    return out


def validity_audits(fa: Frontier, fb: Frontier, *, margin: float, n_boot: int, seed: int) -> list[Quantity]:
    """S and R of two validity runs (new − old), each judge at its own matched point, non-inferiority at
    ``margin``; the other validity statistics descriptive (module docstring)."""
    c90 = compare_validity(fa, fb, n_boot=n_boot, seed=seed, level=0.90)
    c95 = compare_validity(fa, fb, n_boot=n_boot, seed=seed, level=0.95)
    return _quantities(c90, c95, AUDITED, {q: margin for q in AUDITED}, two_sided=False)


def cap_audits(old: Units, new: Units, *, margin: float, n_boot: int, seed: int) -> list[Quantity]:
    """Every CAP cell both judges' units of one set carry (``paired.cap_units``), new − old: the conditions and
    the overall value with a two-sided TOST at ``margin``, strict and consistency descriptive."""
    c90 = compare(old, new, n_boot=n_boot, seed=seed, level=0.90)
    c95 = compare(old, new, n_boot=n_boot, seed=seed, level=0.95)
    tested = {q: margin for q in c95 if not q.endswith((".strict", ".consistency"))}
    label = {q: f"CAP {q.split('.', 2)[1]}: {q.split('.', 2)[2]}" for q in c95}
    return _quantities(c90, c95, label, tested, two_sided=True)


def world_gain_units(units: Units, arms: Sequence[str], metrics: Sequence[str] = WORLD_METRICS) -> Units:
    """``units`` (``paired.world_units``) with one statistic per arm after the first and metric:
    ``world.gain.<arm>.<metric>`` = metric(arm) − metric(first arm), on the same summed counts."""
    stats = {}
    for b in arms[1:]:
        for m in metrics:
            fa, fb = units.stats.get(f"world.{arms[0]}.{m}"), units.stats.get(f"world.{b}.{m}")
            if fa is not None and fb is not None:
                stats[f"world.gain.{b}.{m}"] = (lambda fa_, fb_: lambda x: fb_(x) - fa_(x))(fa, fb)
    return Units(units.unit, units.ids, units.counts, stats)


def world_audits(old: Units, new: Units, arms: Sequence[str], *, margin: float, n_boot: int,
                 seed: int) -> list[Quantity]:
    """Each judge's world gains (every arm against the first, in recall and specificity), new − old, paired over
    the clusters both world runs share, with a two-sided TOST at ``margin``."""
    go, gn = world_gain_units(old, arms), world_gain_units(new, arms)
    c90 = compare(go, gn, n_boot=n_boot, seed=seed, level=0.90)
    c95 = compare(go, gn, n_boot=n_boot, seed=seed, level=0.95)
    label = {q: f"world gain {q.split('.')[2]} − {arms[0]} in {q.split('.')[3]}" for q in c95}
    return _quantities(c90, c95, label, {q: margin for q in c95}, two_sided=True)


# --- the runs each judge's audits read -------------------------------------------------------------------


@dataclass
class JudgeRuns:
    """One judge's audited runs: its id in them, the validity frontier, CAP units per set, world units and arms,
    and what each run recorded (``sources``: path, run id, the family, scale and template the run recorded)."""

    judge: str
    validity: Frontier | None = None
    cap: dict[str, Units] = field(default_factory=dict)
    world: tuple[Units, list[str]] | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)


def recorded(run: Any, judge: str, kind: str, *, block: dict[str, Any] | None = None,
             units: tuple[str, int] | None = None) -> dict[str, Any]:
    """What ``run`` (a ``card.sources.Run``) recorded about ``judge`` (its block in ``result.json``, or ``block``: a
    CAP set's): the family, scale and template it answered with, and the units its per-unit table holds. Never
    re-derived from a judge spec."""
    from judgeaudit.card.build import recorded_family

    if block is None:
        own = run.judged.block(judge)
        block = {} if own is None else own.model_dump(mode="json", exclude_unset=True)
    fam, where = recorded_family(run, judge)
    out = {"kind": kind, "path": str(run.path.parent), "run_id": run.run_id, "judge": judge, "family": fam,
           "family_from": where}
    for k in ("scale", "template", "template_sha256", "model"):
        if block.get(k) is not None:
            out[k] = block[k]
    if units is not None:
        out["units"] = {"unit": units[0], "n": units[1]}
    return out


def _world(folder: Path, data: dict[str, Any], judge: str) -> tuple[Units, list[str]] | None:
    f = folder / "decisions.parquet"
    if not f.is_file():
        return None
    try:
        dec = pd.read_parquet(f)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read this run table ({e})", path=f) from None
    from judgeaudit.analyses.world.schema import WorldAnalysis

    arms = WorldAnalysis.of(data, path=folder / "result.json").arms   # a key renamed: an error naming it
    return world_units(dec, judge), [str(a) for a in arms or dict.fromkeys(dec["arm"])]


def runs_of(runs: Sequence[Any], judge: str, field_name: str) -> JudgeRuns:
    """``judge``'s validity, CAP and world runs among ``runs`` (``card.sources.collect``), one per kind (per CAP
    set), read from their folders' per-unit tables."""
    from judgeaudit.analyses.cap.schema import CapFile
    from judgeaudit.analyses.validity.schema import ValidityFile
    from judgeaudit.card.build import attributed
    from judgeaudit.card.paired import cap_units, validity_frontier_from
    from judgeaudit.card.sources import of_kind, one_run

    out = JudgeRuns(judge)
    hits = [r for r in of_kind(runs, "validity") if judge in ValidityFile.of(r.data, path=r.path).judges]
    if hits:
        r = one_run(hits, f"validity runs of {judge}")
        f = validity_frontier_from(r.path.parent, judge)
        if isinstance(f, str):
            raise InputError(f, field=field_name)
        out.validity = f
        out.sources.append(recorded(r, judge, "validity", units=("base item", len(f.ids))))
    by_set: dict[str, list[Any]] = {}
    cap = {r.path: CapFile.of(r.data, path=r.path) for r in of_kind(runs, "cap")}   # a key renamed: an error
    for r in of_kind(runs, "cap"):
        for s, sb in cap[r.path].sets.items():
            if judge in sb.judges:
                by_set.setdefault(s, []).append(r)
    for s, h in by_set.items():
        r = one_run(h, f"CAP runs of {judge} on set {s}")
        if (r.path.parent / "units.parquet").is_file():
            out.cap[s] = u = cap_units(pd.read_parquet(r.path.parent / "units.parquet"), judge, s)
            block = cap[r.path].judge(s, judge).model_dump(mode="json", exclude_unset=True)
            out.sources.append(recorded(r, judge, "cap", block=block,
                                        units=(u.unit, len(u.ids))) | {"set": s})
    hits = [r for r in of_kind(runs, "world") if attributed(r, judge)]
    if hits:
        r = one_run(hits, f"world runs of {judge}")
        out.world = _world(r.path.parent, r.data, judge)
        if out.world is not None:
            out.sources.append(recorded(r, judge, "world",
                                        units=(out.world[0].unit, len(out.world[0].ids))))
    return out


def card_runs(card_path: Path, field_name: str) -> tuple[list[Any], str]:
    """The validity, CAP and world runs a card (``judgeaudit card``'s folder, or its ``card.json``) was built
    from, and the judge as the card and its runs name it. Each run must still be the run the card read (same run
    id at the same place); otherwise one line says which section's run moved or changed."""
    import json

    from judgeaudit.analyses.cap.schema import CapFile
    from judgeaudit.card.paired import _run_folder
    from judgeaudit.card.schema import CardFile
    from judgeaudit.card.share import localize
    from judgeaudit.card.sources import Run

    path = Path(card_path)
    f = path / "card.json" if path.is_dir() else path
    try:
        raw = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no card.json here (give a folder written by judgeaudit card, or its card.json)", path=f,
                         field=field_name) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read this card ({e})", path=f, field=field_name) from None
    try:
        card = CardFile.of(localize(raw, f.parent), path=f)   # its paths as paths on this machine
    except InputError as e:
        raise InputError(f"is not a judgeaudit card this judgeaudit reads (field {e.field!r}: {e.message})", path=f,
                         field=field_name) from None
    found: dict[Path, Any] = {}
    for kind in ("validity", "cap", "world"):
        sec = card.measured(kind)
        if sec is None:
            continue
        # the card's own choice of run per CAP set: a run read for one set is read only for the sets it gave
        sets_of: dict[str, set[str]] = {}
        for s_name, sb in sec.sets.items() if kind == "cap" else ():
            sets_of.setdefault(sb.source.path, set()).add(s_name)
        for src in card.sources(kind):
            folder, why = _run_folder(src)
            if why:
                raise InputError(f"the {kind} section's run cannot be read as the card read it: {why}", path=f,
                                 field=field_name)
            res = folder / "result.json"
            data = json.loads(res.read_text(encoding="utf-8"))
            if kind == "cap":   # read through its type: a key renamed is an error naming it
                kept = sets_of.get(src.path, set())
                data = {**data, "sets": {k: v.model_dump(mode="json", exclude_unset=True)
                                         for k, v in CapFile.of(data, path=res).sets.items() if k in kept}}
            found[res.resolve()] = Run(res, kind, data)
    runs = list(found.values())
    if not runs:
        raise InputError("measures no validity, CAP or world run of its judge; nothing to audit", path=f,
                         field=field_name)
    return runs, card.judge


def audits(old: JudgeRuns, new: JudgeRuns, *, margin: float, n_boot: int, seed: int) -> tuple[list[Quantity],
                                                                                             list[str]]:
    """Every audit quantity both judges' runs allow, and notes on what only one of them has."""
    qs: list[Quantity] = []
    notes: list[str] = []
    if old.validity is not None and new.validity is not None:
        qs += validity_audits(old.validity, new.validity, margin=margin, n_boot=n_boot, seed=seed)
    elif old.validity is not None or new.validity is not None:
        notes.append(f"validity: only the {'old' if old.validity is not None else 'new'} judge has a validity run; "
                     "S and R not compared")
    for s in sorted(set(old.cap) | set(new.cap)):
        if s in old.cap and s in new.cap:
            qs += cap_audits(old.cap[s], new.cap[s], margin=margin, n_boot=n_boot, seed=seed)
        else:
            notes.append(f"cap.{s}: only the {'old' if s in old.cap else 'new'} judge was run on this set; "
                         "its CAP conditions not compared")
    if old.world is not None and new.world is not None:
        (uo, arms_o), (un, arms_n) = old.world, new.world
        if arms_o[0] != arms_n[0]:
            notes.append(f"world: the runs' first arms differ ({arms_o[0]} vs {arms_n[0]}); gains not compared")
        else:
            arms = [arms_o[0]] + [a for a in arms_o[1:] if a in arms_n]
            qs += world_audits(uo, un, arms, margin=margin, n_boot=n_boot, seed=seed)
    elif old.world is not None or new.world is not None:
        notes.append(f"world: only the {'old' if old.world is not None else 'new'} judge has a world run; its "
                     "gains not compared")
    return qs, notes

"""The bootstrap interval of a difference between two runs, paired where they share units.

A run's quantities are each a function of summed per-unit counts (the loop's net = Σ(fixed − broken)
/ Σ units over responses; a world detection rate = metric(Σ tp, fn, tn, fp, fa) over clusters; a CAP
cell = Σ num / Σ den over base items). A ``Units`` table holds one count vector per unit (the unit the
quantity's own interval resamples: base items for validity, pairs (their base items) for CAP,
responses for the loop, clusters — an answer, or the source item its answers share — for the world).
Validity's S and R are Eq. (6) (the mean over base items of each base item's mean flip) at the
operating point τ the run chose: per base item (its mean flip × has, has), so Eq. (6) is a ratio of
sums; τ is held at each run's value (the run's own intervals re-select it in every resample).
Comparing two runs:

* **paired** when they share units: the shared units are resampled once (one multiplicity matrix)
  and both runs' quantities are computed on that same resample; the difference B − A and its
  percentile interval are over the shared units. Between-unit variance (easy vs hard items) cancels;
* **unpaired** when they share none: each run resampled on its own, independently.

The run folders keep the per-unit tables this reads (``verdicts.parquet`` and the probe set of a
validity run, ``units.parquet`` of a CAP or a loop run, ``decisions.parquet`` of a world run); a
section whose run keeps none is compared unpaired from the cards' stored intervals (``card.diff``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats.resample import bootstrap_counts, percentile_ci

Stat = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Units:
    """``counts[i]`` is unit ``ids[i]``'s count vector; ``stats[q]`` maps summed counts (last axis)
    to quantity ``q``."""

    unit: str
    ids: np.ndarray
    counts: np.ndarray
    stats: Mapping[str, Stat]


@dataclass(frozen=True)
class Compared:
    a: float
    b: float
    diff: float
    ci: tuple[float, float]
    paired: bool
    n_a: int
    n_b: int
    n_shared: int
    unit: str
    tau: float | None = None     # the common threshold both runs were read at (validity)

    @property
    def how(self) -> str:
        at = "" if self.tau is None else f", at one common τ = {self.tau:.3g} (pooled frontier, re-selected per resample)"
        if self.paired:
            return f"paired over {self.n_shared} shared {self.unit}s{at}"
        return f"unpaired ({self.n_a} vs {self.n_b} {self.unit}s, none shared){at}"


def _ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = percentile_ci(samples, level)
    return float(lo), float(hi)


def _value(f: Stat, counts: np.ndarray) -> float:
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(f(counts.sum(axis=0)))


def _boot(f: Stat, w: np.ndarray, counts: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return f(w @ counts)


def compare(a: Units, b: Units, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, Compared]:
    """Every quantity both tables carry: B − A with its bootstrap interval, paired over the shared units
    when there are any, else the two runs resampled independently (``card.diff`` declares too few shared
    units not comparable before asking)."""
    names = [q for q in a.stats if q in b.stats]
    shared = np.intersect1d(a.ids.astype(str), b.ids.astype(str))
    out: dict[str, Compared] = {}
    if len(shared):
        ia = pd.Index(a.ids.astype(str)).get_indexer(shared)
        ib = pd.Index(b.ids.astype(str)).get_indexer(shared)
        ca, cb = a.counts[ia], b.counts[ib]
        w = bootstrap_counts(len(shared), n_boot, seed)
        wa = wb = w
    else:
        ca, cb = a.counts, b.counts
        wa, wb = bootstrap_counts(len(ca), n_boot, seed), bootstrap_counts(len(cb), n_boot, seed + 1)
    for q in names:
        fa, fb = a.stats[q], b.stats[q]
        va, vb = _value(fa, ca), _value(fb, cb)
        lo, hi = _ci(_boot(fb, wb, cb) - _boot(fa, wa, ca), level)
        out[q] = Compared(va, vb, vb - va, (lo, hi), bool(len(shared)), len(a.ids), len(b.ids), len(shared), a.unit)
    return out


# --- the per-unit tables the run folders keep ------------------------------------------------------------


def _ratio(i: int, j: int) -> Stat:
    return lambda s: np.where(s[..., j] > 0, s[..., i] / np.where(s[..., j] > 0, s[..., j], 1), np.nan)


VALIDITY_SUBSETS = ("control", "construct", "scope", "strength", "construct+", "construct-")
"""The validity columns: flips on control and construct edits and on each axis, construct flips toward
the label (R⁺) and the wrong way (the wrong-way rate), each a per-base mean under Eq. (6)."""
VALIDITY_STATS = ("validity.S", "validity.R", "validity.R_scope", "validity.R_strength", "validity.gap",
                  "validity.R_plus", "validity.wrong_way_rate")


@dataclass(frozen=True)
class Frontier:
    """A validity run's base items at every threshold of a grid: ``grades`` maps each base item to its
    (original, edited) grades and the probes' subset masks, so counts can be formed at any τ."""

    ids: np.ndarray           # base item ids
    base_index: np.ndarray    # (n_probes,) base item of each usable probe
    base_grade: np.ndarray    # (n_probes,)
    edit_grade: np.ndarray    # (n_probes,)
    masks: np.ndarray         # (n_probes, 4): control, construct, scope, strength (usable probes only)
    s_floor: float

    @property
    def grades(self) -> np.ndarray:
        return np.unique(np.concatenate([self.base_grade, self.edit_grade]))

    def counts(self, taus: np.ndarray) -> np.ndarray:
        """``(n_base, 2·len(VALIDITY_SUBSETS), n_tau)``: per subset the base item's mean × has and has."""
        from judgeaudit.analyses.validity import _membership, _per_base

        taus = np.asarray(taus, dtype=float)
        b = self.base_grade[:, None] >= taus[None, :]
        e = self.edit_grade[:, None] >= taus[None, :]
        moves = {"flip": b != e, "toward": e & ~b, "wrong": b & ~e}
        cols = [(0, "flip"), (1, "flip"), (2, "flip"), (3, "flip"), (1, "toward"), (1, "wrong")]
        n_b = len(self.ids)
        member = _membership(self.base_index, n_b)
        out = np.zeros((n_b, 2 * len(cols), len(taus)))
        for k, (m, kind) in enumerate(cols):
            mask = np.repeat(self.masks[:, m:m + 1], len(taus), 1)
            means, has = _per_base(moves[kind].astype(float), mask, self.base_index, n_b, member)
            out[:, 2 * k], out[:, 2 * k + 1] = means * has, has
        return out


def validity_frontier(probes: pd.DataFrame, verdicts: pd.DataFrame, judge: str, *, bar: float = 0.75,
                      s_floor: float = 0.90) -> Frontier:
    """The base items of a validity run for ``judge`` (epoch-0 usable grades, as ``analyses.validity``
    reads them), ready to be counted at any threshold."""
    from judgeaudit.analyses.validity import _design

    d = _design(probes, bar)
    rows = verdicts[(verdicts["judge_id"] == judge)]
    if "epoch" in rows:
        rows = rows[pd.to_numeric(rows["epoch"], errors="coerce").fillna(0) == 0]
    ok = pd.to_numeric(rows["score"], errors="coerce").notna()
    if "error" in rows:
        ok &= rows["error"].isna()
    if "parse_ok" in rows:
        ok &= rows["parse_ok"].fillna(False).astype(bool)
    rows = rows[ok].drop_duplicates("request_id")
    grade = dict(zip(rows["request_id"].astype(str), pd.to_numeric(rows["score"]).astype(float), strict=True))
    bs = np.array([grade.get(b, np.nan) for b in d.bases[d.base_index]], dtype=float)
    es = np.array([grade.get(p, np.nan) for p in d.probe_ids], dtype=float)
    return design_frontier(d, bs, es, s_floor)


def design_frontier(d: Any, base_grade: np.ndarray, edit_grade: np.ndarray, s_floor: float = 0.90) -> Frontier:
    """The frontier of a probe design (``analyses.validity._design``) given every probe's original and
    edited grade (NaN: unusable, left out)."""
    bs, es = np.asarray(base_grade, dtype=float), np.asarray(edit_grade, dtype=float)
    arm = d.in_arm & ~np.isnan(bs) & ~np.isnan(es)
    cons = arm & ~d.is_control
    masks = np.column_stack([arm & d.is_control, cons, cons & (d.axis == "scope"), cons & (d.axis == "strength")])
    return Frontier(d.bases.astype(str), d.base_index[arm], bs[arm], es[arm], masks[arm], s_floor)


def _validity_stats(c: np.ndarray) -> dict[str, np.ndarray]:
    """Eq. (6) statistics from summed counts ``(..., 2·k)`` (last axis the columns of ``Frontier.counts``)."""
    r = {name: _ratio(2 * k, 2 * k + 1)(c) for k, name in enumerate(VALIDITY_SUBSETS)}
    return {"validity.S": 1.0 - r["control"], "validity.R": r["construct"], "validity.R_scope": r["scope"],
            "validity.R_strength": r["strength"], "validity.gap": r["scope"] - r["strength"],
            "validity.R_plus": r["construct+"], "validity.wrong_way_rate": r["construct-"]}


def _pooled_tau(sa: np.ndarray, sb: np.ndarray, taus: np.ndarray, s_floor: float) -> np.ndarray:
    """Per resample (rows of ``(n_boot, 2·k, n_tau)`` summed counts of A and B), the index of the
    matched-invariance τ on the pooled frontier (A's and B's counts summed): argmax R s.t. S ≥ floor
    (``analyses.validity.matched_operating_points``); −1 where none is defined."""
    from judgeaudit.analyses.validity import matched_operating_points

    pooled = sa + sb
    with np.errstate(invalid="ignore", divide="ignore"):
        S = 1.0 - np.where(pooled[:, 1] > 0, pooled[:, 0] / np.where(pooled[:, 1] > 0, pooled[:, 1], 1), np.nan)
        R = np.where(pooled[:, 3] > 0, pooled[:, 2] / np.where(pooled[:, 3] > 0, pooled[:, 3], 1), np.nan)
    degenerate = np.zeros(len(taus), dtype=bool)
    degenerate[0] = degenerate[-1] = True
    idx, _ = matched_operating_points(S, R, taus, degenerate, s_floor)
    return idx


def compare_validity(a: Frontier, b: Frontier, *, n_boot: int = 2000, seed: int = 0,
                     level: float = 0.95) -> dict[str, Compared]:
    """S, R, R_scope, R_strength, the gap, R⁺ and the wrong-way rate of two validity runs **at one common
    τ**: the matched-invariance point (S ≥ the floor, argmax R; ``analyses.validity``'s rule) of the pooled
    frontier — both runs' counts summed at every threshold of the union of their grades — so R is read at
    matched S (Prop. 3, §4). The pooled selection is symmetric in A and B, so under no change it does not
    move the difference; τ is then held in the resamples (re-selecting it per resample mixes differences
    at thresholds of unequal spread and left the same judge graded twice flagged in 0 of 200 simulations,
    against 7% held). Paired over the shared base items (one multiplicity matrix for both runs), the
    runs resampled independently when they share none; ``{}`` when no threshold is defined."""
    shared = np.intersect1d(a.ids, b.ids)
    taus = np.union1d(a.grades, b.grades)
    if not len(taus):
        return {}
    taus = np.append(taus, taus[-1] + 1.0)
    ca, cb = a.counts(taus), b.counts(taus)
    if len(shared):
        ca = ca[pd.Index(a.ids).get_indexer(shared)]
        cb = cb[pd.Index(b.ids).get_indexer(shared)]
    t0 = int(_pooled_tau(ca.sum(axis=0)[None], cb.sum(axis=0)[None], taus, min(a.s_floor, b.s_floor))[0])
    if t0 < 0:
        return {}
    ua = Units("base item", shared if len(shared) else a.ids, ca[:, :, t0], {})
    ub = Units("base item", shared if len(shared) else b.ids, cb[:, :, t0], {})
    stats = {q: (lambda q_: lambda x: _validity_stats(x)[q_])(q) for q in VALIDITY_STATS}
    got = compare(Units(ua.unit, ua.ids, ua.counts, stats), Units(ub.unit, ub.ids, ub.counts, stats),
                  n_boot=n_boot, seed=seed, level=level)
    return {q: Compared(c.a, c.b, c.diff, c.ci, c.paired, len(a.ids), len(b.ids), c.n_shared, c.unit,
                        tau=float(taus[t0])) for q, c in got.items() if not (np.isnan(c.a) or np.isnan(c.b))}


def loop_units(units: pd.DataFrame) -> Units:
    """Responses of a loop run (``units.parquet``): per regulator, at its final round, the response's
    Σ (pass_end − pass_initial) over its units and its unit count; ``loop.<regulator>.net`` = their
    ratio of sums (``loop.accounting``'s net)."""
    ids = np.array(sorted(units["item_id"].astype(str).unique()))
    cols, stats = [], {}
    for r in dict.fromkeys(units["regulator"]):
        sub = units[units["regulator"] == r]
        sub = sub[sub["round"] == sub["round"].max()]
        d = (sub["pass_end"].astype(int) - sub["pass_initial"].astype(int)).groupby(sub["item_id"].astype(str)).sum()
        n = sub.groupby(sub["item_id"].astype(str)).size()
        cols += [d.reindex(ids).fillna(0).to_numpy(float), n.reindex(ids).fillna(0).to_numpy(float)]
        stats[f"loop.{r}.net"] = _ratio(len(cols) - 2, len(cols) - 1)
    return Units("response", ids, np.column_stack(cols) if cols else np.zeros((len(ids), 0)), stats)


def world_units(decisions: pd.DataFrame, judge: str) -> Units:
    """Clusters (an answer, or the source item its answers share) of a world run (``decisions.parquet``) for ``judge``: per arm the confusion
    counts of ``stats.paired.cluster_counts``; ``world.<arm>.<metric>`` for every metric."""
    from judgeaudit.stats.paired import FIELDS, METRICS, cluster_counts, metric

    dec = decisions[(decisions["judge"] == judge) & decisions["flagged"].notna()]
    ids = np.array(sorted(dec["group"].astype(str).unique()))
    blocks, stats = [], {}
    for k, arm in enumerate(dict.fromkeys(dec["arm"])):
        s = dec[dec["arm"] == arm]
        labels, c = cluster_counts(s["gold"].to_numpy(bool), s["flagged"].to_numpy(bool), s["group"].to_numpy(),
                                   s["complaints"].to_numpy(float))
        blocks.append(pd.DataFrame(c, index=labels).reindex(ids).fillna(0).to_numpy(float))
        lo = k * len(FIELDS)
        for m in METRICS:
            stats[f"world.{arm}.{m}"] = (lambda lo_, m_: lambda x: metric(x[..., lo_:lo_ + len(FIELDS)], m_))(lo, m)
    return Units("cluster", ids, np.hstack(blocks) if blocks else np.zeros((len(ids), 0)), stats)


def cap_units(units: pd.DataFrame, judge: str, set_name: str) -> Units:
    """Base items of one set of a CAP run (``units.parquet``) for ``judge``: every cell's Σ num / Σ den —
    ``cap.<set>.<condition>`` (``overall`` included), ``cap.<set>.<condition>.strict|consistency``."""
    sub = units[(units["judge_id"] == judge) & (units["set"] == set_name)
                & units["metric"].isin(["value", "strict", "consistency"])]
    ids = np.array(sorted(sub["unit"].astype(str).unique()))
    cols, stats = [], {}
    for (cond, met), g in sub.groupby(["condition", "metric"], sort=True):
        g = g.set_index(g["unit"].astype(str))
        cols += [g["num"].reindex(ids).fillna(0).to_numpy(float), g["den"].reindex(ids).fillna(0).to_numpy(float)]
        name = f"cap.{set_name}.{cond}" + ("" if met == "value" else f".{met}")
        stats[name] = _ratio(len(cols) - 2, len(cols) - 1)
    return Units("pair", ids, np.column_stack(cols) if cols else np.zeros((len(ids), 0)), stats)


def _run_folder(src: dict) -> tuple[Path | None, str | None]:
    """The run folder a card section read, if it still holds the run the card read (same run id)."""
    import json

    f = Path(src["path"])
    if not f.is_file():
        return None, f"its run's result.json is no longer at {f}"
    try:
        res = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"cannot read {f} ({e})"
    if src.get("run_id") and res.get("run_id") != src["run_id"]:
        return None, f"{f} now holds another run ({res.get('run_id')}, not the card's {src['run_id']})"
    return f.parent, None


def _validity_from(folder: Path, judge: str) -> Frontier | str:
    """The run's frontier for ``judge``, or why it cannot be read as the run read it: the probe file
    must be the one the run hashed (``result.json`` ``inputs``); the bundled set is the package's."""
    import json

    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame
    from judgeaudit.runinfo import changed_inputs

    res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    ps = res.get("probe_set")
    if ps is None or not (folder / "verdicts.parquet").is_file():
        return f"the validity run in {folder} keeps no verdicts.parquet or probe set"
    files = ((res.get("inputs") or {}).get("files") or {})
    if ps == BUNDLED:
        path = bundled_probes_path()
    elif "probes" in files:
        path = Path(files["probes"]["path"])
    else:
        return (f"the validity run in {folder} records no hash of its probe file {ps} (made before judgeaudit "
                "recorded input hashes), so the file there now cannot be trusted to be the one graded")
    if (why := changed_inputs(res, only=("probes",))):
        return f"the validity run in {folder}: {why[0]}"
    if not path.is_file():
        return f"the probe file of the validity run in {folder} is no longer at {path}"
    return validity_frontier(probes_frame(read_probes(path)), pd.read_parquet(folder / "verdicts.parquet"), judge,
                             bar=float(res.get("bar", 0.75)), s_floor=float(res.get("s_floor", 0.90)))


def section_units(card: dict, kind: str) -> tuple[list[Units | Frontier], list[str]]:
    """The per-unit tables of a card's ``kind`` section (one per set for CAP), read from its source run
    folders, and the reasons any could not be read (a moved, rerun or edited input). Empty when the
    section was not measured or its run keeps no per-unit table."""
    s = card["sections"].get(kind) or {}
    notes: list[str] = []
    if not s.get("measured"):
        return [], notes
    if kind == "cap":
        out: list[Units | Frontier] = []
        for name, sb in s.get("sets", {}).items():
            folder, why = _run_folder(sb["source"])
            if why:
                notes.append(f"cap.{name}: {why}")
            elif (folder / "units.parquet").is_file():
                out.append(cap_units(pd.read_parquet(folder / "units.parquet"), card["judge"], name))
        return out, notes
    if not s.get("source"):
        return [], notes
    folder, why = _run_folder(s["source"])
    if why:
        return [], [f"{kind}: {why}"]
    if kind == "validity":
        u = _validity_from(folder, card["judge"])
        return ([u], notes) if isinstance(u, Frontier) else ([], [f"validity: {u}"])
    if kind == "loop" and (folder / "units.parquet").is_file():
        return [loop_units(pd.read_parquet(folder / "units.parquet"))], notes
    if kind == "world" and (folder / "decisions.parquet").is_file():
        return [world_units(pd.read_parquet(folder / "decisions.parquet"), card["judge"])], notes
    return [], notes

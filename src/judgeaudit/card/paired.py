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

    @property
    def how(self) -> str:
        if self.paired:
            return f"paired over {self.n_shared} shared {self.unit}s"
        return f"unpaired ({self.n_a} vs {self.n_b} {self.unit}s, none shared)"


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
    when there are any, else the two runs resampled independently."""
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


VALIDITY_SUBSETS = ("control", "construct", "scope", "strength")


def validity_units(probes: pd.DataFrame, verdicts: pd.DataFrame, judge: str, tau: float, *,
                   bar: float = 0.75) -> Units:
    """Base items of a validity run for ``judge`` at threshold ``tau``: per subset (control edits,
    construct edits, and the scope and strength axes) the base item's mean flip × has and has;
    ``validity.S`` = 1 − control, ``validity.R``, ``validity.R_scope``, ``validity.R_strength`` and
    ``validity.gap`` = R_scope − R_strength (``analyses.validity``'s Eq. (6) at τ)."""
    from judgeaudit.analyses.validity import _design, _per_base, flips_at

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
    arm = d.in_arm & ~np.isnan(bs) & ~np.isnan(es)
    cons = arm & ~d.is_control
    masks = np.column_stack([arm & d.is_control, cons, cons & (d.axis == "scope"), cons & (d.axis == "strength")])
    f = flips_at(np.nan_to_num(bs), np.nan_to_num(es), np.array([tau]))[:, 0] & arm
    means, has = _per_base(f.astype(float), masks, d.base_index, len(d.bases))
    counts = np.column_stack([c for k in range(len(VALIDITY_SUBSETS)) for c in (means[:, k] * has[:, k], has[:, k])])
    r = {name: _ratio(2 * k, 2 * k + 1) for k, name in enumerate(VALIDITY_SUBSETS)}
    stats = {"validity.S": lambda x: 1.0 - r["control"](x), "validity.R": r["construct"],
             "validity.R_scope": r["scope"], "validity.R_strength": r["strength"],
             "validity.gap": lambda x: r["scope"](x) - r["strength"](x)}
    return Units("base item", d.bases.astype(str), counts, stats)


def _validity_from(folder: Path, judge: str) -> Units | None:
    import json

    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    tau = ((res.get("judges") or {}).get(judge) or {}).get("tau")
    ps = res.get("probe_set")
    if tau is None or ps is None or not (folder / "verdicts.parquet").is_file():
        return None
    path = bundled_probes_path() if ps == BUNDLED else Path(ps)
    if not path.is_file():
        return None
    return validity_units(probes_frame(read_probes(path)), pd.read_parquet(folder / "verdicts.parquet"), judge,
                          float(tau), bar=float(res.get("bar", 0.75)))


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


def section_units(card: dict, kind: str) -> list[Units]:
    """The per-unit tables of a card's ``kind`` section (one per set for CAP), read from its source run
    folders (none when the section was not measured or its run keeps no per-unit table)."""
    s = card["sections"].get(kind) or {}
    if not s.get("measured"):
        return []
    if kind == "cap":
        out = []
        for name, sb in s.get("sets", {}).items():
            f = Path(sb["source"]["path"]).parent / "units.parquet"
            if f.is_file():
                out.append(cap_units(pd.read_parquet(f), card["judge"], name))
        return out
    if not s.get("source"):
        return []
    folder = Path(s["source"]["path"]).parent
    if kind == "validity":
        u = _validity_from(folder, card["judge"])
        return [u] if u is not None else []
    if kind == "loop" and (folder / "units.parquet").is_file():
        return [loop_units(pd.read_parquet(folder / "units.parquet"))]
    if kind == "world" and (folder / "decisions.parquet").is_file():
        return [world_units(pd.read_parquet(folder / "decisions.parquet"), card["judge"])]
    return []

"""The bootstrap interval of a difference between two runs, paired where they share units.

A run's quantities are each a function of summed per-unit counts (the loop's net = Σ(fixed − broken)
/ Σ units over responses; a world detection rate = metric(Σ tp, fn, tn, fp, fa) over clusters; a CAP
cell = Σ num / Σ den over base items). A ``Units`` table holds one count vector per unit (the unit the
quantity's own interval resamples: base items for validity, pairs (their base items) for CAP,
responses for the loop, clusters — an answer, or the source item its answers share — for the world).
Validity's S and R are Eq. (6) (the mean over base items of each base item's mean flip): per base
item and threshold (its mean flip × has, has), so Eq. (6) is a ratio of sums at every τ; each run is
read at its own matched-invariance τ, selected again in every resample (``compare_validity``).
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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.card.schema import CardFile, Source
from judgeaudit.stats.paired import Stat, arm_resamples, differences
from judgeaudit.stats.resample import percentile_interval


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
    taus: tuple[float, float] | None = None     # validity: the τ each run's own matched point reads (A, B)

    @property
    def how(self) -> str:
        at = "" if self.taus is None else (f", {VALIDITY_HOW} (point estimates at τ_A = {self.taus[0]:.3g}, "
                                           f"τ_B = {self.taus[1]:.3g})")
        if self.paired:
            return f"paired over {self.n_shared} shared {self.unit}s{at}"
        return f"unpaired ({self.n_a} vs {self.n_b} {self.unit}s, none shared){at}"


def compare(a: Units, b: Units, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, Compared]:
    """Every quantity both tables carry: B − A with its bootstrap interval, paired over the shared units
    when there are any, else the two runs resampled independently (``card.diff`` declares too few shared
    units not comparable before asking)."""
    shared = np.intersect1d(a.ids.astype(str), b.ids.astype(str))
    ca, cb = a.counts, b.counts
    if len(shared):
        ca = ca[pd.Index(a.ids.astype(str)).get_indexer(shared)]
        cb = cb[pd.Index(b.ids.astype(str)).get_indexer(shared)]
    found = differences({q: (a.stats[q], b.stats[q]) for q in a.stats if q in b.stats}, ca, cb,
                        paired=bool(len(shared)), n_boot=n_boot, seed=seed, level=level)
    return {q: Compared(va, vb, vb - va, ci, bool(len(shared)), len(a.ids), len(b.ids), len(shared), a.unit)
            for q, (va, vb, ci) in found.items()}


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
        from judgeaudit.analyses.validity import membership, per_base_means

        taus = np.asarray(taus, dtype=float)
        b = self.base_grade[:, None] >= taus[None, :]
        e = self.edit_grade[:, None] >= taus[None, :]
        moves = {"flip": b != e, "toward": e & ~b, "wrong": b & ~e}
        cols = [(0, "flip"), (1, "flip"), (2, "flip"), (3, "flip"), (1, "toward"), (1, "wrong")]
        n_b = len(self.ids)
        member = membership(self.base_index, n_b)
        out = np.zeros((n_b, 2 * len(cols), len(taus)))
        for k, (m, kind) in enumerate(cols):
            mask = np.repeat(self.masks[:, m:m + 1], len(taus), 1)
            means, has = per_base_means(moves[kind].astype(float), mask, self.base_index, n_b, member)
            out[:, 2 * k], out[:, 2 * k + 1] = means * has, has
        return out


def validity_frontier(probes: pd.DataFrame, verdicts: pd.DataFrame, judge: str, *, bar: float = 0.75,
                      s_floor: float = 0.90) -> Frontier:
    """The base items of a validity run for ``judge`` (epoch-0 usable grades, as ``analyses.validity``
    reads them), ready to be counted at any threshold."""
    from judgeaudit.analyses.validity import probe_design

    d = probe_design(probes, bar)
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
    """The frontier of a probe design (``analyses.validity.probe_design``) given every probe's original and
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


def matched_points(summed: np.ndarray, taus: np.ndarray, s_floor: float) -> np.ndarray:
    """Per row of ``(n_rows, 2·k, n_tau)`` summed counts (``Frontier.counts`` summed over base items,
    one row per resample), the index of the matched-invariance τ — argmax R subject to S ≥ the floor,
    the constant corners (the lowest and the top threshold) degenerate — by the validity analysis's
    own rule (``analyses.validity.matched_operating_points``); −1 where none is defined."""
    from judgeaudit.analyses.validity import matched_operating_points

    with np.errstate(invalid="ignore", divide="ignore"):
        S = 1.0 - np.where(summed[:, 1] > 0, summed[:, 0] / np.where(summed[:, 1] > 0, summed[:, 1], 1), np.nan)
        R = np.where(summed[:, 3] > 0, summed[:, 2] / np.where(summed[:, 3] > 0, summed[:, 3], 1), np.nan)
    degenerate = np.zeros(len(taus), dtype=bool)
    degenerate[0] = degenerate[-1] = True
    idx, _ = matched_operating_points(S, R, taus, degenerate, s_floor)
    return idx


def _at(summed: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The validity statistics of each row of ``(n_rows, 2·k, n_tau)`` summed counts read at its own
    threshold index (NaN where −1)."""
    rows = np.arange(len(summed))
    got = _validity_stats(summed[rows, :, np.maximum(idx, 0)])
    return {q: np.where(idx >= 0, v, np.nan) for q, v in got.items()}


def _taus(f: Frontier) -> np.ndarray:
    g = f.grades
    return np.append(g, g[-1] + 1.0) if len(g) else g


def _boot_at_own_tau(w: np.ndarray, counts: np.ndarray, taus: np.ndarray, s_floor: float,
                     block: int = 256) -> dict[str, np.ndarray]:
    """Each resample's statistics (rows of multiplicities ``w`` over ``counts``' base items) at the
    matched τ selected on that resample's own frontier; in blocks of resamples, so memory stays
    bounded when a judge's grades take many distinct values."""
    parts = []
    for k in range(0, len(w), block):
        summed = np.einsum("bn,nkt->bkt", w[k:k + block].astype(float), counts)
        parts.append(_at(summed, matched_points(summed, taus, s_floor)))
    return {q: np.concatenate([p[q] for p in parts]) for q in VALIDITY_STATS}


VALIDITY_HOW = ("each run at its own matched-invariance τ (argmax R s.t. S ≥ its floor), τ re-selected for "
                "each run in every resample")


def compare_validity(a: Frontier, b: Frontier, *, n_boot: int = 2000, seed: int = 0,
                     level: float = 0.95) -> dict[str, Compared]:
    """S, R, R_scope, R_strength, the gap, R⁺ and the wrong-way rate of two validity runs, **each run
    read at its own matched-invariance point** (S ≥ its floor, argmax R; ``analyses.validity``'s rule,
    on its own grades' thresholds), as each run's card reads it (Prop. 3, §4: R is read at matched S).
    The interval of B − A is the percentile interval of the whole procedure: in every resample (paired:
    one multiplicity matrix over the shared base items; unpaired: each run on its own) each run's τ is
    selected again on that resample's frontier and its statistics read there, so the selection's
    variability is inside the interval. A judge whose grades are a monotone re-scaling of A's (every
    grade one point harsher) flips on the same probes at its matched τ in every resample: B − A is 0
    with an interval [0, 0]. ``{}`` when either run has no matched point."""
    shared = np.intersect1d(a.ids, b.ids)
    ta, tb = _taus(a), _taus(b)
    if not len(ta) or not len(tb):
        return {}
    ca, cb = a.counts(ta), b.counts(tb)
    if len(shared):
        ca = ca[pd.Index(a.ids).get_indexer(shared)]
        cb = cb[pd.Index(b.ids).get_indexer(shared)]
    wa, wb = arm_resamples(len(ca), len(cb), paired=bool(len(shared)), n_boot=n_boot, seed=seed)
    pa, pb = ca.sum(axis=0)[None], cb.sum(axis=0)[None]
    ia, ib = matched_points(pa, ta, a.s_floor), matched_points(pb, tb, b.s_floor)
    if ia[0] < 0 or ib[0] < 0:
        return {}
    va, vb = _at(pa, ia), _at(pb, ib)
    boot_a = _boot_at_own_tau(wa, ca, ta, a.s_floor)
    boot_b = _boot_at_own_tau(wb, cb, tb, b.s_floor)
    out: dict[str, Compared] = {}
    for q in VALIDITY_STATS:
        x, y = float(va[q][0]), float(vb[q][0])
        if np.isnan(x) or np.isnan(y):
            continue
        out[q] = Compared(x, y, y - x, percentile_interval(boot_b[q] - boot_a[q], level), bool(len(shared)),
                          len(a.ids), len(b.ids), len(shared), "base item", taus=(float(ta[ia[0]]), float(tb[ib[0]])))
    return out


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


def _run_folder(src: Source | dict[str, Any]) -> tuple[Path | None, str | None]:
    """The run folder a card section read (its ``source``), if it still holds the run the card read (same run
    id)."""
    from judgeaudit.errors import InputError
    from judgeaudit.runinfo import RunStamp

    src = src if isinstance(src, Source) else Source.model_validate(src)
    f = Path(src.path)
    if not f.is_file():
        return None, f"its run's result.json is no longer at {f}"
    try:
        now = RunStamp.read(f)
    except InputError as e:
        return None, f"cannot read {f} ({e.message}" + (f"; field {e.field!r})" if e.field else ")")
    if src.run_id and now.run_id != src.run_id:
        return None, f"{f} now holds another run ({now.run_id}, not the card's {src.run_id})"
    return f.parent, None


def _validity_from(folder: Path, judge: str) -> Frontier | str:
    """The run's frontier for ``judge``, or why it cannot be read as the run read it: the probe file
    must be the one the run hashed (``result.json`` ``inputs``); the bundled set is the package's."""
    from judgeaudit.analyses.validity.schema import ValidityFile
    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame
    from judgeaudit.runinfo import RunStamp, changed_inputs

    run = ValidityFile.read(folder / "result.json")   # a key renamed or missing: an error naming it
    stamp = RunStamp.of(run.to_json(), path=folder / "result.json")
    ps = run.probe_set
    if ps is None or not (folder / "verdicts.parquet").is_file():
        return f"the validity run in {folder} keeps no verdicts.parquet or probe set"
    files = stamp.inputs.files if stamp.inputs is not None else {}
    if ps == BUNDLED:
        path = bundled_probes_path()
    elif "probes" in files:
        path = Path(files["probes"].path)
    else:
        return (f"the validity run in {folder} records no hash of its probe file {ps} (made before judgeaudit "
                "recorded input hashes), so the file there now cannot be trusted to be the one graded")
    if (why := changed_inputs(stamp, only=("probes",))):
        return f"the validity run in {folder}: {why[0]}"
    if not path.is_file():
        return f"the probe file of the validity run in {folder} is no longer at {path}"
    return validity_frontier(probes_frame(read_probes(path)), pd.read_parquet(folder / "verdicts.parquet"), judge,
                             bar=run.bar, s_floor=run.s_floor)


validity_frontier_from = _validity_from
"""The public name of ``_validity_from`` (``migrate --from`` reads the validity runs as card diff does)."""


def section_units(card: CardFile | dict, kind: str) -> tuple[list[Units | Frontier], list[str]]:
    """The per-unit tables of a card's ``kind`` section (one per set for CAP), read from its source run
    folders, and the reasons any could not be read (a moved, rerun or edited input). Empty when the
    section was not measured or its run keeps no per-unit table."""
    card = CardFile.of(card)
    s = card.measured(kind) if kind in ("validity", "cap", "world", "loop") else None
    notes: list[str] = []
    if s is None:
        return [], notes
    if kind == "cap":
        out: list[Units | Frontier] = []
        for name, sb in s.sets.items():
            folder, why = _run_folder(sb.source)
            if why:
                notes.append(f"cap.{name}: {why}")
            elif (folder / "units.parquet").is_file():
                out.append(cap_units(pd.read_parquet(folder / "units.parquet"), card.judge, name))
        return out, notes
    folder, why = _run_folder(s.source)
    if why:
        return [], [f"{kind}: {why}"]
    if kind == "validity":
        u = _validity_from(folder, card.judge)
        return ([u], notes) if isinstance(u, Frontier) else ([], [f"validity: {u}"])
    if kind == "loop" and (folder / "units.parquet").is_file():
        return [loop_units(pd.read_parquet(folder / "units.parquet"))], notes
    if kind == "world" and (folder / "decisions.parquet").is_file():
        return [world_units(pd.read_parquet(folder / "decisions.parquet"), card.judge)], notes
    return [], notes

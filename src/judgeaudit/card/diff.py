"""Comparing two cards (one judge at two dates, or two judges): every quantity both cards carry, the
cards' own values A and B, the difference B − A and an interval of the difference; a change is
flagged when that interval excludes zero. Each row says how its interval was made:

* from the run folders' per-unit tables (``card.paired``): a bootstrap of the difference, **paired**
  when the two runs share units (the shared units resampled once, both quantities computed on the
  same resample), unpaired when they share none. Validity quantities are read as each card reads
  them: **each run at its own matched-invariance point** (S ≥ its floor, argmax R), τ selected again
  for each run in every resample (``paired.compare_validity``; construct-validity Prop. 3 and §4 read
  R only at matched S), so a judge whose grades are a monotone re-scaling of the other's is unchanged;
* otherwise from the cards' stored intervals, **unpaired**: each interval's half-width is read as
  z·se (z the normal quantile of the level) and the difference's interval is
  (B − A) ± z·√(se_A² + se_B²). Where the runs share items and their errors are positively
  correlated this is conservative. Each card's validity interval is its run's own (τ re-selected in
  every resample at its own matched point), the same reading as the paired comparison.

A VP row (a label set's audit) that both cards read from the one same run (same run id) is one measurement,
not two: its difference is exactly zero with an interval of no width, and the row says so. A run without its id
never counts as the same run.

Two runs that share some units but fewer than ``MIN_SHARED`` (judgeaudit's own minimum) are "not
comparable": a bootstrap over a handful of units has an interval of no width, not a measured change.
The runs the cards read must still be the runs they read (same run id, unchanged input files; see
``runinfo.changed_inputs``); otherwise the row says why it is not compared. Every quantity of a section
whose run's input file (probe file, data set file) changed or went since the run is "not comparable".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from judgeaudit.card.schema import CardFile, Value

MIN_SHARED = 10
"""judgeaudit's own minimum of shared units for a paired difference."""


def quantities(card: CardFile | dict[str, Any]) -> dict[str, tuple[float, tuple[float, float]]]:
    """Every ``name → (value, interval)`` in a card that has both (each quantity once: the per-axis
    R is ``validity.R_scope`` / ``validity.R_strength``)."""
    card, out = CardFile.of(card), {}

    def put(name: str, value: Any, ci: Any) -> None:
        if value is not None and ci and None not in ci:
            out[name] = (float(value), (float(ci[0]), float(ci[1])))

    if (v := card.measured("validity")) is not None:
        for k, e in v.metrics.items():
            put(f"validity.{k}", e.value, e.ci)
        for ax, a in v.per_axis.items():
            for k, e in a.items():
                if k != "R":
                    put(f"validity.{ax}.{k}", e.value, e.ci)
    if (cap := card.measured("cap")) is not None:
        for name, sb in cap.sets.items():
            put(f"cap.{name}.overall", sb.overall.value, sb.overall.ci)
            for c, e in sb.conditions.items():
                put(f"cap.{name}.{c}", e.value, e.ci)
                for k, m in (("strict", e.strict), ("consistency", e.consistency)):
                    if m is not None:
                        m = _metric(m)
                        put(f"cap.{name}.{c}.{k}", m.value, m.ci)
    if (vp := card.measured("vp")) is not None:
        for r in vp.rows:
            put(f"vp.{r.set}.{r.mode}.a_imp", r.a_imp, r.a_imp_ci)
            put(f"vp.{r.set}.{r.mode}.a_hum", r.a_hum, r.a_hum_ci)
    return out


def _metric(m: Any) -> Value:
    """A CAP cell's strict or consistency metric as a ``Value``."""
    return Value.model_validate(m) if isinstance(m, dict) else Value(value=m.value, ci=m.ci)


def card_value(card: CardFile | dict[str, Any], q: str) -> float | None:
    """The value card ``card`` itself prints for quantity ``q`` (None when it prints none)."""
    card = CardFile.of(card)
    kind, _, rest = q.partition(".")
    sec = card.measured(kind)
    if sec is None:
        return None
    if kind == "validity":
        e = sec.metrics.get(rest)
        return None if e is None else e.value
    if kind == "cap":
        for name, sb in sec.sets.items():
            if rest == f"{name}.overall":
                return sb.overall.value
            for c, e in sb.conditions.items():
                if rest == f"{name}.{c}":
                    return e.value
                for k, m in (("strict", e.strict), ("consistency", e.consistency)):
                    if rest == f"{name}.{c}.{k}":
                        return None if m is None else _metric(m).value
        return None
    if kind == "world":
        return sec.numbers.get(f"arms.{rest}")
    if kind == "loop":
        return sec.numbers.get(f"regulators.{rest}")
    return None


@dataclass(frozen=True)
class Change:
    quantity: str
    a: float | None
    b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    how: str = "unpaired (stored intervals)"
    taus: tuple[float, float] | None = None     # validity: the τ each run's own matched point reads (A, B)

    @property
    def comparable(self) -> bool:
        return self.ci is not None

    @property
    def flagged(self) -> bool:
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)


def changed_now(card: CardFile | dict[str, Any], kind: str) -> list[str]:
    """The input files of the runs a card's ``kind`` section read that changed (or are gone) since those
    runs recorded their hashes (``runinfo.changed_inputs``, checked now)."""
    from judgeaudit.runinfo import changed_inputs

    return list(dict.fromkeys(w for src in CardFile.of(card).sources(kind)
                              for w in changed_inputs(src.model_dump(exclude_unset=True))))


def _own(card: CardFile, q: str, fallback: float | None) -> float | None:
    v = card_value(card, q)
    return fallback if v is None else float(v)


def diff_cards(a: CardFile | dict[str, Any], b: CardFile | dict[str, Any], level: float = 0.95, *, n_boot: int = 2000,
               seed: int = 0, min_shared: int = MIN_SHARED) -> list[Change]:
    """Every quantity shared by cards ``a`` and ``b``, with the cards' own values, B − A and its interval
    (bootstrap of the difference from the runs' per-unit tables where both runs keep them, paired over
    shared units; validity at each run's own matched τ), or "not comparable" and why."""
    from judgeaudit.card.paired import Frontier, compare, compare_validity, section_units

    a, b = CardFile.of(a), CardFile.of(b)
    out: list[Change] = []
    changed = {k: "not comparable: " + "; ".join(why) for k in ("validity", "cap", "vp", "world", "loop")
               if (why := [f"A's {w}" for w in changed_now(a, k)] + [f"B's {w}" for w in changed_now(b, k)])}
    blocked: dict[str, str] = dict(changed)     # section → why its per-unit comparison was not made
    for kind in ("validity", "cap", "world", "loop"):
        ta, why_a = section_units(a, kind)
        tb, why_b = section_units(b, kind)
        if (why_a or why_b) and kind not in changed:
            blocked[kind] = "; ".join([f"A {w}" for w in why_a] + [f"B {w}" for w in why_b])
        for ua in ta:
            for ub in tb:
                if isinstance(ua, Frontier) != isinstance(ub, Frontier):
                    continue
                if kind in changed:   # an input file changed since the run: the quantities, not compared
                    names = ([q for q in ua.stats if q in ub.stats] if not isinstance(ua, Frontier)
                             else list(_validity_names()))
                    out += [Change(q, _own(a, q, None), _own(b, q, None), None, None, changed[kind]) for q in names]
                    continue
                n_shared = len(set(ua.ids.astype(str)) & set(ub.ids.astype(str)))
                if 0 < n_shared < min_shared:
                    names = ([q for q in ua.stats if q in ub.stats] if not isinstance(ua, Frontier)
                             else list(_validity_names()))
                    note = (f"not comparable: {n_shared} shared {_unit(ua)}{'s' * (n_shared != 1)}, fewer than "
                            f"{min_shared}")
                    out += [Change(q, _own(a, q, None), _own(b, q, None), None, None, note) for q in names]
                    blocked[kind] = note
                    continue
                got = (compare_validity(ua, ub, n_boot=n_boot, seed=seed, level=level)
                       if isinstance(ua, Frontier) else compare(ua, ub, n_boot=n_boot, seed=seed, level=level))
                out += [Change(q, _own(a, q, c.a), _own(b, q, c.b), c.diff, c.ci, c.how, getattr(c, "taus", None))
                        for q, c in got.items()]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    qa, qb = quantities(a), quantities(b)
    done = {c.quantity for c in out}
    for k in (qa.keys() & qb.keys()) - done:
        (va, ca), (vb, cb) = qa[k], qb[k]
        kind = k.partition(".")[0]
        if kind in blocked and blocked[kind].startswith("not comparable"):
            out.append(Change(k, va, vb, None, None, blocked[kind]))
            continue
        if (run := _same_run(a, b, k)) is not None:
            out.append(Change(k, va, vb, vb - va, (vb - va, vb - va), f"{SAME_RUN} ({run}): one measurement, "
                              "read by both cards"))
            continue
        half = z * math.hypot((ca[1] - ca[0]) / (2 * z), (cb[1] - cb[0]) / (2 * z))
        d = vb - va
        how = "unpaired (stored intervals)" + (f"; {blocked[kind]}" if kind in blocked else "")
        out.append(Change(k, va, vb, d, (d - half, d + half), how))
    return sorted(out, key=lambda c: c.quantity)


SAME_RUN = "the same run"
"""How a row read from one run by both cards begins: the label-set audit does not depend on the judge, so two
judges' cards built from one VP run carry one measurement, not two, and their difference has no interval to draw."""


def _vp_source(card: CardFile, q: str) -> Any:
    """The run card ``card``'s VP row of quantity ``vp.<set>.<mode>.a_imp`` read, else None."""
    sec = card.measured("vp")
    if sec is None or not q.startswith("vp."):
        return None
    set_mode = q[len("vp."):].rpartition(".")[0]
    return next((r.source for r in sec.rows if f"{r.set}.{r.mode}" == set_mode), None)


def _same_run(a: CardFile, b: CardFile, q: str) -> str | None:
    """The run id when both cards read quantity ``q`` from one and the same run (a VP row: the label-set audit
    is the same for every judge), else None. A run without its id never counts as the same run."""
    sa, sb = _vp_source(a, q), _vp_source(b, q)
    if sa is None or sb is None or not sa.run_id or sa.run_id != sb.run_id:
        return None
    return sa.run_id


def tally(changes: Sequence[Change]) -> str:
    """The one-sentence summary under a diff's table: how many compared quantities changed, and how each
    interval was made."""
    ok = [c for c in changes if c.comparable]
    paired = sum(c.how.startswith("paired") for c in ok)
    same = sum(c.how.startswith(SAME_RUN) for c in ok)
    return (f"{sum(c.flagged for c in ok)} of {len(ok)} compared quantities changed (interval of the difference "
            f"excludes zero); {paired} paired over shared units, {len(ok) - paired - same} unpaired"
            + (f", {same} read from the same run by both cards" if same else "")
            + f"; {len(changes) - len(ok)} not comparable.")


def _validity_names() -> tuple[str, ...]:
    from judgeaudit.card.paired import VALIDITY_STATS

    return VALIDITY_STATS


def _unit(u: Any) -> str:
    return getattr(u, "unit", "base item")


def _f(x: float | None, sign: bool = False) -> str:
    return "—" if x is None else (f"{x:+.3f}" if sign else f"{x:.3f}")


def diff_md(a: CardFile | dict[str, Any], b: CardFile | dict[str, Any], changes: list[Change]) -> str:
    a, b = CardFile.of(a), CardFile.of(b)
    lines = [f"# card diff: {a.judge} ({a.generated_at}) → {b.judge} ({b.generated_at})", "",
             "A and B are the cards' own values; B − A and its interval are the comparison's (validity: each "
             "run at its own matched-invariance τ, re-selected for each run in every resample).", "",
             "| quantity | A | B | B − A | interval | flagged | interval from |", "|---|---|---|---|---|---|---|"]
    for c in changes:
        ci = "—" if c.ci is None else f"[{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]"
        flag = "**changed**" if c.flagged else ("not comparable" if not c.comparable else "")
        lines.append(f"| {c.quantity} | {_f(c.a)} | {_f(c.b)} | {_f(c.diff, True)} | {ci} | {flag} | {c.how} |")
    lines += ["", tally(changes)]
    return "\n".join(lines) + "\n"

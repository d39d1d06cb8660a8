"""Comparing two cards (one judge at two dates, or two judges): every quantity both cards carry with
an interval, the difference B − A and an interval of the difference; a change is flagged when that
interval excludes zero. Each row says how its interval was made:

* from the run folders' per-unit tables (``card.paired``): a bootstrap of the difference, **paired**
  when the two runs share units (the shared units resampled once, both quantities computed on the
  same resample), unpaired when they share none;
* otherwise from the cards' stored intervals, **unpaired**: each interval's half-width is read as
  z·se (z the normal quantile of the level) and the difference's interval is
  (B − A) ± z·√(se_A² + se_B²). Where the runs share items and their errors are positively
  correlated this is conservative (wider than a paired bootstrap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any


def quantities(card: dict[str, Any]) -> dict[str, tuple[float, tuple[float, float]]]:
    """Every ``name → (value, interval)`` in a card that has both."""
    s, out = card["sections"], {}

    def put(name: str, e: dict[str, Any] | None) -> None:
        if e and e.get("value") is not None and e.get("ci") and None not in e["ci"]:
            out[name] = (float(e["value"]), (float(e["ci"][0]), float(e["ci"][1])))

    if s["validity"].get("measured"):
        for k, e in s["validity"]["metrics"].items():
            put(f"validity.{k}", e)
        for ax, a in s["validity"]["per_axis"].items():
            for k, e in a.items():
                put(f"validity.{ax}.{k}", e)
    if s["cap"].get("measured"):
        for name, sb in s["cap"]["sets"].items():
            put(f"cap.{name}.overall", sb["overall"])
            for c, e in sb["conditions"].items():
                put(f"cap.{name}.{c}", e)
                for k in ("strict", "consistency"):
                    put(f"cap.{name}.{c}.{k}", e.get(k))
    if s["vp"].get("measured"):
        for r in s["vp"]["rows"]:
            put(f"vp.{r['set']}.{r['mode']}.a_imp", {"value": r["a_imp"], "ci": r["a_imp_ci"]})
            put(f"vp.{r['set']}.{r['mode']}.a_hum", {"value": r["a_hum"], "ci": r["a_hum_ci"]})
    return out


@dataclass(frozen=True)
class Change:
    quantity: str
    a: float
    b: float
    diff: float
    ci: tuple[float, float]
    how: str = "unpaired (stored intervals)"

    @property
    def flagged(self) -> bool:
        return self.ci[0] > 0 or self.ci[1] < 0


def diff_cards(a: dict[str, Any], b: dict[str, Any], level: float = 0.95, *, n_boot: int = 2000,
               seed: int = 0) -> list[Change]:
    """Every quantity shared by cards ``a`` and ``b``, with B − A and its interval (bootstrap of the
    difference from the runs' per-unit tables where both runs keep them, paired over shared units)."""
    from judgeaudit.card.paired import compare, section_units

    out = []
    for kind in ("validity", "cap", "world", "loop"):
        tb = section_units(b, kind)
        for ua in section_units(a, kind):
            for ub in tb:
                out += [Change(q, c.a, c.b, c.diff, c.ci, c.how)
                        for q, c in compare(ua, ub, n_boot=n_boot, seed=seed, level=level).items()]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    qa, qb = quantities(a), quantities(b)
    done = {c.quantity for c in out}
    for k in (qa.keys() & qb.keys()) - done:
        (va, ca), (vb, cb) = qa[k], qb[k]
        half = z * math.hypot((ca[1] - ca[0]) / (2 * z), (cb[1] - cb[0]) / (2 * z))
        d = vb - va
        out.append(Change(k, va, vb, d, (d - half, d + half)))
    return sorted(out, key=lambda c: c.quantity)


def diff_md(a: dict[str, Any], b: dict[str, Any], changes: list[Change]) -> str:
    lines = [f"# card diff: {a['judge']} ({a['generated_at']}) → {b['judge']} ({b['generated_at']})", "",
             "| quantity | A | B | B − A | interval | flagged | interval from |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {c.quantity} | {c.a:.3f} | {c.b:.3f} | {c.diff:+.3f} | [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}] | "
              f"{'**changed**' if c.flagged else ''} | {c.how} |" for c in changes]
    paired = sum(c.how.startswith("paired") for c in changes)
    lines += ["", f"{sum(c.flagged for c in changes)} of {len(changes)} shared quantities changed (interval of the "
              f"difference excludes zero); {paired} paired over shared units, {len(changes) - paired} unpaired."]
    return "\n".join(lines) + "\n"

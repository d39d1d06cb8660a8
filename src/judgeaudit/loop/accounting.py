"""Loop accounting and statistics (blind-spot §3.5, §8), pure functions over the loop's tables.

Unit = a constraint (IFEval) or the answer (GSM8K, HaluEval QA). Against the initial outputs:
``fixed`` = fail → pass, ``broken`` = pass → fail, ``net = (fixed − broken)/N`` (the pass-rate
change); over several rounds also fixed and broken summed over the rounds (each round against its
own start, Fig. 16b; their difference over N is the same net). Also, pooled over every round (one
definition for one round or many): responses acted on (counted once per round); false alarms on
satisfied constraints (share of units passing at the round's start that the report flagged);
break rate on flagged-but-followed vs unflagged units
(units passing at the round's start in responses the regulator acted on); report precision (share
of complaints that name a unit failing at the round's start; a free-text complaint the keyword
table maps to no constraint names none). A bare 1–5 score (C0) names no unit: none of these rates
is defined for it (§8.2), so it reports None for each. Intervals: percentile bootstrap, 2,000
resamples of responses (a response's units kept together), the same resamples for every arm so arm differences
are paired. Spearman ρ of report precision vs net across regulators, with an exact one-sided
(greater) permutation p when the arms are few (≤ 8), else 10,000 random permutations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgeaudit.stats.resample import bootstrap_counts, percentile_interval
from judgeaudit.stats.tests import spearman_test


@dataclass(frozen=True)
class Transitions:
    fixed: int
    broken: int
    n: int

    @property
    def net(self) -> float:
        return (self.fixed - self.broken) / self.n if self.n else float("nan")


def transitions(before: pd.Series, after: pd.Series) -> Transitions:
    """fixed/broken/N of paired unit pass flags."""
    b, a = np.asarray(before, bool), np.asarray(after, bool)
    return Transitions(int((~b & a).sum()), int((b & ~a).sum()), len(b))


def _rate(num: int, den: int) -> float:
    return num / den if den else float("nan")


RATES = ("precision", "false_alarm_rate", "break_rate_flagged", "break_rate_unflagged")
"""The rates a report's named units define; a scalar channel (the 1–5 score, C0) names no unit, so
it has none of them (§8.2: "A scalar names no constraint, so no rate is defined for it")."""


def report_rates(units: pd.DataFrame, complaints: pd.DataFrame, *,
                 scalar: bool = False) -> dict[str, float | int | None]:
    """The report's rates over the rows given, pooled (Σ numerators / Σ denominators) over every
    round in them: acted-on responses (one per response and round), complaints, precision, false
    alarms on units satisfied at the round's start, and the break rates of units satisfied at the
    round's start in responses acted on, flagged vs unflagged. ``scalar``: every rate None."""
    sat = units[units["pass_start"]]
    followed = sat[sat["acted"]]
    fl, unfl = followed[followed["flagged"]], followed[~followed["flagged"]]
    out: dict[str, float | int | None] = {
        "acted_on": len(units.loc[units["acted"], ["item_id", "round"]].drop_duplicates()),
        "n_complaints": len(complaints), "precision": _rate(int(complaints["correct"].sum()), len(complaints)),
        "false_alarm_rate": _rate(int(sat["flagged"].sum()), len(sat)),
        "break_rate_flagged": _rate(int((~fl["pass_end"]).sum()), len(fl)),
        "break_rate_unflagged": _rate(int((~unfl["pass_end"]).sum()), len(unfl)),
        "n_flagged_followed": len(fl), "n_unflagged_followed": len(unfl),
    }
    if scalar:
        out.update({k: None for k in RATES}, n_flagged_followed=None, n_unflagged_followed=None)
    return out


def round_summary(units: pd.DataFrame, complaints: pd.DataFrame, *,
                  scalar: bool = False) -> dict[str, float | int | None]:
    """One regulator-round's accounting (``units``/``complaints``: that round's rows)."""
    t = transitions(units["pass_initial"], units["pass_end"])
    step = transitions(units["pass_start"], units["pass_end"])
    return {
        "pass_rate": float(units["pass_end"].mean()), "loose_pass_rate": float(units["loose_end"].mean()),
        "fixed": t.fixed, "broken": t.broken, "net": t.net,
        "fixed_this_round": step.fixed, "broken_this_round": step.broken, "net_this_round": step.net,
        **report_rates(units, complaints, scalar=scalar),
    }


def _per_item(units: pd.DataFrame, items: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per response: pass_end − pass_initial summed over its units, and its unit count."""
    d = (units["pass_end"].astype(int) - units["pass_initial"].astype(int)).groupby(units["item_id"]).sum()
    n = units.groupby("item_id").size()
    return d.reindex(items).to_numpy(float), n.reindex(items).to_numpy(float)


def net_bootstrap(units: pd.DataFrame, regulators: list[str], rnd: int, *, n_boot: int = 2000,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """Regulator → ``n_boot`` resampled nets at round ``rnd``, responses resampled with replacement,
    one resample matrix shared by every regulator (paired)."""
    items = sorted(units["item_id"].unique())
    if n_boot == 0:
        return {r: np.empty(0) for r in regulators}
    counts = bootstrap_counts(len(items), n_boot, seed)
    out = {}
    for r in regulators:
        sub = units[(units["regulator"] == r) & (units["round"] == rnd)]
        d, n = _per_item(sub, items)
        out[r] = (counts @ d) / (counts @ n)
    return out


def spearman_permutation(x: list[float], y: list[float], *, n_perm: int = 10000, seed: int = 0) -> dict[str, float]:
    """ρ of (x, y) and its one-sided (greater) permutation p (``stats.tests.spearman_test``): every
    permutation of y when n ≤ 8 (p = #{ρ* ≥ ρ}/n!, the identity included), else ``n_perm`` random
    ones with the +1 rule."""
    t = spearman_test(x, y, n_perm=n_perm, seed=seed, alternative="greater")
    return {"rho": t.rho, "p": t.p, "n": t.n, "exact": t.exact}


def summarise(units: pd.DataFrame, complaints: pd.DataFrame, regulators: list[str], rounds: int, *,
              n_boot: int = 2000, seed: int = 0, scalar: Iterable[str] = ()) -> dict[str, object]:
    """The result's numbers: ``before``, per regulator (final round vs initial; fixed and broken
    summed over the rounds, Fig. 16b; the report's rates pooled over the same rounds; per-round
    rows; net CI), paired differences between every two arms, and the precision–net Spearman over
    the arms that have a precision. ``scalar``: the arms whose report is a bare score (no rates)."""
    scalar = set(scalar)
    first = units[(units["regulator"] == regulators[0]) & (units["round"] == 1)]
    before = {"pass_rate": float(first["pass_initial"].mean()), "loose_pass_rate": float(first["loose_initial"].mean()),
              "n_units": len(first), "n_responses": int(first["item_id"].nunique())}
    boot = net_bootstrap(units, regulators, rounds, n_boot=n_boot, seed=seed)
    regs: dict[str, dict[str, object]] = {}
    for r in regulators:
        per_round = []
        for k in range(1, rounds + 1):
            u = units[(units["regulator"] == r) & (units["round"] == k)]
            c = complaints[(complaints["regulator"] == r) & (complaints["round"] == k)]
            per_round.append({"round": k, **round_summary(u, c, scalar=r in scalar)})
        last = per_round[-1]
        pooled = report_rates(units[(units["regulator"] == r) & (units["round"] <= rounds)],
                              complaints[(complaints["regulator"] == r) & (complaints["round"] <= rounds)],
                              scalar=r in scalar)
        regs[r] = {"fixed": last["fixed"], "broken": last["broken"], "net": last["net"],
                   "net_ci": list(percentile_interval(boot[r])),
                   "fixed_summed": sum(x["fixed_this_round"] for x in per_round),
                   "broken_summed": sum(x["broken_this_round"] for x in per_round),
                   "pass_rate": last["pass_rate"], **{k: pooled[k] for k in ("acted_on", *RATES)},
                   "rounds": per_round}
    diffs = {f"{a} - {b}": {"net": regs[a]["net"] - regs[b]["net"],
                            "ci": list(percentile_interval(boot[a] - boot[b]))}
             for a, b in itertools.combinations(regulators, 2)}
    with_p = [r for r in regulators if regs[r]["precision"] is not None
              and regs[r]["precision"] == regs[r]["precision"]]
    sp = spearman_permutation([regs[r]["precision"] for r in with_p], [regs[r]["net"] for r in with_p])
    return {"before": before, "regulators": regs, "differences": diffs,
            "precision_vs_net": {**sp, "regulators": with_p}, "n_boot": n_boot}

"""Loop accounting and statistics (blind-spot §3.5, §8), pure functions over the loop's tables.

Unit = a constraint (IFEval) or the answer (GSM8K, HaluEval QA). Against the initial outputs:
``fixed`` = fail → pass, ``broken`` = pass → fail, ``net = (fixed − broken)/N`` (the pass-rate
change). Also: responses acted on; false alarms on satisfied constraints (share of units passing at
the round's start that the report flagged); break rate on flagged-but-followed vs unflagged units
(units passing at the round's start in responses the regulator acted on); report precision (share
of complaints that name a unit failing at the round's start; a free-text complaint the keyword
table maps to no constraint names none). Intervals: percentile bootstrap, 2,000 resamples of
responses (a response's units kept together), the same resamples for every arm so arm differences
are paired. Spearman ρ of report precision vs net across regulators, with an exact one-sided
(greater) permutation p when the arms are few (≤ 8), else 10,000 random permutations.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgeaudit.stats.resample import bootstrap_counts, percentile_ci
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


def round_summary(units: pd.DataFrame, complaints: pd.DataFrame) -> dict[str, float | int]:
    """One regulator-round's accounting (``units``/``complaints``: that round's rows)."""
    t = transitions(units["pass_initial"], units["pass_end"])
    step = transitions(units["pass_start"], units["pass_end"])
    sat = units[units["pass_start"]]
    followed = sat[sat["acted"]]
    fl, unfl = followed[followed["flagged"]], followed[~followed["flagged"]]
    return {
        "pass_rate": float(units["pass_end"].mean()), "loose_pass_rate": float(units["loose_end"].mean()),
        "fixed": t.fixed, "broken": t.broken, "net": t.net,
        "fixed_this_round": step.fixed, "broken_this_round": step.broken, "net_this_round": step.net,
        "acted_on": int(units.loc[units["acted"], "item_id"].nunique()),
        "n_complaints": len(complaints), "precision": _rate(int(complaints["correct"].sum()), len(complaints)),
        "false_alarm_rate": _rate(int(sat["flagged"].sum()), len(sat)),
        "break_rate_flagged": _rate(int((~fl["pass_end"]).sum()), len(fl)),
        "break_rate_unflagged": _rate(int((~unfl["pass_end"]).sum()), len(unfl)),
        "n_flagged_followed": len(fl), "n_unflagged_followed": len(unfl),
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


def ci(samples: np.ndarray, level: float = 0.95) -> list[float]:
    """Percentile interval (NaNs when there are no resamples)."""
    if np.size(samples) == 0:
        return [float("nan"), float("nan")]
    lo, hi = percentile_ci(samples, level)
    return [float(lo), float(hi)]


def spearman_permutation(x: list[float], y: list[float], *, n_perm: int = 10000, seed: int = 0) -> dict[str, float]:
    """ρ of (x, y) and its one-sided (greater) permutation p (``stats.tests.spearman_test``): every
    permutation of y when n ≤ 8 (p = #{ρ* ≥ ρ}/n!, the identity included), else ``n_perm`` random
    ones with the +1 rule."""
    t = spearman_test(x, y, n_perm=n_perm, seed=seed, alternative="greater")
    return {"rho": t.rho, "p": t.p, "n": t.n, "exact": t.exact}


def summarise(units: pd.DataFrame, complaints: pd.DataFrame, regulators: list[str], rounds: int, *,
              n_boot: int = 2000, seed: int = 0) -> dict[str, object]:
    """The result's numbers: ``before``, per regulator (final round vs initial, per-round rows,
    net CI), paired differences between every two arms, and the precision–net Spearman."""
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
            per_round.append({"round": k, **round_summary(u, c)})
        last = per_round[-1]
        allc = complaints[complaints["regulator"] == r]
        regs[r] = {"fixed": last["fixed"], "broken": last["broken"], "net": last["net"], "net_ci": ci(boot[r]),
                   "acted_on": per_round[0]["acted_on"], "pass_rate": last["pass_rate"],
                   "precision": _rate(int(allc["correct"].sum()), len(allc)),
                   "false_alarm_rate": per_round[0]["false_alarm_rate"],
                   "break_rate_flagged": per_round[0]["break_rate_flagged"],
                   "break_rate_unflagged": per_round[0]["break_rate_unflagged"], "rounds": per_round}
    diffs = {f"{a} - {b}": {"net": regs[a]["net"] - regs[b]["net"], "ci": ci(boot[a] - boot[b])}
             for a, b in itertools.combinations(regulators, 2)}
    with_p = [r for r in regulators if regs[r]["precision"] == regs[r]["precision"]]
    sp = spearman_permutation([regs[r]["precision"] for r in with_p], [regs[r]["net"] for r in with_p])
    return {"before": before, "regulators": regs, "differences": diffs,
            "precision_vs_net": {**sp, "regulators": with_p}, "n_boot": n_boot}

"""Per-answer rank correlations of a world run (blind-spot §3.7: "we test rank correlations by
permutation"; §4–6, P4, P17, P19, P20, P22).

The paper correlates, over answers, two per-answer quantities with a property of the answer:

* ``gain`` — the paired gain of arm b over arm a on one answer: the share of its judged units
  (the answer itself, its sentences or its constraints) b gets right minus the share a gets right,
  on the units both arms scored (P17(a), P19(b), P20: per-item gain vs answer variety or I(A;S|q));
* ``false_alarms`` — the complaints an arm raises on one error-free answer's error-free units
  (P17(b), P19(c), P22(b): blind false alarms vs the answer's class).

The property is a covariate: ``world_chars`` (the world's length), ``output_chars``, ``units``
(judged units), or any numeric key of the items' ``meta`` (a user's own annotation, e.g. answer
variety). Each pair is tested with ``stats.tests.spearman_test`` (exact for n ≤ 8, else Monte
Carlo with the +1 rule), by default one-sided in the predicted direction (ρ > 0; the paper reports
P17(a)'s ρ = −0.096 with p = 0.97, a one-sided p); answers without the covariate are left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real

import numpy as np
import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.records import WorldItem
from judgeaudit.stats.tests import spearman_test

BUILTIN = {
    "world_chars": lambda it: float(len(it.world)) if it.world is not None else float("nan"),
    "output_chars": lambda it: float(len(it.output)),
    "units": lambda it: float(len(it.units)) if it.units else float("nan"),
}
DEFAULT_COVARIATES = ("world_chars",)


def covariate_table(items: Sequence[WorldItem], names: Sequence[str]) -> pd.DataFrame:
    """``item_id`` × covariate values (NaN where an item has none); ``InputError`` for a name no item
    carries or a non-numeric value."""
    cols: dict[str, list[float]] = {}
    for name in names:
        if name in BUILTIN:
            cols[name] = [BUILTIN[name](it) for it in items]
            continue
        if not any(name in it.meta for it in items):
            known = sorted({*BUILTIN, *(k for it in items for k in it.meta)})
            raise InputError(f"no item has the covariate {name!r}; known: {', '.join(known)}", field="--correlate")
        vals = []
        for it in items:
            v = it.meta.get(name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, Real)):
                raise InputError(f"covariate {name!r} of item {it.item_id} is not a number: {v!r}",
                                 field="--correlate")
            vals.append(float("nan") if v is None else float(v))
        cols[name] = vals
    return pd.DataFrame(cols, index=pd.Index([it.item_id for it in items], name="item_id"))


def answer_gains(dec: pd.DataFrame, judge: str, a: str, b: str) -> pd.Series:
    """Per answer: share of units arm ``b`` gets right minus share arm ``a`` gets right (units both scored)."""
    cols = ["item_id", "unit", "gold", "flagged"]
    da = dec.loc[(dec["judge"] == judge) & (dec["arm"] == a) & dec["flagged"].notna(), cols]
    db = dec.loc[(dec["judge"] == judge) & (dec["arm"] == b) & dec["flagged"].notna(), cols]
    m = da.merge(db, on=["item_id", "unit", "gold"], suffixes=("_a", "_b"))
    gold = m["gold"].astype(bool)
    d = (m["flagged_b"].astype(bool) == gold).astype(float) - (m["flagged_a"].astype(bool) == gold).astype(float)
    return d.groupby(m["item_id"]).mean()


def answer_false_alarms(dec: pd.DataFrame, judge: str, arm: str) -> pd.Series:
    """Per error-free answer (every scored unit clean): its complaints in ``arm``."""
    s = dec[(dec["judge"] == judge) & (dec["arm"] == arm) & dec["flagged"].notna()]
    g = s.assign(gold=s["gold"].astype(bool)).groupby("item_id").agg(defective=("gold", "any"),
                                                                        complaints=("complaints", "sum"))
    return g.loc[~g["defective"], "complaints"].astype(float)


def _row(values: pd.Series, cov: pd.Series, **kw) -> dict:
    x = cov.reindex(values.index).to_numpy(float)
    t = spearman_test(x, values.to_numpy(float), n_perm=kw.pop("n_perm"), seed=kw.pop("seed"),
                      alternative=kw.pop("alternative"))
    return {**kw, "answers": int(len(values)), "missing_covariate": int(np.isnan(x).sum()), **t.to_dict()}


def correlations(dec: pd.DataFrame, covariates: pd.DataFrame, judges: Sequence[str], arms: Sequence[str], *,
                 n_perm: int = 9999, seed: int = 0, alternative: str = "greater") -> list[dict]:
    """Spearman rows: per judge, the gain of every arm over the first and the false alarms of every arm,
    against every covariate. ``alternative`` defaults to the direction the paper predicts for both
    quantities (P17(a), P17(b), P19(c), P22(b): ρ > 0), one-sided."""
    rows = []
    for judge in judges:
        for cov in covariates:
            c = covariates[cov]
            for b in arms[1:]:
                rows.append(_row(answer_gains(dec, judge, arms[0], b), c, judge=judge, quantity="gain", a=arms[0],
                                 b=b, covariate=cov, n_perm=n_perm, seed=seed, alternative=alternative))
            for arm in arms:
                rows.append(_row(answer_false_alarms(dec, judge, arm), c, judge=judge, quantity="false_alarms",
                                 a=arm, b=None, covariate=cov, n_perm=n_perm, seed=seed, alternative=alternative))
    return rows

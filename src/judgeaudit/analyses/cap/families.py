"""Profile distance within and across model families (conditional-accuracy-profiles.txt App. J): the
L1 distance between two judges' CAP profiles on one set, and Table 17's summary.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITION_CODES, MAIN_STATUSES
from judgeaudit.families import model_key, same_family, shared, vendors

#: How two judges of an L1 row relate (Appendix J compares within-family pairs with cross-family ones).
L1_RELATIONS = ("within family", "cross family", "same model", "overlapping families", "family unknown")


def _relation(fa: str | None, fb: str | None, ma: str | None, mb: str | None) -> str:
    if ma is not None and ma == mb:
        return "same model"  # one model under two prompt modes (LLMBar GPT-4/Vanilla vs GPT-4/CoT)
    common = shared(fa, fb)
    if common is None:
        return "family unknown"
    if same_family(fa, fb):
        return "within family"
    return "overlapping families" if common else "cross family"


def _l1_table(cells: pd.DataFrame, families: dict[str, str | None],
              models: dict[str, str | None] | None = None) -> pd.DataFrame:
    """Appendix J: L1 distance Σ_c |CAP_c(j1) − CAP_c(j2)| between two judges' profiles on the same
    set, over the conditions of the set's main table (Table 3/5: direct and approximate cells,
    C1–C8, so C8 counts wherever it is reported: 93.1 = 84.8 over C1–C7 + 8.3 for C8) that both
    judges have. Reference instruments (no family) are left out; each row says how the two judges
    relate (``L1_RELATIONS``): the same model under two prompt modes is not a within-family pair,
    and an unknown family is never within-family nor cross-family."""
    rows = []
    models = {j: model_key(m) for j, m in (models or {}).items()}
    known = {j for j in cells["judge_id"].unique() if vendors(families.get(j)) != frozenset()}
    main = cells[(cells["metric"] == "value") & cells["coverage"].isin(MAIN_STATUSES)
                 & cells["condition"].isin(CONDITION_CODES) & cells["value"].notna()
                 & cells["judge_id"].isin(known)]
    for s, g in main.groupby("set", sort=False):
        if g["judge_id"].nunique() < 2:
            continue                     # one judge on the set: no pair to compare (and no profile to pivot)
        prof = g.pivot_table(index="judge_id", columns="condition", values="value", aggfunc="first")
        values, has, conds = prof.to_numpy(dtype=float), prof.notna().to_numpy(), np.asarray(prof.columns)
        for ia, ib in combinations(range(len(prof.index)), 2):
            both = has[ia] & has[ib]
            if not both.any():
                continue
            a, b = prof.index[ia], prof.index[ib]
            fa, fb = families.get(a), families.get(b)
            relation = _relation(fa, fb, models.get(a), models.get(b))
            rows.append({"set": s, "judge_a": a, "judge_b": b, "family_a": fa, "family_b": fb,
                         "same_family": relation == "within family", "relation": relation,
                         "l1": float(np.abs(values[ia, both] - values[ib, both]).sum()),
                         "conditions": ",".join(conds[both])})
    return pd.DataFrame(rows, columns=["set", "judge_a", "judge_b", "family_a", "family_b", "same_family",
                                       "relation", "l1", "conditions"])


def l1_summary(l1: pd.DataFrame) -> pd.DataFrame:
    """Table 17's shape: per set, mean L1 of within-family pairs (per family) and the average over
    cross-family pairs; same-model pairs, overlapping and unknown families enter neither."""
    rows = []
    for s, g in l1.groupby("set", sort=False):
        for fam, gf in g[g["relation"] == "within family"].groupby("family_a"):
            rows.append({"set": s, "pair": f"{fam} (WF)", "l1": gf["l1"].mean(), "n_pairs": len(gf)})
        cf = g[g["relation"] == "cross family"]
        if len(cf):
            rows.append({"set": s, "pair": "cross-family avg.", "l1": cf["l1"].mean(), "n_pairs": len(cf)})
    return pd.DataFrame(rows, columns=["set", "pair", "l1", "n_pairs"])

"""Cross-set agreement of judge rankings (conditional-accuracy-profiles.txt App. M, Eq. 2): Spearman ρ
of judges' values per condition shared by two sets, with a permutation p-value.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITION_CODES
from judgeaudit.stats.tests import spearman_permutation


def _spearman_table(cells: pd.DataFrame, sets: list[str], n_perm: int,
                    rng: np.random.Generator) -> pd.DataFrame:
    """Eq. 2: Spearman ρ of judge values per condition measurable on both sets (≥ 3 shared
    judges), with a permutation p-value; coverage statuses of both cells are carried."""
    rows = []
    v = cells[(cells["metric"] == "value") & cells["value"].notna()
              & cells["condition"].isin(CONDITION_CODES)]
    at = v.groupby(["set", "condition"], sort=False).indices     # (set, condition) → its rows' positions
    judge_ids = v["judge_id"].to_numpy(dtype=object)
    judges = {k: set(judge_ids[i]) for k, i in at.items()}
    for a, b in combinations(sets, 2):
        for code in CONDITION_CODES:
            ja, jb = judges.get((a, code)), judges.get((b, code))
            if ja is None or jb is None:
                continue
            shared = sorted(ja & jb)
            if len(shared) < 3:
                continue
            xa = v.iloc[at[(a, code)]].set_index("judge_id").loc[shared]
            xb = v.iloc[at[(b, code)]].set_index("judge_id").loc[shared]
            rho, p = spearman_permutation(xa["value"].to_numpy(), xb["value"].to_numpy(), n_perm=n_perm,
                                          seed=rng)
            rows.append({"condition": code, "set_a": a, "set_b": b, "n_judges": len(shared), "rho": rho,
                         "p": p, "coverage_a": xa["coverage"].iloc[0], "coverage_b": xb["coverage"].iloc[0]})
    return pd.DataFrame(rows, columns=["condition", "set_a", "set_b", "n_judges", "rho", "p", "coverage_a",
                                       "coverage_b"])

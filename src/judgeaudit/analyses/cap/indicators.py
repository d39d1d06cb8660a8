"""Per-row verdict indicators of a pairwise judge (conditional-accuracy-profiles.txt §3.3, App. D, H,
L): each item's correctness under both orderings, their agreement, the failure kind of each, and the
strict / consistency indicators of a pair of presentation variants.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.analyses.cap.conditions import FailurePolicy
from judgeaudit.errors import InputError


def _prep_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("pair_id", "label", "source_set") if c not in pairs.columns]
    if missing:
        raise InputError(f"pairs table lacks column(s) {', '.join(missing)}", field=missing[0])
    df = pairs.copy()
    if "base_id" not in df.columns:
        df["base_id"] = df["pair_id"]
    df["base_id"] = df["base_id"].fillna(df["pair_id"])
    if "variant" not in df.columns:
        df["variant"] = "original"
    df["variant"] = df["variant"].fillna("original")
    if "augmented" not in df.columns:
        df["augmented"] = False
    df["augmented"] = df["augmented"].fillna(False).astype(bool)
    if "subset" not in df.columns:
        df["subset"] = None
    return df


def _join_judge(rows: pd.DataFrame, table: pd.DataFrame, policy: FailurePolicy) -> pd.DataFrame:
    """Row-aligned verdict indicators of one judge on one set's rows (the judge's first row of each pair joined
    to the set's rows by ``pair_id``), built from arrays into one frame."""
    t = table.drop_duplicates("pair_id")
    at = pd.Index(t["pair_id"]).get_indexer(rows["pair_id"])
    hit = at >= 0

    def col(name: str) -> np.ndarray:
        """The judge's column on the set's rows: None where the judge has no row or no value."""
        v = t[name].to_numpy(dtype=object, na_value=None)
        out = np.full(len(at), None, dtype=object)
        out[hit] = v[at[hit]]
        return out

    label = rows["label"].to_numpy(dtype=object, na_value=None)
    scope = hit & pd.notna(col("judge_id")) & rows["label"].isin(["A", "B"]).to_numpy()
    out: dict[str, np.ndarray] = {"scope": scope}
    for o in ("ab", "ba"):
        choice, fail = col(f"choice_{o}"), col(f"failure_{o}")
        has_fail = pd.notna(fail)
        ok = pd.notna(choice) & ~has_fail
        out[f"ok_{o}"] = ok & scope
        # a missing choice without a recorded failure kind is a parse failure
        kind = np.where(has_fail, fail, "parse")
        out[f"fail_{o}"] = np.where(scope & ~ok, kind, None)
        out[f"choice_{o}"] = np.where(ok, choice, None)
        out[f"corr_{o}"] = (choice == label) & ok
    out["same"] = (out["choice_ab"] == out["choice_ba"]) & out["ok_ab"] & out["ok_ba"]
    out["valid"] = out["ok_ab"] & out["ok_ba"] if policy == "exclude" else scope
    return pd.DataFrame(out, index=rows.index)


def _paired(rows: pd.DataFrame, ind: pd.DataFrame, v1: str, v2: str,
            units: pd.Index) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Series]:
    """Unit-level strict/consistency indicators for variant pairs (x1, x2) of one base item:
    per ordering o, strict_o = [v_o(x1) = v_o(x2) = a*], cons_o = [v_o(x1) = v_o(x2)]; the unit
    value is the mean over the two orderings (both orderings of both variants required)."""
    sel1 = rows["variant"] == v1
    sel2 = rows["variant"] == v2
    a = ind[sel1].assign(base_id=rows.loc[sel1, "base_id"]).drop_duplicates("base_id").set_index("base_id")
    b = ind[sel2].assign(base_id=rows.loc[sel2, "base_id"]).drop_duplicates("base_id").set_index("base_id")
    common = a.index.intersection(b.index)
    a, b = a.loc[common], b.loc[common]
    valid = (a["valid"] & b["valid"]).to_numpy()
    strict = 0.5 * ((a["corr_ab"].to_numpy() & b["corr_ab"].to_numpy()).astype(float)
                    + (a["corr_ba"].to_numpy() & b["corr_ba"].to_numpy()).astype(float))
    cons = 0.5 * ((a["choice_ab"].to_numpy() == b["choice_ab"].to_numpy()) & a["ok_ab"].to_numpy()
                  & b["ok_ab"].to_numpy()).astype(float) \
        + 0.5 * ((a["choice_ba"].to_numpy() == b["choice_ba"].to_numpy()) & a["ok_ba"].to_numpy()
                 & b["ok_ba"].to_numpy()).astype(float)
    pos = units.get_indexer(common)
    n_u = len(units)
    den_u = np.zeros(n_u)
    s_u = np.zeros(n_u)
    c_u = np.zeros(n_u)
    den_u[pos] = valid
    s_u[pos] = strict
    c_u[pos] = cons
    scope = pd.Series((a["scope"] & b["scope"]).to_numpy(), index=common)
    return s_u, c_u, den_u, scope


PAIR_VERDICT_COLUMNS = ("set", "pair_id", "base_id", "variant", "label", "judge_id", "choice_ab", "choice_ba",
                        "rationale_ab", "rationale_ba", "failure_ab", "failure_ba")
"""The columns of ``pair_verdicts``: a pair's set, resampling unit, variant and correct side (``label``, a*)
beside one judge's verdict in each order (``choice_ba`` in the original frame), its rationales and failures."""


def pair_verdicts(pairs: pd.DataFrame, judges: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per judge and pair it has verdicts on (``PAIR_VERDICT_COLUMNS``): the table a CAP run records
    beside its per-unit cells, so the units behind a cell can be shown with what the judge said."""
    p = _prep_pairs(pairs).drop_duplicates("pair_id")[["source_set", "pair_id", "base_id", "variant", "label"]]
    p = p.rename(columns={"source_set": "set"})
    for col in ("set", "pair_id", "base_id", "variant"):
        p[col] = p[col].astype(str)
    keep = ["pair_id", "choice_ab", "choice_ba", "rationale_ab", "rationale_ba", "failure_ab", "failure_ba"]
    frames = [p.merge(t.drop_duplicates("pair_id")[keep].assign(judge_id=jid), on="pair_id", how="inner")
              for jid, t in judges.items()]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PAIR_VERDICT_COLUMNS))
    out = out[list(PAIR_VERDICT_COLUMNS)].astype(object)
    return out.where(out.notna(), None)

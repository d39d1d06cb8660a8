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


def _first_rows(base: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The positions ``at`` keeps: the first row of each base item among them."""
    return at[~pd.Index(base[at]).duplicated()]


def _paired(rows: pd.DataFrame, ind: pd.DataFrame, v1: str, v2: str,
            units: pd.Index) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Series]:
    """Unit-level strict/consistency indicators for variant pairs (x1, x2) of one base item:
    per ordering o, strict_o = [v_o(x1) = v_o(x2) = a*], cons_o = [v_o(x1) = v_o(x2)]; the unit
    value is the mean over the two orderings (both orderings of both variants required)."""
    base = rows["base_id"].to_numpy(dtype=object)
    variant = rows["variant"].to_numpy(dtype=object)
    first1 = _first_rows(base, np.flatnonzero(variant == v1))    # each base item's first row as x1
    first2 = _first_rows(base, np.flatnonzero(variant == v2))
    at2 = pd.Index(base[first2]).get_indexer(base[first1])
    both = at2 >= 0                                               # base items with both variants
    i1, i2 = first1[both], first2[at2[both]]
    common = pd.Index(base[i1])

    def col(name: str) -> tuple[np.ndarray, np.ndarray]:
        v = ind[name].to_numpy()
        return v[i1], v[i2]

    (va, vb), (sa, sb) = col("valid"), col("scope")
    (ca_ab, cb_ab), (ca_ba, cb_ba) = col("corr_ab"), col("corr_ba")
    (ha_ab, hb_ab), (ha_ba, hb_ba) = col("choice_ab"), col("choice_ba")
    (oa_ab, ob_ab), (oa_ba, ob_ba) = col("ok_ab"), col("ok_ba")
    valid = va & vb
    strict = 0.5 * ((ca_ab & cb_ab).astype(float) + (ca_ba & cb_ba).astype(float))
    cons = 0.5 * ((ha_ab == hb_ab) & oa_ab & ob_ab).astype(float) \
        + 0.5 * ((ha_ba == hb_ba) & oa_ba & ob_ba).astype(float)
    pos = units.get_indexer(common)
    n_u = len(units)
    den_u = np.zeros(n_u)
    s_u = np.zeros(n_u)
    c_u = np.zeros(n_u)
    den_u[pos] = valid
    s_u[pos] = strict
    c_u[pos] = cons
    scope = pd.Series(sa & sb, index=common)
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

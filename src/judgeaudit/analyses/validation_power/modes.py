"""The two input modes of Definition 6 (construct-validity.txt): a label set prepared for per-item
mode (one response → its label) or paired mode (two responses → which one the set prefers, side
order randomised with a fixed seed), and the content-free descriptions of a prepared set
(§5.4's length rules, the between-group share of label variance, whether a condition is recorded)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.errors import InputError


ITEM_PREFERRED, ITEM_REJECTED = "preferred", "rejected"


@dataclass(frozen=True)
class Prepared:
    """One label set in one input mode, ready for the family (internal; exposed for tests).

    In item mode ``texts_b`` is None and ``y`` holds item labels; in paired mode ``y`` is
    ``'A'|'B'`` after side randomisation.
    """

    mode: str
    texts_a: list[str]
    texts_b: list[str] | None
    y: np.ndarray
    groups: np.ndarray
    cond_a: np.ndarray | None
    cond_b: np.ndarray | None
    human: list[list[str]] | None
    n_ties_dropped: int = 0
    n_swapped: int = 0

    @property
    def n(self) -> int:
        return len(self.y)

    def responses(self, rows: np.ndarray) -> list[str]:
        """The response texts of ``rows`` (both sides in paired mode)."""
        a = [self.texts_a[i] for i in rows]
        return a if self.texts_b is None else a + [self.texts_b[i] for i in rows]


def is_paired_table(df: pd.DataFrame) -> bool:
    """True for a paired table (has ``response_a``/``response_b``), False for an item table."""
    return {"response_a", "response_b"} <= set(df.columns)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _clean_str(v: Any) -> str:
    return "" if _missing(v) else str(v)


def _groups(df: pd.DataFrame, fallback: str) -> np.ndarray:
    if "group" in df.columns:
        g = df["group"].astype(object)
        fb = df[fallback].astype(str) if fallback in df.columns else pd.Series(np.arange(len(df)).astype(str))
        g = g.where(g.notna() & (g.astype(str) != ""), fb.values)
        return g.astype(str).to_numpy()
    if fallback in df.columns:
        return df[fallback].astype(str).to_numpy()
    return np.arange(len(df)).astype(str)


def _conditions(df: pd.DataFrame, col: str) -> np.ndarray | None:
    """Column ``col`` as strings; None where it is absent or any row lacks a value."""
    if col not in df.columns:
        return None
    series = df[col]
    if series.isna().any() or (series.astype(str) == "").any():
        return None
    return series.astype(str).to_numpy()


def _decided_pairs(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The pairs labelled ``A`` or ``B`` (reindexed), and how many tie pairs were dropped."""
    keep = df["label"].astype(str).isin(["A", "B"]).to_numpy()
    return df.loc[keep].reset_index(drop=True), int((~keep).sum())


def _human_lists(df: pd.DataFrame) -> list[list[str]] | None:
    if "human_labels" not in df.columns:
        return None
    out = []
    for v in df["human_labels"]:
        if _missing(v):
            out.append([])
        else:
            out.append([str(x) for x in list(v)])
    return out if any(len(x) >= 2 for x in out) else None


def prepare_paired(df: pd.DataFrame, *, seed: int = 0) -> Prepared:
    """Paired mode (Def. 6): drop ties, randomise side order with ``seed``, keep groups.

    A swapped pair exchanges texts, conditions, its label and its human labels.
    """
    _require(df, ("response_a", "response_b", "label"))
    d, n_ties = _decided_pairs(df)
    y = d["label"].astype(str).to_numpy()
    a = [_clean_str(x) for x in d["response_a"]]
    b = [_clean_str(x) for x in d["response_b"]]
    groups = _groups(d, "prompt")
    ca, cb = _conditions(d, "condition_a"), _conditions(d, "condition_b")
    if ca is None or cb is None:
        ca = cb = None
    human = _human_lists(d)
    flip = np.random.default_rng(seed).random(len(d)) < 0.5
    ta = [bb if f else aa for aa, bb, f in zip(a, b, flip, strict=True)]
    tb = [aa if f else bb for aa, bb, f in zip(a, b, flip, strict=True)]
    y = np.where(flip, np.where(y == "A", "B", "A"), y)
    if ca is not None:
        ca, cb = np.where(flip, cb, ca), np.where(flip, ca, cb)
    if human is not None:
        sw = {"A": "B", "B": "A"}
        human = [[sw.get(h, h) for h in hs] if f else hs for hs, f in zip(human, flip, strict=True)]
    return Prepared("paired", ta, tb, y, groups, ca, cb, human,
                    n_ties_dropped=n_ties, n_swapped=int(flip.sum()))


def prepare_item(df: pd.DataFrame) -> Prepared:
    """Per-item mode (Def. 6). A paired table is split into its responses, labelled
    ``preferred``/``rejected`` (tie pairs dropped); an item table is used as is."""
    if is_paired_table(df):
        _require(df, ("label",))
        d, n_ties = _decided_pairs(df)
        la = np.where(d["label"].astype(str).to_numpy() == "A", ITEM_PREFERRED, ITEM_REJECTED)
        lb = np.where(la == ITEM_PREFERRED, ITEM_REJECTED, ITEM_PREFERRED)
        texts = [_clean_str(x) for x in d["response_a"]] + [_clean_str(x) for x in d["response_b"]]
        groups = np.concatenate([_groups(d, "prompt")] * 2)
        ca, cb = _conditions(d, "condition_a"), _conditions(d, "condition_b")
        cond = np.concatenate([ca, cb]) if ca is not None and cb is not None else None
        human = _human_lists(d)
        if human is not None:
            ma = {"A": ITEM_PREFERRED, "B": ITEM_REJECTED}
            mb = {"A": ITEM_REJECTED, "B": ITEM_PREFERRED}
            human = [[ma.get(h, h) for h in hs] for hs in human] + [[mb.get(h, h) for h in hs] for hs in human]
        return Prepared("item", texts, None, np.concatenate([la, lb]), groups, cond, None, human,
                        n_ties_dropped=n_ties)
    _require(df, ("text", "label"))
    d = df.loc[df["label"].notna()].reset_index(drop=True)
    cond = _conditions(d, "condition")
    return Prepared("item", [_clean_str(x) for x in d["text"]], None, d["label"].astype(str).to_numpy(),
                    _groups(d, "item_id"), cond, None, _human_lists(d))


def _require(df: pd.DataFrame, cols: Sequence[str]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(f"table lacks column(s) {', '.join(missing)}", field=missing[0])


def length_rules(prep: Prepared) -> dict[str, Any]:
    """Content-free rules of §5.4 on a paired set: how often the preferred side is the longer
    (in characters), and so the accuracy of "prefer the longer"/"prefer the shorter". Pairs of
    equal length are excluded (counted in ``n_equal_length``)."""
    la = np.array([len(t) for t in prep.texts_a])
    lb = np.array([len(t) for t in prep.texts_b or []])
    pref = np.where(prep.y == "A", la, lb)
    other = np.where(prep.y == "A", lb, la)
    unequal = pref != other
    n_u = int(unequal.sum())
    rate = float(np.mean(pref[unequal] > other[unequal])) if n_u else float("nan")
    return {"preferred_longer_rate": rate, "prefer_longer_accuracy": rate,
            "prefer_shorter_accuracy": 1.0 - rate if n_u else float("nan"),
            "n_equal_length": int((~unequal).sum())}


def between_group_label_share(y: np.ndarray, groups: np.ndarray) -> float:
    """η² of the label (mean over its categories' indicators) on the group key: the share of
    label variance that lies between groups. A within-group permutation keeps each group's label
    composition, so where this share is high a reader that recognises the group from surface
    form recovers the labels under the null too (the null then sits above chance)."""
    gvals, ginv = np.unique(groups, return_inverse=True)
    sizes = np.bincount(ginv).astype(float)
    shares = []
    for c in np.unique(y):
        z = (y == c).astype(float)
        total = np.sum((z - z.mean()) ** 2)
        if total == 0:
            continue
        means = np.bincount(ginv, weights=z) / sizes
        shares.append(float(np.sum(sizes * (means - z.mean()) ** 2) / total))
    return float(np.mean(shares)) if shares else 0.0


def has_condition(prep: Prepared) -> bool:
    """True where the set records a generative condition with at least two values (in paired
    mode: and the two sides of at least one pair differ in condition)."""
    if prep.cond_a is None:
        return False
    if prep.cond_b is not None and not np.any(prep.cond_a != prep.cond_b):
        return False
    vals = set(prep.cond_a) | (set(prep.cond_b) if prep.cond_b is not None else set())
    return len(vals) >= 2

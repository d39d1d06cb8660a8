"""Validation power of a label set: how much of it a reader of surface form alone recovers.

Implements construct-validity.txt Definitions 5–6, Corollary 2, §4.4 and Appendix E:

* the frozen impoverished family (``length_only``, ``numeric_surface``, ``surface_ngram``), each
  ending in ``LogisticRegression(max_iter=2000, class_weight="balanced")``, plus the
  provenance-recoverable predictor (§4.4 item 3) where a set records its generative condition;
* both input modes of Definition 6: per-item (one response → its label) and paired (two
  responses → which one the set prefers; side order randomised with a fixed seed, features
  antisymmetric, ``φ(a) − φ(b)``);
* App. E scoring: five folds, ``GroupKFold`` on the group key where there are ≥ 5 groups, else
  ``KFold(shuffle=True)`` with a fixed seed; κ of the *pooled* out-of-fold predictions (never a
  mean of per-fold κ); every member refit on labels permuted within group under the same folds
  as its null; ``a_imp`` is the best member, with a bootstrap interval over groups that includes
  the selection of the best member, and a null that is the max over members per permutation;
* the human ceiling ``a_hum``: the same statistic as ``a_imp`` (κ of a prediction against the
  label, pooled), with one annotator as the prediction and the strict majority of the other
  annotators as the label, on a_imp's label space, bootstrapped over groups (or a user-supplied
  value and interval); ``VP = a_hum − a_imp`` and whether the two intervals separate (App. E:
  "where the two overlap we report VP as not resolvable");
* every permutation p-value with its resolution 1/(B + 1) beside it, and Benjamini–Hochberg
  adjusted p-values across the rows of each table (App. A.2);
* transfer (App. E, last sentence; §5.4 [48]): each member fit on one set, scored on another.

Every feature extractor takes ONE string: no code path delivers a prompt, evidence or context to
a member (App. E, "The invariant is structural").

Input tables:

* item table: ``item_id, text, label, group, condition`` (+ optional ``human_labels``: a list of
  labels per row);
* paired table: ``records.PAIRWISE_COLUMNS`` (``label`` in ``'A'|'B'|'tie'``; ties are dropped
  from scoring and counted) + optional ``human_labels`` (list of ``'A'|'B'|'tie'``).

A paired table is audited in both modes: per-item mode splits every pair into its two responses
labelled ``preferred`` / ``rejected`` (Table 7's per-item n is twice its pairs). An item table
has no paired mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from judgeaudit.errors import InputError
from judgeaudit.stats.agreement import category_counts, cohen_kappa, majority_label
from judgeaudit.stats.resample import (
    bootstrap_counts,
    min_attainable_p,
    percentile_ci,
    permutation_p,
    permute_within_groups,
)
from judgeaudit.stats.tests import bh_adjust

# ---------------------------------------------------------------------------------------------
# The frozen family (App. E). A test asserts these constants; do not edit them.
# ---------------------------------------------------------------------------------------------

FAMILY: tuple[str, ...] = ("length_only", "numeric_surface", "surface_ngram")
"""The three frozen impoverished predictors of App. E, ordered by how much surface they see."""

PROVENANCE_MEMBER = "provenance_recoverable"
"""§4.4 item 3: a predictor of the generative condition C from the text, mapped to a label by g."""

MEMBERS: tuple[str, ...] = FAMILY + (PROVENANCE_MEMBER,)

HEDGES: tuple[str, ...] = ("may", "might", "could", "appears", "suggests", "possibly", "likely",
                           "generally", "typically", "often", "tends to", "in some cases")
"""App. E closed hedge list, counted case-insensitively as substrings."""

UNIVERSALS: tuple[str, ...] = ("all", "always", "never", "every", "any", "invariably", "universally")
"""App. E closed universal-quantifier list, counted case-insensitively as substrings."""

NUMERIC_SURFACE_FEATURES: tuple[str, ...] = (
    "char_count", "token_count", "punct_count", "paren_count", "newline_count",
    "hedge_rate", "universal_rate", "digit_rate", "upper_rate", "mean_token_length",
)
"""The ten scalars of ``numeric_surface``, in App. E's order (``punct_count`` counts ``.,;:``)."""

NGRAM_PARAMS: Mapping[str, Any] = {
    "analyzer": "char_wb", "ngram_range": (3, 5), "min_df": 3, "max_features": 20000,
    "sublinear_tf": True,
}
"""``surface_ngram``'s vectoriser: word-boundary character n-grams 3–5, min df 3, ≤ 20,000
features, sublinear tf, no scaler (App. E)."""

CLASSIFIER_PARAMS: Mapping[str, Any] = {"max_iter": 2000, "class_weight": "balanced"}
"""Every member ends in ``LogisticRegression(**CLASSIFIER_PARAMS)`` (App. E, "Fitting")."""

N_FOLDS = 5
MIN_GROUPS_FOR_GROUPKFOLD = 5
ITEM_PREFERRED, ITEM_REJECTED = "preferred", "rejected"
BROKEN_NULL_KAPPA = 0.05
"""A permutation null whose mean κ exceeds this (and 3 standard errors) marks a broken harness."""


# ---------------------------------------------------------------------------------------------
# Feature extractors: each takes ONE string.
# ---------------------------------------------------------------------------------------------

_PUNCT = ".,;:"


def token_count(text: str) -> int:
    """Whitespace token count of one response (``length_only``'s single feature, App. E)."""
    return len(text.split())


def length_only_features(text: str) -> np.ndarray:
    """``length_only``: the whitespace token count of one string, as a length-1 vector."""
    return np.array([float(token_count(text))])


def numeric_surface_features(text: str) -> np.ndarray:
    """``numeric_surface``: App. E's ten scalars of one string (unstandardised).

    Rates are per whitespace token (hedges, universals) or per character (digits, upper case);
    the hedge and universal lists are closed and counted case-insensitively as substrings.
    """
    tokens = text.split()
    n_tok = len(tokens)
    n_chr = len(text)
    low = text.lower()
    denom_tok = max(n_tok, 1)
    denom_chr = max(n_chr, 1)
    return np.array([
        float(n_chr),
        float(n_tok),
        float(sum(text.count(c) for c in _PUNCT)),
        float(text.count("(")),
        float(text.count("\n")),
        sum(low.count(h) for h in HEDGES) / denom_tok,
        sum(low.count(u) for u in UNIVERSALS) / denom_tok,
        sum(ch.isdigit() for ch in text) / denom_chr,
        sum(ch.isupper() for ch in text) / denom_chr,
        (sum(len(t) for t in tokens) / n_tok) if n_tok else 0.0,
    ])


def make_ngram_vectorizer():
    """``surface_ngram``'s vectoriser (App. E); fit on training-fold texts only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(**NGRAM_PARAMS)


def make_classifier():
    """The logistic regression every member ends in (App. E)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(**CLASSIFIER_PARAMS)


_DENSE_EXTRACTORS: dict[str, Callable[[str], np.ndarray]] = {
    "length_only": length_only_features,
    "numeric_surface": numeric_surface_features,
}


def _dense_matrix(member: str, texts: Sequence[str]) -> np.ndarray:
    fn = _DENSE_EXTRACTORS[member]
    return np.vstack([fn(t) for t in texts]) if len(texts) else np.zeros((0, 1))


def _moments(resp_a: np.ndarray, resp_b: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Standardiser moments of the training responses (both sides in paired mode); a constant
    feature keeps scale 1."""
    resp = resp_a if resp_b is None else np.vstack([resp_a, resp_b])
    sd = resp.std(axis=0)
    return resp.mean(axis=0), np.where(sd > 0, sd, 1.0)


def _scaled(a: np.ndarray, b: np.ndarray | None, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """A dense member's design: standardised features (item mode) or the antisymmetric scaled
    difference ``(φ(a) − φ(b)) / sd`` (paired mode)."""
    return (a - mu) / sd if b is None else (a - b) / sd


# ---------------------------------------------------------------------------------------------
# Preparing a table for one mode
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Folds and scoring
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FoldPlan:
    """App. E folds: which scheme was used (recorded, since grouped and ungrouped a_imp are not
    comparable) and each row's test fold."""

    scheme: str
    n_splits: int
    seed: int | None
    fold_of: np.ndarray

    def splits(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for k in range(self.n_splits):
            test = np.flatnonzero(self.fold_of == k)
            if len(test):
                yield np.flatnonzero(self.fold_of != k), test

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "n_splits": self.n_splits, "seed": self.seed,
                "group_aware": self.scheme == "GroupKFold"}


def make_folds(groups: np.ndarray, *, seed: int = 0, n_splits: int = N_FOLDS) -> FoldPlan:
    """GroupKFold(5) on ``groups`` where there are ≥ 5 distinct groups, else
    KFold(5, shuffle=True, random_state=seed) (App. E, "Folds and scoring")."""
    from sklearn.model_selection import GroupKFold, KFold

    n = len(groups)
    if n < n_splits:
        raise InputError(f"a label set needs at least {n_splits} scorable rows for {n_splits}-fold "
                         f"cross-validation; it has {n}")
    fold_of = np.full(n, -1, dtype=int)
    if len(np.unique(groups)) >= MIN_GROUPS_FOR_GROUPKFOLD:
        splitter = GroupKFold(n_splits=n_splits)
        it = splitter.split(np.zeros(n), groups=groups)
        scheme, used_seed = "GroupKFold", None
    else:
        it = KFold(n_splits=n_splits, shuffle=True, random_state=seed).split(np.zeros(n))
        scheme, used_seed = "KFold", seed
    for k, (_, test) in enumerate(it):
        fold_of[test] = k
    return FoldPlan(scheme, n_splits, used_seed, fold_of)


def permutation_strata(groups: np.ndarray) -> np.ndarray:
    """Strata for the within-group label permutation: the group key, with every singleton group
    pooled into one stratum (a within-group shuffle of a one-row group is the identity, which
    would make the null equal the observed score)."""
    vals, inv, counts = np.unique(groups, return_inverse=True, return_counts=True)
    single = counts[inv] == 1
    return np.where(single, "\x00singletons", groups.astype(str))


def label_permutations(prep: Prepared, n_perm: int, seed: int) -> np.ndarray:
    """``(n_perm, n)`` permuted label vectors for the null (App. E: "refit on labels permuted
    within group under identical folds").

    Per-item mode: labels shuffled within the group key (singleton groups pooled into one
    stratum, see ``permutation_strata``). Paired mode: the label is one side of one pair, so the
    permutation within its group is a permutation of the pair's two sides — each pair's label
    is swapped with probability ½. (A shuffle of side labels across the pairs of one prompt
    would leave a pair's own label in place whenever the prompt's pairs agree, retaining part
    of any real signal; after side randomisation the within-pair swap is the exact null.)
    """
    y = prep.y
    if n_perm <= 0:
        return np.empty((0, len(y)), dtype=y.dtype)
    if prep.mode == "paired":
        flip = np.random.default_rng(seed).random((n_perm, len(y))) < 0.5
        return np.where(flip, np.where(y == "A", "B", "A")[None, :], y[None, :])
    return permute_within_groups(y, permutation_strata(prep.groups), n_perm, seed)


def kappa_from_confusions(conf: np.ndarray) -> np.ndarray:
    """Cohen's κ of each ``(..., K, K)`` confusion matrix (0.0 where chance agreement is 1)."""
    conf = np.asarray(conf, dtype=float)
    total = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(conf, axis1=-2, axis2=-1) / total
        pe = np.sum(conf.sum(axis=-1) * conf.sum(axis=-2), axis=-1) / total**2
        k = (po - pe) / (1.0 - pe)
    return np.where(np.isclose(pe, 1.0) | ~np.isfinite(k), 0.0, k)


def pooled_kappa(y: Sequence, pred: Sequence) -> float:
    """κ of the pooled out-of-fold predictions (App. E: not a mean of per-fold κs)."""
    return cohen_kappa(np.asarray(y).astype(str), np.asarray(pred).astype(str))


def _group_confusions(label: np.ndarray, pred: np.ndarray, group_of_row: np.ndarray, n_groups: int,
                      categories: Sequence[str], weights: np.ndarray | None = None) -> np.ndarray:
    """``(n_groups, K·K)`` confusion counts (label × prediction, optionally weighted) of each group's
    rows: the unit a group bootstrap resamples."""
    idx = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    cell = np.array([idx[a] * k + idx[b] for a, b in zip(label, pred, strict=True)], dtype=int)
    out = np.zeros((n_groups, k * k))
    np.add.at(out, (np.asarray(group_of_row, dtype=int), cell),
              np.ones(len(cell)) if weights is None else np.asarray(weights, dtype=float))
    return out


def _kappa_of(per_group: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """κ of the pooled confusion of all groups (``counts`` None) or of each bootstrap resample
    (``counts``: ``(n_boot, n_groups)`` multiplicities)."""
    k = math.isqrt(per_group.shape[1])
    pooled = per_group.sum(axis=0)[None, :] if counts is None else counts @ per_group
    return kappa_from_confusions(pooled.reshape(-1, k, k))


def bootstrap_kappa_ci(y: np.ndarray, pred: np.ndarray, groups: np.ndarray, *, n_boot: int = 1000,
                       seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of one predictor's pooled κ, resampling groups with replacement
    (vectorised: a ``(n_boot, n_groups)`` multiplicity matrix times per-group confusion counts)."""
    labels = np.unique(np.concatenate([y.astype(str), pred.astype(str)]))
    gvals, ginv = np.unique(groups, return_inverse=True)
    per_group = _group_confusions(y.astype(str), pred.astype(str), ginv, len(gvals), labels)
    lo, hi = percentile_ci(_kappa_of(per_group, bootstrap_counts(len(gvals), n_boot, seed)), level)
    return float(lo), float(hi)


def a_imp_interval(y: np.ndarray, preds: np.ndarray | Sequence[np.ndarray], groups: np.ndarray, *,
                   n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Interval of ``a_imp = max over members of κ`` (Def. 6) that includes the selection of the
    best member.

    In every bootstrap replicate (groups resampled with replacement) each member's pooled κ is
    recomputed from its out-of-fold predictions, and the replicate's statistic is the *maximum over
    members* of the standardised deviation ``|κ*_m − κ̂_m| / se_m`` (``se_m``: the bootstrap
    standard deviation of member m). Its ``level`` quantile ``c`` gives bands ``κ̂_m ± c·se_m``
    that hold for every member at once; since the max is monotone, the interval of the max is
    ``[max_m (κ̂_m − c·se_m), max_m (κ̂_m + c·se_m)]``.

    Why not the best member's own interval, or the percentile interval of the replicates' max:
    with several equally (un)informative members the observed max is biased upward by the
    selection, and both intervals sit on that bias. On five members of equal κ (tests/analyses/
    test_validation_power.py) the best member's own 95% interval covers the population max in
    ~85% of simulated sets and the percentile interval of the bootstrapped max in ~30%; the
    simultaneous band keeps ≥ 95%. With one member (or one dominant member) it reduces to an
    ordinary studentised interval of that member.
    """
    preds = [np.asarray(p).astype(str) for p in preds]
    y = np.asarray(y).astype(str)
    cats = np.unique(np.concatenate([y, *preds]))
    gvals, ginv = np.unique(groups, return_inverse=True)
    per = [_group_confusions(y, p, ginv, len(gvals), cats) for p in preds]
    obs = np.array([_kappa_of(pg)[0] for pg in per])
    if n_boot < 2:
        return float("nan"), float("nan")
    counts = bootstrap_counts(len(gvals), n_boot, seed)
    boot = np.stack([_kappa_of(pg, counts) for pg in per])          # (members, n_boot)
    se = np.nanstd(boot, axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = np.where(se[:, None] > 0, np.abs(boot - obs[:, None]) / se[:, None], 0.0)
    c = float(np.nanquantile(np.nanmax(dev, axis=0), level))
    return float(np.max(obs - c * se)), float(np.max(obs + c * se))


@dataclass(frozen=True)
class HumanCeiling:
    """``a_hum`` (Def. 6) and how it was obtained: κ of one annotator (the "prediction") against
    the strict majority of the set's other annotators on that item (the "label"), pooled over
    every held-out annotator of every item — the statistic ``a_imp`` is (κ of a prediction against
    the label, pooled), on the same label space."""

    kappa: float
    ci: tuple[float, float]
    n_items: int
    n_rows: int
    n_no_majority: int
    n_outside_label_space: int
    fleiss_kappa: float

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "ci": list(self.ci), "n_items": self.n_items, "n_rows": self.n_rows,
                "n_no_majority_of_others": self.n_no_majority,
                "n_outside_label_space": self.n_outside_label_space,
                "annotator_fleiss_kappa": self.fleiss_kappa}


def held_out_annotator_rows(labels: Sequence[Sequence[str]], label_space: Sequence[str]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Every (item, held-out annotator) row of the human ceiling: ``(item index, label = strict
    majority of the other annotators, prediction = the held-out annotator's label, weight)`` plus
    the numbers of rows dropped because the others have no strict majority and because the label
    or the prediction lies outside ``label_space``.

    Rules (documented in the report): items with fewer than two labels have no one to hold out
    against; the others' majority is strict (more than half; ``stats.agreement.majority_label``),
    and where there is none the row is dropped — the rule by which a set's own label is a tie and
    the item leaves a_imp's scoring; a row is scored only when both its label and its prediction
    lie in ``label_space`` (a_imp's label space: a ``tie`` vote is an abstention no member can
    make). Each item with at least one scored row weighs 1, split equally over its scored rows
    (items weighted equally, not annotations: construct-validity.txt App. A.2).
    """
    space = set(label_space)
    item, lab, pred, wt = [], [], [], []
    no_major = outside = 0
    for i, votes in enumerate(labels):
        if len(votes) < 2:
            continue
        scored = []
        for j, v in enumerate(votes):
            maj = majority_label(list(votes[:j]) + list(votes[j + 1:]))
            if maj is None:
                no_major += 1
            elif maj not in space or v not in space:
                outside += 1
            else:
                scored.append((maj, v))
        for maj, v in scored:
            item.append(i)
            lab.append(maj)
            pred.append(v)
            wt.append(1.0 / len(scored))
    return (np.array(item, dtype=int), np.array(lab, dtype=object).astype(str),
            np.array(pred, dtype=object).astype(str), np.array(wt, dtype=float), no_major, outside)


def fleiss_kappa_general(labels: Sequence[Sequence[str]]) -> float:
    """Fleiss' κ allowing a different number of annotators per item (items with < 2 labels are
    skipped): mean per-item agreement against pooled category shares."""
    return float(_fleiss_stats_boot(labels, np.zeros(len(labels), dtype=int), None)[0])


def _fleiss_stats_boot(labels: Sequence[Sequence[str]], groups: np.ndarray,
                       counts: np.ndarray | None) -> np.ndarray:
    cats = sorted({c for x in labels for c in x})
    keep = np.array([len(x) >= 2 for x in labels])
    mat = category_counts(labels, cats)
    m = mat.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_i = np.where(keep, (np.sum(mat * mat, axis=1) - m) / (m * (m - 1)), 0.0)
    gvals, ginv = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    G = len(gvals)
    sum_p = np.zeros(G)
    n_it = np.zeros(G)
    cat_tot = np.zeros((G, len(cats)))
    np.add.at(sum_p, ginv, p_i)
    np.add.at(n_it, ginv, keep.astype(float))
    np.add.at(cat_tot, ginv, mat * keep[:, None])
    w = np.ones((1, G)) if counts is None else counts
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = (w @ sum_p) / (w @ n_it)
        tot = w @ cat_tot
        p_j = tot / tot.sum(axis=1, keepdims=True)
        p_e = np.sum(p_j**2, axis=1)
        k = (p_bar - p_e) / (1.0 - p_e)
    return np.where(np.isclose(p_e, 1.0), 0.0, k)


def human_ceiling(labels: Sequence[Sequence[str]], groups: np.ndarray, *, label_space: Sequence[str],
                  n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> HumanCeiling:
    """``a_hum`` (Def. 6): each annotator held out against the strict majority of the others,
    κ of the pooled (item-weighted) rows on ``label_space`` (see ``held_out_annotator_rows``),
    with a percentile interval from a bootstrap over ``groups`` (App. E: a_hum "carries its own
    interval"). ``labels[i]`` are the annotators' labels of row ``i``; ``groups[i]`` its group."""
    item, lab, pred, wt, no_major, outside = held_out_annotator_rows(labels, label_space)
    gvals, ginv = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    fleiss = fleiss_kappa_general(labels) if any(len(x) >= 2 for x in labels) else float("nan")
    if len(item) == 0:
        return HumanCeiling(float("nan"), (float("nan"), float("nan")), 0, 0, no_major, outside, fleiss)
    cats = sorted(set(label_space))
    per_group = _group_confusions(lab, pred, ginv[item], len(gvals), cats, wt)
    point = float(_kappa_of(per_group)[0])
    lo, hi = percentile_ci(_kappa_of(per_group, bootstrap_counts(len(gvals), n_boot, seed)), level)
    return HumanCeiling(point, (float(lo), float(hi)), int(len(np.unique(item))), int(len(item)), no_major,
                        outside, fleiss)


# ---------------------------------------------------------------------------------------------
# The fitting engine: design matrices cached per fold, reused across permutations.
# ---------------------------------------------------------------------------------------------


class NgramBank:
    """Character n-gram counts of every response, analysed once; per fold, the exact
    ``TfidfVectorizer(**NGRAM_PARAMS)`` fit on that fold's training texts is reproduced by column
    selection (train document frequency ≥ min_df, then the ``max_features`` most frequent in
    training, ties broken as scikit-learn does), training idf, sublinear tf and l2 norm.

    Text analysis is the cost of ``surface_ngram``; doing it once per set instead of once per fold
    (and never per permutation) is what keeps the audit cheap. Test texts only ever contribute
    columns that also occur in training texts, so nothing leaks across folds.
    """

    def __init__(self, texts: Sequence[str]):
        from sklearn.feature_extraction.text import CountVectorizer

        self.counts = CountVectorizer(analyzer=NGRAM_PARAMS["analyzer"],
                                      ngram_range=NGRAM_PARAMS["ngram_range"]).fit_transform(
            list(texts)).tocsc()
        self.counts.sort_indices()

    def tfidf(self, train_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(selected columns, idf) of the vectoriser fit on ``train_rows``."""
        sub = self.counts[train_rows]
        dfs = np.bincount(sub.tocoo().col, minlength=sub.shape[1])
        present = dfs > 0
        cols = np.flatnonzero(present)
        dfs_p = dfs[cols]
        mask = dfs_p >= NGRAM_PARAMS["min_df"]
        limit = NGRAM_PARAMS["max_features"]
        if mask.sum() > limit:
            tfs = np.asarray(sub[:, cols].sum(axis=0)).ravel()
            inds = (-tfs[mask]).argsort()[:limit]
            new = np.zeros(len(cols), dtype=bool)
            new[np.flatnonzero(mask)[inds]] = True
            mask = new
        sel = cols[mask]
        n = len(train_rows)
        idf = np.log((1.0 + n) / (1.0 + dfs[sel])) + 1.0
        return sel, idf

    def transform(self, rows: np.ndarray | slice, sel: np.ndarray, idf: np.ndarray) -> sparse.csr_matrix:
        """Tf-idf rows under a fold's vectoriser (sublinear tf, idf, l2-normalised)."""
        x = self.counts[rows][:, sel].tocsr().astype(float)
        x.data = 1.0 + np.log(x.data)
        x = x @ sparse.diags(idf)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ x)


class _Designs:
    """Per-fold design matrices of each member for one prepared set.

    The vectoriser's vocabulary and idf and the standardiser's moments depend only on the
    training texts, never on labels, so each is fit once per fold and reused by the observed
    fit and every permutation refit (App. E nulls use identical folds).
    """

    def __init__(self, prep: Prepared, plan: FoldPlan):
        self.prep = prep
        self.plan = plan
        self._raw: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self._cache: dict[tuple[str, int], tuple[Any, Any]] = {}
        self._ngram_resp: dict[int, Any] = {}
        self._bank: NgramBank | None = None

    def raw(self, member: str) -> tuple[np.ndarray, np.ndarray | None]:
        if member not in self._raw:
            a = _dense_matrix(member, self.prep.texts_a)
            b = None if self.prep.texts_b is None else _dense_matrix(member, self.prep.texts_b)
            self._raw[member] = (a, b)
        return self._raw[member]

    def fold(self, member: str, k: int, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
        key = (member, k)
        if key not in self._cache:
            self._cache[key] = self._build(member, k, train, test)
        return self._cache[key]

    def _build(self, member: str, k: int, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
        paired = self.prep.texts_b is not None
        if member == "surface_ngram":
            va, vb = self.ngram_responses(k, train)
            x = (va - vb).tocsr() if paired else va
            # same fitted model on ≤ n_train columns (L-BFGS cost grows with the column count)
            return rowspace_reduce(x[train], x[test])
        a, b = self.raw(member)
        mu, sd = _moments(a[train], b[train] if paired else None)
        x = _scaled(a, b, mu, sd)
        return x[train], x[test]

    def ngram_responses(self, k: int, train: np.ndarray) -> tuple[Any, Any]:
        """Tf-idf of every response under the vectoriser fit on fold ``k``'s training texts."""
        if k not in self._ngram_resp:
            n = len(self.prep.texts_a)
            if self._bank is None:
                self._bank = NgramBank(self.prep.responses(np.arange(n)))
            paired = self.prep.texts_b is not None
            train_docs = np.concatenate([train, train + n]) if paired else train
            sel, idf = self._bank.tfidf(train_docs)
            va = self._bank.transform(slice(0, n), sel, idf)
            vb = self._bank.transform(slice(n, 2 * n), sel, idf) if paired else None
            self._ngram_resp[k] = (va, vb)
        return self._ngram_resp[k]


def rowspace_basis(x_train: Any, *, rtol: float = 1e-10) -> tuple[np.ndarray, Callable[[Any], np.ndarray]]:
    """Exact reparametrisation of an L2-penalised linear model when features outnumber rows.

    The penalised logistic-regression optimum ``w*`` lies in the row space of ``x_train``
    (representer theorem; the intercept is unpenalised). With ``Q`` an orthonormal basis of that
    row space, ``w = Q v`` preserves both ``x_train @ w`` and ``‖w‖²``, so fitting the same
    ``LogisticRegression`` on ``x_train @ Q`` (≤ n_train dense columns) and predicting from
    ``x @ Q`` yields the same fitted model as fitting on the 20,000 sparse columns (up to the
    solver's tolerance), at a fraction of the cost. ``Q`` depends only on the training texts,
    so it is computed once per fold and shared by every permutation refit.

    Returns ``(x_train @ Q, project)`` where ``project(x) = x @ Q``.
    """
    gram = x_train @ x_train.T
    gram = gram.toarray() if sparse.issparse(gram) else np.asarray(gram)
    evals, evecs = np.linalg.eigh(gram)
    keep = evals > rtol * max(evals.max(initial=0.0), 1e-300)
    s = np.sqrt(evals[keep])
    u = evecs[:, keep]

    def project(x: Any) -> np.ndarray:
        cross = x @ x_train.T
        cross = cross.toarray() if sparse.issparse(cross) else np.asarray(cross)
        return (cross @ u) / s

    return u * s, project                               # x_train @ Q with Q = x_trainᵀ U S⁻¹


def rowspace_reduce(x_train: Any, x_test: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(x_train @ Q, x_test @ Q)`` for ``Q`` of ``rowspace_basis`` when features outnumber
    rows; otherwise the two matrices unchanged (dense)."""
    if x_train.shape[1] <= x_train.shape[0]:
        return (x_train.toarray() if sparse.issparse(x_train) else np.asarray(x_train),
                x_test.toarray() if sparse.issparse(x_test) else np.asarray(x_test))
    z, project = rowspace_basis(x_train)
    return z, project(x_test)


def _fit_predict(x_tr: Any, y_tr: np.ndarray, x_te: Any) -> np.ndarray:
    classes = np.unique(y_tr)
    if len(classes) < 2:
        return np.full(x_te.shape[0], classes[0] if len(classes) else "", dtype=object)
    clf = make_classifier()
    clf.fit(x_tr, y_tr)
    return clf.predict(x_te)


def oof_predictions(designs: _Designs, member: str, y: np.ndarray) -> np.ndarray:
    """Pooled out-of-fold predictions of one frozen member for labels ``y`` under the plan."""
    pred = np.empty(len(y), dtype=object)
    for k, (train, test) in enumerate(designs.plan.splits()):
        x_tr, x_te = designs.fold(member, k, train, test)
        pred[test] = _fit_predict(x_tr, y[train], x_te)
    return pred.astype(str)


class _Provenance:
    """§4.4 item 3: stage 1 predicts the generative condition C from one response's surface
    (``surface_ngram`` features, the frozen classifier); stage 2 maps it to a label through g,
    estimated on the training fold. Stage 1 never sees labels, so permutation refits only
    re-estimate g."""

    def __init__(self, designs: _Designs):
        self.d = designs
        p = designs.prep
        self.paired = p.texts_b is not None
        # per fold: (train, test, training conditions, condition classes, P(C) of side A, of side B)
        self.stage1: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
        for k, (train, test) in enumerate(designs.plan.splits()):
            va, vb = designs.ngram_responses(k, train)
            if self.paired:
                x_tr = sparse.vstack([va[train], vb[train]]).tocsr()
                c_tr = np.concatenate([p.cond_a[train], p.cond_b[train]])
            else:
                x_tr = va[train]
                c_tr = p.cond_a[train]
            classes = np.unique(c_tr)
            if len(classes) < 2:
                pa = np.ones((len(test), 1))
                pb = None if not self.paired else np.ones((len(test), 1))
            else:
                clf = make_classifier()
                clf.fit(x_tr, c_tr)
                pa = clf.predict_proba(va[test])
                pb = clf.predict_proba(vb[test]) if self.paired else None
            self.stage1.append((train, test, c_tr, classes, pa, pb))

    def predict(self, y: np.ndarray) -> np.ndarray:
        pred = np.empty(len(y), dtype=object)
        for train, test, cond, classes, pa, pb in self.stage1:
            if self.paired:
                won = np.concatenate([y[train] == "A", y[train] == "B"]).astype(float)
                g = np.array([won[cond == c].mean() for c in classes])  # classes: values of cond
                sa, sb = pa @ g, pb @ g
                pred[test] = np.where(sa >= sb, "A", "B")
            else:
                labs = np.unique(y[train])
                tab = np.array([[np.mean(y[train][cond == c] == lab) for lab in labs] for c in classes])
                pred[test] = labs[np.argmax(pa @ tab, axis=1)]
        return pred.astype(str)


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberScore:
    """One member's pooled out-of-fold score and its within-group label-permutation null."""

    name: str
    kappa: float
    accuracy: float
    null_mean: float
    null_p95: float
    null_n: int
    p_value: float
    broken_null: bool

    @property
    def p_value_min(self) -> float:
        """The smallest p this null can give, 1/(B + 1): the resolution of ``p_value``."""
        return min_attainable_p(self.null_n)

    @property
    def clears_null(self) -> bool:
        """κ above the upper (95%) quantile of its label-permutation null (§5.4: "every paired row
        clears its label-permutation null, which sits at or below 0.026")."""
        return bool(self.null_n > 0 and self.kappa > self.null_p95)

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "accuracy": self.accuracy,
                "null_kappa": {"mean": self.null_mean, "p95": self.null_p95, "n": self.null_n},
                "clears_null": self.clears_null,
                "p_value": self.p_value, "p_value_min": self.p_value_min, "broken_null": self.broken_null}


@dataclass(frozen=True)
class ModeResult:
    """Validation power of one label set in one input mode (Def. 6)."""

    set_name: str
    mode: str
    applicable: bool
    reason: str | None = None
    n: int = 0
    n_groups: int = 0
    folds: dict[str, Any] = field(default_factory=dict)
    label_space: tuple[str, ...] = ()
    members: tuple[MemberScore, ...] = ()
    a_imp: float | None = None
    a_imp_member: str | None = None
    a_imp_ci: tuple[float, float] | None = None
    a_imp_accuracy: float | None = None
    a_hum: float | None = None
    a_hum_ci: tuple[float, float] | None = None
    a_hum_source: str | None = None
    a_hum_detail: HumanCeiling | None = None
    a_imp_null_mean: float | None = None
    a_imp_null_p95: float | None = None
    a_imp_null_n: int = 0
    a_imp_p_value: float | None = None
    vp: float | None = None
    resolvable: bool | None = None
    broken_harness: tuple[str, ...] = ()
    prefer_longer_accuracy: float | None = None
    prefer_shorter_accuracy: float | None = None
    preferred_longer_rate: float | None = None
    n_equal_length: int | None = None
    n_ties_dropped: int = 0
    side_seed: int | None = None
    n_permutations: int = 0
    between_group_label_share: float | None = None

    @property
    def a_imp_p_value_min(self) -> float:
        """The resolution of ``a_imp_p_value``: 1/(B + 1)."""
        return min_attainable_p(self.a_imp_null_n)

    @property
    def a_imp_clears_null(self) -> bool:
        """a_imp above the upper (95%) quantile of its own null (the max over members, per permutation)."""
        return bool(self.a_imp_null_n > 0 and self.a_imp > self.a_imp_null_p95)

    def member(self, name: str) -> MemberScore:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        if not self.applicable:
            return {"applicable": False, "reason": self.reason}
        d: dict[str, Any] = {
            "applicable": True, "n": self.n, "n_groups": self.n_groups, "folds": self.folds,
            "label_space": list(self.label_space),
            "members": {m.name: m.to_dict() for m in self.members},
            "a_imp": self.a_imp, "a_imp_member": self.a_imp_member,
            "a_imp_ci": list(self.a_imp_ci) if self.a_imp_ci else None,
            "a_imp_null": {"mean": self.a_imp_null_mean, "p95": self.a_imp_null_p95, "n": self.a_imp_null_n,
                           "clears_null": self.a_imp_clears_null, "p_value": self.a_imp_p_value,
                           "p_value_min": self.a_imp_p_value_min},
            "a_hum": self.a_hum, "a_hum_ci": list(self.a_hum_ci) if self.a_hum_ci else None,
            "a_hum_source": self.a_hum_source,
            "a_hum_detail": self.a_hum_detail.to_dict() if self.a_hum_detail else None,
            "vp": self.vp, "resolvable": self.resolvable,
            "broken_harness": bool(self.broken_harness), "broken_members": list(self.broken_harness),
            "n_permutations": self.n_permutations, "n_ties_dropped": self.n_ties_dropped,
            "between_group_label_share": self.between_group_label_share,
        }
        if self.mode == "paired":
            d.update({"a_imp_accuracy": self.a_imp_accuracy,
                      "prefer_longer_accuracy": self.prefer_longer_accuracy,
                      "prefer_shorter_accuracy": self.prefer_shorter_accuracy,
                      "preferred_longer_rate": self.preferred_longer_rate,
                      "n_equal_length": self.n_equal_length, "side_order_seed": self.side_seed})
        return d


@dataclass(frozen=True)
class TransferScore:
    """One ordered (source → target) transfer in one mode (App. E, last sentence)."""

    source: str
    target: str
    mode: str
    admitted: bool
    shared_labels: tuple[str, ...]
    reason: str | None = None
    n: int = 0
    members: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "mode": self.mode,
                "admitted": self.admitted, "shared_labels": list(self.shared_labels),
                "reason": self.reason, "n": self.n, "members": self.members}


@dataclass(frozen=True)
class ValidationPowerResult:
    """Per set and mode: the family's scores, nulls, a_imp, a_hum and VP; plus transfer."""

    sets: tuple[ModeResult, ...]
    transfer: tuple[TransferScore, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    set_meta: dict[str, dict[str, Any]] = field(default_factory=dict)

    def find(self, set_name: str, mode: str) -> ModeResult | None:
        """The result of ``set_name`` in ``mode``; None where that mode was not requested."""
        return next((r for r in self.sets if r.set_name == set_name and r.mode == mode), None)

    def get(self, set_name: str, mode: str) -> ModeResult:
        r = self.find(set_name, mode)
        if r is None:
            raise KeyError((set_name, mode))
        return r

    @property
    def set_names(self) -> list[str]:
        return list(dict.fromkeys(r.set_name for r in self.sets))

    def member_p_bh(self) -> dict[tuple[str, str, str], float]:
        """Benjamini–Hochberg adjusted member p-values, the family being every (set, mode, member)
        row of the per-member table (construct-validity.txt App. A.2)."""
        keys = [(r.set_name, r.mode, m.name) for r in self.sets if r.applicable for m in r.members]
        p = [m.p_value for r in self.sets if r.applicable for m in r.members]
        return dict(zip(keys, bh_adjust(p).tolist(), strict=True))

    def a_imp_p_bh(self) -> dict[tuple[str, str], float]:
        """Benjamini–Hochberg adjusted p-values of a_imp against its null, across every (set, mode)
        row of the ceiling table."""
        rows = [r for r in self.sets if r.applicable]
        p = [r.a_imp_p_value if r.a_imp_p_value is not None else float("nan") for r in rows]
        return dict(zip([(r.set_name, r.mode) for r in rows], bh_adjust(p).tolist(), strict=True))

    def to_dict(self) -> dict[str, Any]:
        sets: dict[str, Any] = {}
        member_bh, a_imp_bh = self.member_p_bh(), self.a_imp_p_bh()
        for r in self.sets:
            entry = sets.setdefault(r.set_name, {"meta": self.set_meta.get(r.set_name, {})})
            d = r.to_dict()
            if r.applicable:
                d["a_imp_null"]["p_value_bh"] = a_imp_bh[(r.set_name, r.mode)]
                for m in r.members:
                    d["members"][m.name]["p_value_bh"] = member_bh[(r.set_name, r.mode, m.name)]
            entry[r.mode] = d
        return {"config": self.config, "sets": sets, "transfer": [t.to_dict() for t in self.transfer]}

    def to_frame(self) -> pd.DataFrame:
        """Table 7's shape: one row per set, per-item and paired columns side by side."""
        rows = []
        for name in self.set_names:
            meta = self.set_meta.get(name, {})
            row: dict[str, Any] = {"label set": name, "label origin": meta.get("label_origin", "—")}
            for mode in ("item", "paired"):
                r = self.find(name, mode)
                ok = r is not None and r.applicable
                if mode == "item":
                    row["n"] = r.n if ok else None
                    row["a_imp (item κ)"] = r.a_imp if ok else None
                    row["item best"] = r.a_imp_member if ok else None
                else:
                    row["pairs"] = r.n if ok else None
                    row["κ (paired)"] = r.a_imp if ok else None
                    row["accuracy (paired)"] = r.a_imp_accuracy if ok else None
                    row["paired best"] = r.a_imp_member if ok else None
                    row["prefer shorter"] = r.prefer_shorter_accuracy if ok else None
            rows.append(row)
        return pd.DataFrame(rows)

    def members_frame(self) -> pd.DataFrame:
        """The per-member breakdown: one row per (set, mode, member)."""
        bh = self.member_p_bh()
        rows = []
        for r in self.sets:
            if not r.applicable:
                continue
            for m in r.members:
                rows.append({"label set": r.set_name, "mode": r.mode, "member": m.name, "κ": m.kappa,
                             "accuracy": m.accuracy, "null mean κ": m.null_mean, "null p95 κ": m.null_p95,
                             "clears null": ("yes" if m.clears_null else "no") if m.null_n else "—",
                             "p": m.p_value, "min attainable p": m.p_value_min,
                             "p (BH)": bh[(r.set_name, r.mode, m.name)], "broken null": m.broken_null})
        return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# The audit
# ---------------------------------------------------------------------------------------------


def _accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean(y.astype(str) == pred.astype(str))) if len(y) else float("nan")


def _broken(null: np.ndarray) -> bool:
    if len(null) == 0:
        return False
    se = null.std(ddof=1) / math.sqrt(len(null)) if len(null) > 1 else 0.0
    return bool(null.mean() > max(BROKEN_NULL_KAPPA, 3 * se))


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


def audit_prepared(prep: Prepared, *, set_name: str = "set", n_permutations: int = 30, seed: int = 0,
                   n_boot: int = 1000, ceiling: tuple[float, float, float] | None = None,
                   members: Sequence[str] | None = None) -> ModeResult:
    """Audit one prepared set in its mode: every member's pooled OOF κ (and accuracy), its
    within-group permutation null under the same folds, a_imp (the max over members) with a
    group-bootstrap interval of that max (``a_imp_interval``) and the null of that max, a_hum
    (``human_ceiling``) and VP (Def. 6; App. E).

    Args:
        prep: from ``prepare_item`` / ``prepare_paired``.
        n_permutations: label permutations per member for the null.
        seed: fixes KFold shuffling (when used), permutations and bootstraps.
        n_boot: bootstrap resamples of groups for the a_imp and a_hum intervals.
        ceiling: a user-supplied ``(a_hum, lo, hi)``; overrides the set's own annotators.
        members: restrict to these members (for tests/benchmarks); default all applicable.
    """
    y = prep.y
    labels = tuple(sorted(np.unique(y)))
    if len(labels) < 2:
        return ModeResult(set_name, prep.mode, False, reason=f"only one label value ({labels})")
    plan = make_folds(prep.groups, seed=seed)
    designs = _Designs(prep, plan)
    perms = label_permutations(prep, n_permutations, seed + 1)
    wanted = list(members) if members is not None else list(MEMBERS)
    unknown = [m for m in wanted if m not in MEMBERS]
    if unknown:
        raise InputError(f"unknown member(s) {unknown}; the frozen family is {list(MEMBERS)}", field="members")
    if PROVENANCE_MEMBER in wanted and not has_condition(prep):
        wanted.remove(PROVENANCE_MEMBER)
    scores: list[MemberScore] = []
    preds: dict[str, np.ndarray] = {}
    nulls: list[np.ndarray] = []
    for m in wanted:
        if m == PROVENANCE_MEMBER:
            prov = _Provenance(designs)
            predict = prov.predict
        else:
            predict = (lambda yy, _m=m: oof_predictions(designs, _m, yy))
        pred = predict(y)
        preds[m] = pred
        k_obs = pooled_kappa(y, pred)
        null = np.array([pooled_kappa(p, predict(p)) for p in perms])
        nulls.append(null)
        scores.append(MemberScore(
            name=m, kappa=k_obs, accuracy=_accuracy(y, pred),
            null_mean=float(null.mean()) if len(null) else float("nan"),
            null_p95=float(np.quantile(null, 0.95)) if len(null) else float("nan"),
            null_n=len(null), p_value=permutation_p(k_obs, null, "greater") if len(null) else float("nan"),
            broken_null=_broken(null)))
    best = max(scores, key=lambda s: s.kappa)
    # a_imp is the max over members: its interval and its null both carry that selection (every
    # member is refit on the same permutations, so the null of the max is the max per permutation)
    a_imp_ci = a_imp_interval(y, [preds[s.name] for s in scores], prep.groups, n_boot=n_boot, seed=seed + 2)
    max_null = np.max(np.vstack(nulls), axis=0) if len(perms) else np.empty(0)
    a_hum = a_hum_ci = src = detail = None
    if ceiling is not None:
        a_hum, a_hum_ci, src = float(ceiling[0]), (float(ceiling[1]), float(ceiling[2])), "user-supplied"
    elif prep.human is not None:
        detail = human_ceiling(prep.human, prep.groups, label_space=labels, n_boot=n_boot, seed=seed + 3)
        if detail.n_rows:
            a_hum, a_hum_ci = detail.kappa, detail.ci
            src = (f"κ of each annotator against the strict majority of the others, pooled over "
                   f"{detail.n_rows} held-out labels on {detail.n_items} items")
    vp = resolvable = None
    if a_hum is not None:
        vp = a_hum - best.kappa
        resolvable = bool(a_imp_ci[1] < a_hum_ci[0] or a_hum_ci[1] < a_imp_ci[0])
    rules = length_rules(prep) if prep.mode == "paired" else {}
    return ModeResult(
        set_name=set_name, mode=prep.mode, applicable=True, n=prep.n,
        n_groups=int(len(np.unique(prep.groups))), folds=plan.to_dict(), label_space=labels,
        members=tuple(scores), a_imp=best.kappa, a_imp_member=best.name, a_imp_ci=a_imp_ci,
        a_imp_accuracy=best.accuracy, a_hum=a_hum, a_hum_ci=a_hum_ci, a_hum_source=src, a_hum_detail=detail,
        a_imp_null_mean=float(max_null.mean()) if len(max_null) else float("nan"),
        a_imp_null_p95=float(np.quantile(max_null, 0.95)) if len(max_null) else float("nan"),
        a_imp_null_n=len(max_null),
        a_imp_p_value=permutation_p(best.kappa, max_null, "greater") if len(max_null) else float("nan"), vp=vp,
        resolvable=resolvable, broken_harness=tuple(s.name for s in scores if s.broken_null),
        n_ties_dropped=prep.n_ties_dropped, side_seed=seed if prep.mode == "paired" else None,
        n_permutations=n_permutations,
        between_group_label_share=(between_group_label_share(y, prep.groups) if prep.mode == "item" else None),
        **rules)


def _fit_on_source(source: Prepared, shared: tuple[str, ...]) -> dict[str, Callable[[Prepared], np.ndarray]]:
    """Each frozen member fit on all rows of ``source`` whose label is in ``shared``; returns
    member → predictor of a prepared target (same mode)."""
    keep = np.isin(source.y, shared)
    ys = source.y[keep]
    paired = source.texts_b is not None
    sa = [t for t, k in zip(source.texts_a, keep, strict=True) if k]
    sb = [t for t, k in zip(source.texts_b, keep, strict=True) if k] if paired else None
    out: dict[str, Callable[[Prepared], np.ndarray]] = {}
    for m in FAMILY:
        if m == "surface_ngram":
            vec = make_ngram_vectorizer()
            vec.fit(sa + (sb or []))
            xs_raw = vec.transform(sa)
            if paired:
                xs_raw = (xs_raw - vec.transform(sb)).tocsr()
            if xs_raw.shape[1] > xs_raw.shape[0]:
                xs, project = rowspace_basis(xs_raw)
            else:
                xs, project = xs_raw, (lambda x: x)

            def design(t: Prepared, rows: np.ndarray, _vec=vec, _project=project) -> Any:
                xa = _vec.transform([t.texts_a[i] for i in rows])
                return _project((xa - _vec.transform([t.texts_b[i] for i in rows])).tocsr() if paired else xa)
        else:
            rsa = _dense_matrix(m, sa)
            rsb = _dense_matrix(m, sb) if paired else None
            mu, sd = _moments(rsa, rsb)
            xs = _scaled(rsa, rsb, mu, sd)

            def design(t: Prepared, rows: np.ndarray, _m=m, _mu=mu, _sd=sd) -> Any:
                ra = _dense_matrix(_m, [t.texts_a[i] for i in rows])
                rb = _dense_matrix(_m, [t.texts_b[i] for i in rows]) if paired else None
                return _scaled(ra, rb, _mu, _sd)
        classes = np.unique(ys)
        clf = make_classifier().fit(xs, ys) if len(classes) >= 2 else None

        def predict(t: Prepared, rows: np.ndarray, _clf=clf, _design=design, _c=classes) -> np.ndarray:
            if _clf is None:
                return np.full(len(rows), _c[0] if len(_c) else "", dtype=object).astype(str)
            return _clf.predict(_design(t, rows)).astype(str)

        out[m] = predict
    return out


def transfer_scores(source: Prepared, target: Prepared, *, source_name: str, target_name: str,
                    cache: dict[Any, Any] | None = None) -> TransferScore:
    """Fit each frozen member on all of ``source`` and score it on ``target`` (same mode;
    App. E's last sentence). Admitted only where the two label spaces share at least two
    categories; scored on the target rows whose label is shared. ``cache`` reuses a source's
    fitted members across targets."""
    shared = tuple(sorted(set(np.unique(source.y)) & set(np.unique(target.y))))
    if len(shared) < 2:
        return TransferScore(source_name, target_name, source.mode, False, shared,
                             reason="label spaces share fewer than two categories")
    key = (source_name, source.mode, shared)
    if cache is not None and key in cache:
        fitted = cache[key]
    else:
        fitted = _fit_on_source(source, shared)
        if cache is not None:
            cache[key] = fitted
    rows = np.flatnonzero(np.isin(target.y, shared))
    yt = target.y[rows]
    out: dict[str, dict[str, float]] = {}
    for m, predict in fitted.items():
        pred = predict(target, rows)
        out[m] = {"kappa": pooled_kappa(yt, pred), "accuracy": _accuracy(yt, pred)}
    return TransferScore(source_name, target_name, source.mode, True, shared, n=len(rows), members=out)


def audit_validation_power(sets: Mapping[str, pd.DataFrame], **kw: Any) -> ValidationPowerResult:
    """Audit every label set in every requested input mode (Def. 6, App. E) and, optionally,
    transfer between sets. See ``_audit_validation_power`` for the arguments.

    BLAS is held to one thread for the duration: the work is thousands of small
    logistic-regression fits, for which multi-threaded BLAS only adds contention.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _audit_validation_power(sets, **kw)


def _audit_validation_power(sets: Mapping[str, pd.DataFrame], *, modes: Sequence[str] = ("item", "paired"),
                           n_permutations: int = 30, seed: int = 0, n_boot: int = 1000,
                           ceilings: Mapping[tuple[str, str], tuple[float, float, float]] | None = None,
                           transfer: bool = True, set_meta: Mapping[str, dict[str, Any]] | None = None,
                           members: Sequence[str] | None = None) -> ValidationPowerResult:
    """Audit every label set in every requested input mode (Def. 6, App. E) and, optionally,
    transfer between sets.

    Args:
        sets: name → item table or paired table (see module docstring).
        modes: any of ``"item"``, ``"paired"``. An item table has no paired mode (recorded as
            not applicable).
        n_permutations: label permutations per member (the null; recorded).
        seed: side-order randomisation, KFold shuffling, permutations and bootstraps.
        n_boot: group-bootstrap resamples for the a_imp and a_hum intervals.
        ceilings: user-supplied human ceilings ``(set, mode) → (a_hum, lo, hi)``.
        transfer: also fit each member on one set and score it on every other (same mode).
        set_meta: free-form per-set metadata carried into the result (label origin, trimming).
        members: restrict the family (tests/benchmarks only); default the whole frozen family.
    """
    for m in modes:
        if m not in ("item", "paired"):
            raise InputError(f"unknown mode {m!r} (use item, paired or both)", field="mode")
    ceilings = dict(ceilings or {})
    results: list[ModeResult] = []
    prepared: dict[tuple[str, str], Prepared] = {}
    for name, df in sets.items():
        for mode in modes:
            if mode == "paired" and not is_paired_table(df):
                results.append(ModeResult(name, mode, False, reason="per-item labels, not comparisons"))
                continue
            prep = prepare_paired(df, seed=seed) if mode == "paired" else prepare_item(df)
            prepared[(name, mode)] = prep
            results.append(audit_prepared(prep, set_name=name, n_permutations=n_permutations, seed=seed,
                                          n_boot=n_boot, ceiling=ceilings.get((name, mode)),
                                          members=members))
    transfers: list[TransferScore] = []
    if transfer:
        cache: dict[Any, Any] = {}
        for (sn, sm), sp in prepared.items():
            for (tn, tm), tp in prepared.items():
                if sn != tn and sm == tm:
                    transfers.append(transfer_scores(sp, tp, source_name=sn, target_name=tn, cache=cache))
    config = {"family": list(FAMILY), "provenance_member": PROVENANCE_MEMBER, "modes": list(modes),
              "n_permutations": n_permutations, "seed": seed, "n_boot": n_boot, "n_folds": N_FOLDS,
              "classifier": f"LogisticRegression({', '.join(f'{k}={v!r}' for k, v in CLASSIFIER_PARAMS.items())})",
              "ngram": {k: (list(v) if isinstance(v, tuple) else v) for k, v in NGRAM_PARAMS.items()},
              "length_unit_for_rules": "characters",
              "a_imp_interval": "max over members of simultaneous group-bootstrap bands "
                                "(max-|t| over members per replicate)",
              "a_imp_null": "max over members of κ per label permutation (same permutations for every member)",
              "a_hum": "κ of each annotator against the strict majority of the others on a_imp's label space, "
                       "pooled over held-out labels, items weighted equally; no strict majority or a label "
                       "outside the space: not scored",
              "multiple_testing": "Benjamini–Hochberg across the rows of each table of p-values",
              "null": {"item": "labels permuted within group (singleton groups pooled into one stratum), "
                                "same folds",
                       "paired": "each pair's two sides permuted (label swapped with probability 1/2), "
                                 "same folds"}}
    return ValidationPowerResult(tuple(results), tuple(transfers), config, dict(set_meta or {}))


__all__ = [
    "CLASSIFIER_PARAMS", "FAMILY", "HEDGES", "MEMBERS", "NGRAM_PARAMS", "NUMERIC_SURFACE_FEATURES",
    "PROVENANCE_MEMBER", "UNIVERSALS", "FoldPlan", "HumanCeiling", "MemberScore", "NgramBank", "ModeResult",
    "Prepared", "TransferScore", "ValidationPowerResult", "a_imp_interval", "audit_prepared", "audit_validation_power",
    "between_group_label_share", "bootstrap_kappa_ci", "fleiss_kappa_general", "held_out_annotator_rows",
    "human_ceiling", "is_paired_table",
    "kappa_from_confusions", "label_permutations", "length_only_features", "length_rules", "make_classifier", "make_folds",
    "make_ngram_vectorizer", "numeric_surface_features", "oof_predictions", "permutation_strata",
    "pooled_kappa", "prepare_item", "prepare_paired", "rowspace_basis", "rowspace_reduce", "token_count", "transfer_scores",
]

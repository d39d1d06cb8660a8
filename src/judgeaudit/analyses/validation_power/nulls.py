"""Folds and label-permutation nulls (construct-validity.txt App. E): GroupKFold on the group key
where there are ≥ 5 groups (else a seeded KFold), and every member refit on labels permuted within
group under identical folds; a null sitting clearly above chance marks a broken harness."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.stats.resample import permute_within_groups

if TYPE_CHECKING:
    from judgeaudit.analyses.validation_power.modes import Prepared


N_FOLDS = 5
MIN_GROUPS_FOR_GROUPKFOLD = 5
BROKEN_NULL_KAPPA = 0.05
"""A permutation null whose mean κ exceeds this (and 3 standard errors) marks a broken harness."""


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


def _broken(null: np.ndarray) -> bool:
    if len(null) == 0:
        return False
    se = null.std(ddof=1) / math.sqrt(len(null)) if len(null) > 1 else 0.0
    return bool(null.mean() > max(BROKEN_NULL_KAPPA, 3 * se))

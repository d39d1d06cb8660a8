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

The implementation is split by concept: ``family`` (the frozen members and the fitting engine),
``modes`` (preparing a table for per-item or paired mode), ``nulls`` (folds and label-permutation
nulls), ``scoring`` (pooled κ and the a_imp interval), ``ceiling`` (a_hum), ``transfer``,
``results`` and ``audit``. Every name is importable from this package.
"""

from __future__ import annotations

from judgeaudit.analyses.validation_power.audit import audit_prepared, audit_validation_power
from judgeaudit.analyses.validation_power.ceiling import (
    HumanCeiling,
    fleiss_kappa_general,
    held_out_annotator_rows,
    human_ceiling,
)
from judgeaudit.analyses.validation_power.family import (
    CLASSIFIER_PARAMS,
    FAMILY,
    HEDGES,
    MEMBERS,
    NGRAM_PARAMS,
    NUMERIC_SURFACE_FEATURES,
    PROVENANCE_MEMBER,
    UNIVERSALS,
    NgramBank,
    _Designs,  # noqa: F401  (internal; tests reach the fitting engine through this package)
    _Provenance,  # noqa: F401
    _fit_predict,  # noqa: F401
    length_only_features,
    make_classifier,
    make_ngram_vectorizer,
    numeric_surface_features,
    oof_predictions,
    oof_predictions_many,
    rowspace_reduce,
    token_count,
)
from judgeaudit.analyses.validation_power.logistic import LogisticFit, fit_logistic, fit_logistic_many
from judgeaudit.analyses.validation_power.rowspace import RowSpace, row_space
from judgeaudit.analyses.validation_power.modes import (
    ITEM_PREFERRED,
    ITEM_REJECTED,
    Prepared,
    between_group_label_share,
    has_condition,
    is_paired_table,
    length_rules,
    prepare_item,
    prepare_paired,
)
from judgeaudit.analyses.validation_power.nulls import (
    BROKEN_NULL_KAPPA,
    MIN_GROUPS_FOR_GROUPKFOLD,
    N_FOLDS,
    FoldPlan,
    label_permutations,
    make_folds,
    permutation_strata,
)
from judgeaudit.analyses.validation_power.results import MemberScore, ModeResult, ValidationPowerResult
from judgeaudit.analyses.validation_power.scoring import (
    a_imp_interval,
    bootstrap_kappa_ci,
    kappa_from_confusions,
    pooled_kappa,
)
from judgeaudit.analyses.validation_power.transfer import TransferScore, transfer_scores

__all__ = [
    "BROKEN_NULL_KAPPA", "ITEM_PREFERRED", "ITEM_REJECTED", "MIN_GROUPS_FOR_GROUPKFOLD", "N_FOLDS", "has_condition",
    "CLASSIFIER_PARAMS", "FAMILY", "HEDGES", "MEMBERS", "NGRAM_PARAMS", "NUMERIC_SURFACE_FEATURES",
    "PROVENANCE_MEMBER", "UNIVERSALS", "FoldPlan", "HumanCeiling", "LogisticFit", "MemberScore", "NgramBank", "ModeResult",
    "Prepared", "RowSpace", "TransferScore", "ValidationPowerResult", "a_imp_interval", "audit_prepared", "audit_validation_power",
    "between_group_label_share", "bootstrap_kappa_ci", "fit_logistic", "fit_logistic_many", "fleiss_kappa_general", "held_out_annotator_rows",
    "human_ceiling", "is_paired_table",
    "kappa_from_confusions", "label_permutations", "length_only_features", "length_rules", "make_classifier", "make_folds",
    "make_ngram_vectorizer", "numeric_surface_features", "oof_predictions", "oof_predictions_many", "permutation_strata",
    "pooled_kappa", "prepare_item", "prepare_paired", "row_space", "rowspace_reduce", "token_count", "transfer_scores",
]

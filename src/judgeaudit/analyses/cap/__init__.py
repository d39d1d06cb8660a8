"""Conditional accuracy profiles (CAP) of pairwise judges.

Specification: conditional-accuracy-profiles.txt §3.1 (Eq. 1, Table 1), §3.2 (Table 2 coverage),
§3.3 (estimators), Appendices D (operators), H (strict vs. consistency), J (within-family L1),
K (bias-corrected estimates), L (exclusions), M (Eq. 2 Spearman, Eq. 3 stress degradation).

Inputs are tables only:

* ``pairs``: the pairwise table of one or more benchmarks (``records.PAIRWISE_COLUMNS``; a
  ``base_id`` column names the resampling unit, default ``pair_id``; a ``variant`` column marks
  presentation variants, default ``"original"``; ``augmented`` marks generated variants).
* ``judges``: the per-item two-order tables (``datasets._common.TWO_ORDER_COLUMNS``), one per
  judge, ``choice_ba`` already in the original frame.
* ``coverage``: per benchmark (``source_set``), per condition, a ``CoverageCell``.
* optionally ``rationale_labels`` (pair_id, judge_id, supports) from the C8 evaluator.

Every cell is an accuracy (Eq. 1) over its subset with a nonparametric bootstrap over units
(1,000 resamples by default) computed as one matrix product: a ``(n_boot, n_units)``
multiplicity matrix times the unit-level numerators and denominators of every cell at once.

The implementation is split by concept: ``conditions`` (the frozen registry, Table 1), ``indicators``
(per-row verdict indicators), ``coverage`` (which rows a coverage cell selects), ``intervals`` (the
unit-level accumulator and its bootstrap), ``cells`` (every judge's cells by their operators),
``bias`` (Appendix K), ``ranking`` (Eq. 2), ``stress`` (Eq. 3), ``families`` (Appendix J's L1),
``result`` (the result object) and ``profile`` (the entry point).
"""

from __future__ import annotations

from judgeaudit.analyses.cap.bias import bias_correct
from judgeaudit.analyses.cap.conditions import (
    CONDITION_BY_CODE,
    CONDITION_CODES,
    CONDITIONS,
    CONTENT,
    MAIN_STATUSES,
    ROBUSTNESS,
    Category,
    Condition,
    FailurePolicy,
)
from judgeaudit.analyses.cap.families import L1_RELATIONS, _l1_table, l1_summary  # noqa: F401 - _l1_table: tests
from judgeaudit.analyses.cap.indicators import PAIR_VERDICT_COLUMNS, pair_verdicts
from judgeaudit.analyses.cap.intervals import UNIT_COLUMNS
from judgeaudit.analyses.cap.profile import cap_profile
from judgeaudit.analyses.cap.result import BENCHMARK_SCORE_COLUMNS, CapResult

__all__ = [
    "BENCHMARK_SCORE_COLUMNS",
    "CONDITIONS",
    "CONDITION_BY_CODE",
    "CONDITION_CODES",
    "CONTENT",
    "L1_RELATIONS",
    "MAIN_STATUSES",
    "PAIR_VERDICT_COLUMNS",
    "ROBUSTNESS",
    "UNIT_COLUMNS",
    "CapResult",
    "Category",
    "Condition",
    "FailurePolicy",
    "bias_correct",
    "cap_profile",
    "pair_verdicts",
    "l1_summary",
]

"""The (S, R) validity profile of a graded judge (construct-validity.txt §2, §4.1–4.2, §5.1–5.2,
Appendices A–D, H S2/S4).

Inputs are two tables:

* the probe table (``records.PROBE_COLUMNS``): one row per (base item, intervention);
* the verdict table: at least ``judge_id, request_id, score, parse_ok, error, epoch``. The grade of
  a base item's original has ``request_id = base_id``; an edited text's has ``request_id =
  probe_id``. ``score`` is the graded overreach score (1–9, possibly a non-integer expected score).
  Rows with an error, ``parse_ok`` False or a NaN score are unusable: they are counted, never
  silently dropped. Epoch 0 gives the profile; epochs ≥ 1 are re-grades, used only for regrade
  agreement: the share of re-graded requests whose grade is reproduced exactly (App. D, Figure 10),
  with the agreement of the binary verdict at τ beside it as ``regrade_binary_agreement``.

For every judge the binary verdict at threshold τ is ``flagged = score ≥ τ`` (Remark 1: we cut the
grade ourselves), a probe *flips* when its original and edited verdicts differ, and

* ``S`` = share of construct-preserving (control) probes that do not flip,
* ``R`` = share of construct-changing probes that flip,

both by Eq. (6): base items weighted equally, interventions equally within a base item. Beside R,
``R_plus`` counts the construct flips toward the labelled direction (a higher grade is more
overreach, so the edit labelled as overreaching is flagged and its original is not) and
``wrong_way_rate`` the flips the other way; R = R⁺ + wrong-way rate. The frontier (Def. 4) is
traced over every attained threshold; the operating point is the threshold with the highest R
subject to S ≥ the floor. Intervals resample base items (App. A.2), one counts matrix shared by
every judge and every statistic, so all intervals are paired, and the operating point is chosen
again in every resample. ``R_excess`` (R − (1 − S)) reads each half of the base items at the τ
chosen on the other half, so that the choice of τ cannot make a judge with no sensitivity look
sensitive (``analyses.excess``, with its interval's measured coverage). The scope − strength gap's null permutes axis labels (§5.2) within base items where the
design gives base items edits on both axes, across the construct arm where a base item carries one
construct edit (``choose_gap_null``; the run records which).

The implementation is split by concept: ``rates`` (flips, Eq. (6) and the base-item bootstrap),
``design`` (the arms, measurable slots and axes), ``frontier`` (the frontier, the matched operating
point and the cross-fitted ``R_excess``), ``directions`` (R⁺ and the wrong-way rate), ``gap`` (the
scope − strength gap and its null), ``length`` (the §5.2 length checks), ``verdicts`` (the verdict table
read once for every judge), ``judge`` (one judge's profile in named steps), ``result`` (the result objects) and ``profile`` (the entry point).
"""

from __future__ import annotations

from judgeaudit.analyses.validity.design import SLOT_ORDER, probe_design
from judgeaudit.analyses.validity.frontier import frontier_hull, matched_operating_point, matched_operating_points
from judgeaudit.analyses.validity.gap import GAP_NULLS, WITHIN_BASE_SHARE, choose_gap_null
from judgeaudit.analyses.validity.judge import USABLE_POINT_SHARE
from judgeaudit.analyses.validity.profile import TAU_IN_BOOTSTRAP, validity_profile
from judgeaudit.analyses.validity.rates import (  # noqa: F401 - _eta_squared: read by the analysis's own tests
    _eta_squared,
    base_weighted_mean,
    flips_at,
    membership,
    per_base_means,
)
from judgeaudit.analyses.validity.result import JudgeProfile, ValidityResult

__all__ = [
    "GAP_NULLS",
    "SLOT_ORDER",
    "TAU_IN_BOOTSTRAP",
    "USABLE_POINT_SHARE",
    "WITHIN_BASE_SHARE",
    "JudgeProfile",
    "ValidityResult",
    "base_weighted_mean",
    "choose_gap_null",
    "flips_at",
    "frontier_hull",
    "matched_operating_point",
    "matched_operating_points",
    "membership",
    "per_base_means",
    "probe_design",
    "validity_profile",
]

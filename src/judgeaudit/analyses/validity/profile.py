"""The entry point of the validity analysis: every judge's (S, R) profile on one probe set, with the
cross-judge summaries (construct-validity.txt §2, §4.2, §5.1–5.2, App. A–D).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity.design import _design
from judgeaudit.analyses.validity.gap import GAP_NULLS, choose_gap_null
from judgeaudit.analyses.validity.judge import _judge_profile
from judgeaudit.analyses.validity.length import _length_table
from judgeaudit.analyses.validity.rates import _eta_squared, _membership
from judgeaudit.analyses.validity.result import ValidityResult, _mean_flip_rate
from judgeaudit.analyses.validity.verdicts import read_table, requests_of
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, axis_of
from judgeaudit.stats.resample import bootstrap_counts

TAU_IN_BOOTSTRAP = ("reselect", "fixed")


def validity_profile(probes: pd.DataFrame, verdicts: pd.DataFrame, *, s_floor: float = 0.90,
                     bar: float = 0.75, n_boot: int = 2000, n_perm: int = 2000, level: float = 0.95,
                     seed: int = 0, gap_null: str = "auto",
                     tau_in_bootstrap: str = "reselect") -> ValidityResult:
    """The (S, R) validity profile of every judge in a verdict table (construct-validity.txt §2,
    §4.2, §5.1–5.2, App. A–D).

    Args:
        probes: the probe table (``records.PROBE_COLUMNS``; ``labels`` and ``intended_direction``
            optional).
        verdicts: the verdict table (``judge_id, request_id, score, parse_ok, error, epoch``).
        s_floor: the invariance floor for the matched operating point, set before the run.
        bar: the raw pairwise agreement a slot or axis must reach to be measurable (App. C).
        n_boot: bootstrap resamples of base items (0: no intervals).
        n_perm: axis-label permutations for the gap's null (0: no p-value).
        level: interval coverage.
        seed: seed of the counts matrix and of the permutations.
        gap_null: ``"auto"`` (default: chosen by the design, ``choose_gap_null``),
            ``"construct_arm"`` (§5.2: axis labels permuted across the construct arm) or
            ``"within_base"`` (only within each base item: degenerate with one construct edit per
            base item). The result records the null used and why (``gap_null_reason``).
        tau_in_bootstrap: ``"reselect"`` (the operating point is chosen again in every resample, so
            the intervals are those of the whole procedure) or ``"fixed"`` (τ held at the point
            estimate's value: ignores the selection, kept for comparison).

    Returns:
        A ``ValidityResult``; judges in order of first appearance in ``verdicts``.
    """
    if probes.empty:
        raise ValueError("the probe table is empty")
    for c in ("judge_id", "request_id", "score"):
        if c not in verdicts.columns:
            raise ValueError(f"verdict table lacks column {c!r}")
    if gap_null not in GAP_NULLS:
        raise ValueError(f"gap_null must be one of {GAP_NULLS}, not {gap_null!r}")
    if tau_in_bootstrap not in TAU_IN_BOOTSTRAP:
        raise ValueError(f"tau_in_bootstrap must be one of {TAU_IN_BOOTSTRAP}, not {tau_in_bootstrap!r}")
    d = _design(probes, bar)
    if gap_null == "auto":
        gap_null, gap_null_reason = choose_gap_null(d)
    else:
        gap_null_reason = "requested"
    n_b = len(d.bases)
    counts = bootstrap_counts(n_b, n_boot, seed).astype(float) if n_boot > 0 else np.zeros((0, n_b))
    req = requests_of(d)
    table = read_table(verdicts, req)
    member = _membership(d.base_index, n_b)
    judges, perms = [], {}
    for jid, rows in table.judges:
        judges.append(_judge_profile(str(jid), table, rows, req, d, counts=counts, member=member, s_floor=s_floor,
                                     level=level, n_perm=n_perm, seed=seed, gap_null=gap_null,
                                     tau_in_bootstrap=tau_in_bootstrap, perms=perms))
    length = _length_table(d)
    slot_r = {s: r for s in CONSTRUCT_SLOTS if (r := _mean_flip_rate(judges, s)) is not None}
    length["eta2_axis_mean_over_judges"] = _eta_squared(list(slot_r.values()), [axis_of(s) for s in slot_r])
    return ValidityResult(s_floor=s_floor, bar=bar, level=level, n_boot=n_boot, n_perm=n_perm, seed=seed,
                          n_base=n_b, n_probes=len(d.probe_ids), direction_source=d.direction_source,
                          judges=tuple(judges), slots=d.slots, axes=d.axes, length=length,
                          notes=tuple(d.notes), gap_null=gap_null, tau_in_bootstrap=tau_in_bootstrap,
                          gap_null_reason=gap_null_reason)


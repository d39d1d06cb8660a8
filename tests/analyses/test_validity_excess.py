"""``R_excess`` (R − (1 − S) at a cross-fitted operating point) is calibrated for a judge with no
construct sensitivity, over 150 simulated data sets (``analyses.excess``). Its own file, so that the
suite's workers (``--dist loadfile``) run it beside the other calibration sweeps."""

from __future__ import annotations

import numpy as np

from judgeaudit.analyses.validity import validity_profile

try:
    from simulate_validity import binomial_band, make_probes, null_judge_grades, one_edit_per_arm
except ImportError:  # tests laid out as a package
    from .simulate_validity import binomial_band, make_probes, null_judge_grades, one_edit_per_arm


def _in(ci, x):
    return ci is not None and ci[0] - 1e-12 <= x <= ci[1] + 1e-12


def test_no_sensitivity_judge_excess_over_control_is_calibrated_despite_the_chosen_tau():
    """τ = argmax R s.t. S ≥ floor is chosen on the data its statistics use. For a judge with no
    construct sensitivity (construct and control flip rates equal at every τ) R − (1 − S) read at
    that τ is biased upward; ``R_excess`` reads each fold of base items at the τ chosen on the other
    fold, so it is centred on 0 and its interval covers 0 at about the nominal 95%."""
    n = 150
    cover, excess, naive = 0, [], []
    probes = make_probes(80, slots_of=one_edit_per_arm)   # the design; the statistics read the grades, never the texts
    for i in range(n):
        p = validity_profile(probes, null_judge_grades(probes, seed=70_000 + i), n_boot=200, n_perm=0, seed=i)["null"]
        cover += _in(p["R_excess_ci"], 0.0)
        excess.append(p["R_excess"])
        naive.append(p["R"] - p["control_flip_rate"])
    assert np.mean(naive) > 0.02                        # the selected point is optimistic: the hard design
    assert abs(np.mean(excess)) < 0.01
    lo, hi = binomial_band(n, 0.95)
    assert lo <= cover / n <= hi, cover / n

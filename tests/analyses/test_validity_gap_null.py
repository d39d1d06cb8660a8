"""Size and power of the scope − strength gap's permutation null (construct-validity.txt §5.2) on the
bundled all-slots design, where the design's null permutes axis labels within base items. One sweep
of 300 simulated data sets feeds every check (a module fixture). Its own file, so that the suite's
workers (``--dist loadfile``) run it beside the other calibration sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.analyses.validity import validity_profile

try:
    from simulate_validity import binomial_band, make_probes, planted, simulate_grades
except ImportError:  # tests laid out as a package
    from .simulate_validity import binomial_band, make_probes, planted, simulate_grades

N_SETS = 300


@pytest.fixture(scope="module")
def all_slots_sweep() -> dict[str, np.ndarray]:
    """Over ``N_SETS`` data sets of 48 base items carrying every slot: the design's null used, the
    p-values with equal scope and strength rates (size), and with a planted gap of 0.12 under the
    design's null and under the across-arm shuffle (power); 99 permutations each."""
    nulls, p_size, p_auto, p_across = [], [], [], []
    for i in range(N_SETS):
        probes = make_probes(48, seed=i)
        r = validity_profile(probes, simulate_grades(probes, planted(0.05, 0.35, 0.35), seed=50_000 + i),
                             n_boot=0, n_perm=99, seed=i)
        nulls.append(r.gap_null)
        p_size.append(r["sim"]["gap_perm_p"])
        g = simulate_grades(probes, planted(0.05, 0.42, 0.30), seed=60_000 + i)
        p_auto.append(validity_profile(probes, g, n_boot=0, n_perm=99, seed=i)["sim"]["gap_perm_p"])
        p_across.append(validity_profile(probes, g, n_boot=0, n_perm=99, seed=i,
                                         gap_null="construct_arm")["sim"]["gap_perm_p"])
    return {"nulls": np.array(nulls), "size": np.array(p_size), "auto": np.array(p_auto),
            "across": np.array(p_across)}


@pytest.mark.slow
def test_axis_permutation_null_rejects_at_about_5_percent_without_a_gap(all_slots_sweep):
    """Without a gap the permutation test rejects at 0.05 in 2–9% of 300 data sets (the sweep's size
    half: equal scope and strength flip rates, 99 permutations)."""
    rejections = np.mean(all_slots_sweep["size"] <= 0.05)
    assert 0.02 <= rejections <= 0.09, rejections


@pytest.mark.slow
def test_gap_null_size_and_power_on_the_all_slots_design(all_slots_sweep):
    """Over 300 simulated data sets (equal scope and strength rates for size, a planted gap of 0.12
    for power): on the bundled all-slots design the design's null (within base items) rejects at 0.05
    about 5% of the time and at 0.5 about half the time, and it rejects a real gap at least as often
    as the across-arm shuffle, which unbalances each base item's split and is conservative there (the
    one-edit design's null, across the arm: ``test_gap_null_has_its_nominal_size_on_the_one_edit_design``)."""
    assert (all_slots_sweep["nulls"] == "within_base").all()
    ps = all_slots_sweep["size"]
    for alpha in (0.05, 0.5):
        lo, hi = binomial_band(N_SETS, alpha)
        assert lo <= np.mean(ps <= alpha) <= hi, (alpha, np.mean(ps <= alpha))
    auto, across = np.mean(all_slots_sweep["auto"] <= 0.05), np.mean(all_slots_sweep["across"] <= 0.05)
    assert auto > across, (auto, across)

"""Size and power of the scope − strength gap's permutation null (construct-validity.txt §5.2) on the
bundled all-slots design, where the design's null permutes axis labels within base items. One sweep
of 300 simulated data sets feeds every check (a module fixture). Its own file, so that the suite's
workers (``--dist loadfile``) run it beside the other calibration sweeps."""

from __future__ import annotations

import numpy as np
import pandas as pd
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
    design's null and under the across-arm shuffle (power); 99 permutations each.

    One probe table serves every data set: the gap and its null read the grades and the design
    (base items × slots), never the texts. The size and power judges of a data set share one
    ``validity_profile`` call (the same seed, so the same permutations as two calls: every judge's
    profile is its own)."""
    probes = make_probes(48, seed=0)
    nulls, p_size, p_auto, p_across = [], [], [], []
    for i in range(N_SETS):
        size = simulate_grades(probes, planted(0.05, 0.35, 0.35), seed=50_000 + i, judge_id="size")
        power = simulate_grades(probes, planted(0.05, 0.42, 0.30), seed=60_000 + i, judge_id="power")
        r = validity_profile(probes, pd.concat([size, power], ignore_index=True), n_boot=0, n_perm=99, seed=i)
        nulls.append(r.gap_null)
        p_size.append(r["size"]["gap_perm_p"])
        p_auto.append(r["power"]["gap_perm_p"])
        p_across.append(validity_profile(probes, power, n_boot=0, n_perm=99, seed=i,
                                         gap_null="construct_arm")["power"]["gap_perm_p"])
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


def test_a_judges_p_value_is_the_same_alone_and_on_other_texts(all_slots_sweep):
    """The sweep's sharing changes no number: data set 0's size judge, profiled alone on a probe
    table with other texts, has the p-value the shared call gave it."""
    probes = make_probes(48, seed=7)
    alone = validity_profile(probes, simulate_grades(probes, planted(0.05, 0.35, 0.35), seed=50_000),
                             n_boot=0, n_perm=99, seed=0)["sim"]["gap_perm_p"]
    assert alone == all_slots_sweep["size"][0]

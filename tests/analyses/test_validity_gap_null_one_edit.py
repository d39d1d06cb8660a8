"""Size of the scope − strength gap's permutation null (construct-validity.txt §5.2) on the paper's
design, one construct edit per base item, where the null permutes axis labels across the construct
arm. Its own file, so that the suite's workers (``--dist loadfile``) run it beside the other
calibration sweeps."""

from __future__ import annotations

import numpy as np

from judgeaudit.analyses.validity import validity_profile

try:
    from simulate_validity import binomial_band, make_probes, one_edit_per_arm, planted, simulate_grades
except ImportError:  # tests laid out as a package
    from .simulate_validity import binomial_band, make_probes, one_edit_per_arm, planted, simulate_grades


def test_gap_null_has_its_nominal_size_on_the_one_edit_design():
    """Equal scope and strength rates: over 300 simulated data sets the permutation p-values are
    about uniform, so the test rejects at 0.05 about 5% of the time and at 0.5 about half the time
    (bands: a level-p test stays inside with probability 0.999)."""
    fp = planted(0.05, 0.35, 0.35)
    n = 300
    ps = []
    probes = make_probes(120, slots_of=one_edit_per_arm)   # the design; the null reads the grades, never the texts
    for i in range(n):
        v = simulate_grades(probes, fp, seed=50_000 + i)
        r = validity_profile(probes, v, n_boot=0, n_perm=99, seed=i)
        assert r.gap_null == "construct_arm"
        ps.append(r["sim"]["gap_perm_p"])
    ps = np.array(ps)
    for alpha in (0.05, 0.5):
        lo, hi = binomial_band(n, alpha)
        assert lo <= np.mean(ps <= alpha) <= hi, (alpha, np.mean(ps <= alpha))

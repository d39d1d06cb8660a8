"""The validity profile's base-item bootstrap intervals cover the planted truth at their level
(construct-validity.txt App. A.2), over 240 simulated data sets. Its own file, so that the suite's
workers (``--dist loadfile``) run it beside the other calibration sweeps."""

from __future__ import annotations

from judgeaudit.analyses.validity import validity_profile

try:
    from simulate_validity import make_probes, planted, simulate_grades, truth
except ImportError:  # tests laid out as a package
    from .simulate_validity import make_probes, planted, simulate_grades, truth


def _in(ci, x):
    return ci is not None and ci[0] - 1e-12 <= x <= ci[1] + 1e-12


def test_bootstrap_interval_covers_the_truth_about_95_percent():
    fp = planted({"elaboration": 0.10, "format_shift": 0.05, "register_shift": 0.08, "reordering": 0.06,
                  "verbosity_padding": 0.12},
                 {"domain_extension": 0.5, "population_widening": 0.4, "quantifier_strengthening": 0.45,
                  "tense_modality_shift": 0.35},
                 {"condition_removal": 0.3, "hedging_removal": 0.2, "intensifier_addition": 0.25})
    t = truth(fp)
    n = 240
    hits = {k: 0 for k in ("S", "R", "gap")}
    probes = make_probes(48)   # the design; the intervals read the grades, never the texts
    for i in range(n):
        v = simulate_grades(probes, fp, seed=i + 10_000)
        p = validity_profile(probes, v, n_boot=500, n_perm=0, seed=i)["sim"]
        assert p["tau"] == 7.0
        hits["S"] += _in(p["S_ci"], t["S"])
        hits["R"] += _in(p["R_ci"], t["R"])
        hits["gap"] += _in(p["gap_ci"], t["gap"])
    for k, h in hits.items():
        assert 0.92 <= h / n <= 0.98, (k, h / n)

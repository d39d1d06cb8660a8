"""The profile's wrong-way note fires on the card's rule (the wrong-way rate's interval wholly above R⁺'s), not on
a count: "at least half of the flips go the wrong way" holds for about half of the judges with no direction
preference."""

from __future__ import annotations

import numpy as np

from judgeaudit.analyses.validity import validity_profile
from simulate_validity import make_probes, planted, simulate_grades


def _noted(p_high: float, seed: int) -> tuple[bool, dict]:
    probes = make_probes(24, seed=seed)
    v = simulate_grades(probes, planted(0.05, 0.5, 0.5), seed=seed, judge_id="j", p_high=p_high)
    r = validity_profile(probes, v, n_boot=200, n_perm=0, seed=seed)
    d = r.to_dict()["judges"]["j"]
    return any("go the wrong way" in n for n in d.get("notes", [])), d


def test_a_judge_with_no_direction_preference_rarely_gets_the_note():
    fired, half = [], []
    for s in range(20):
        noted, d = _noted(0.5, s)
        fired.append(noted)
        dd = d["directional"]
        half.append(dd["n_flips"] > 0 and 2 * dd["n_wrong_way"] >= dd["n_flips"])
    assert np.mean(half) > 0.2          # the count alone would fire often on this judge
    assert sum(fired) <= 3              # binomial 99% quantile of 20 draws at 5%


def test_a_judge_whose_flips_mostly_go_the_wrong_way_gets_it():
    noted = [_noted(0.9, s)[0] for s in range(10)]
    assert sum(noted) >= 8

"""The check that the labelled items are a uniformly random subset of the judged items: its size on
random subsets and its power on labels drawn from the judge's most confident items."""

from __future__ import annotations

import numpy as np
from judgeaudit.analyses.calibrate.simulate import confident_subset

from judgeaudit.analyses.calibrate.randomness import random_subset_check, warning

REPS = 200


def _flag_rate(n, random, seed):
    _, yh, lab = confident_subset(REPS, n, 1000, random=random, seed=seed)
    return np.mean([random_subset_check(yh[i][lab[i]], yh[i][~lab[i]])["flagged"] for i in range(REPS)])


def test_fisher_flags_a_confident_subset_and_seldom_a_random_one():
    assert _flag_rate(40, False, 1) >= 0.55          # measured 0.94 (0.66 with 20 labels)
    assert _flag_rate(200, False, 2) >= 0.95         # measured 1.00
    assert _flag_rate(40, True, 3) <= 0.08           # measured 0.06 (nominal 0.05; Monte Carlo s.e. 1.6 pp)


def test_graded_verdicts_use_a_permutation_test():
    rng = np.random.default_rng(0)
    same = random_subset_check(rng.integers(1, 6, 60), rng.integers(1, 6, 600), n_perm=500)
    assert "permutation" in same["test"] and not same["flagged"]
    # the labelled items are the judge's extreme grades: same mean, other distribution
    chosen = random_subset_check(rng.choice([1, 5], 60), rng.integers(1, 6, 600), n_perm=500)
    assert chosen["flagged"] and chosen["p"] < 0.01
    assert "may not be a uniformly random subset" in warning(chosen)

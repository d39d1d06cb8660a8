"""``stats.agreement.cohen_kappa`` gives scikit-learn's ``cohen_kappa_score`` to the last bit
(it replicates its arithmetic without its input validation), and the App. A.3 degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgeaudit.stats.agreement import cohen_kappa


@pytest.mark.parametrize("k, n, seed", [(2, 7, 0), (2, 500, 1), (3, 120, 2), (5, 1000, 3), (2, 40, 4)])
def test_bit_identical_to_sklearn(k, n, seed):
    rng = np.random.default_rng(seed)
    cats = np.array(["A", "B", "preferred", "rejected", "tie"])[:k]
    a = cats[rng.integers(0, k, n)]
    b = np.where(rng.random(n) < 0.6, a, cats[rng.integers(0, k, n)])
    assert cohen_kappa(a, b) == cohen_kappa_score(a, b)
    # a label only one rater uses
    b2 = b.copy()
    b2[0] = "zz"
    assert cohen_kappa(a, b2) == cohen_kappa_score(a, b2)


def test_hand_computed_and_degenerate():
    # 2x2 table [[2, 1], [0, 1]]: po = 3/4, pe = (3·2 + 1·2)/16 = 1/2, κ = (3/4 − 1/2)/(1/2) = 1/2
    assert cohen_kappa(["x", "x", "x", "y"], ["x", "x", "y", "y"]) == pytest.approx(0.5)
    assert cohen_kappa(["x", "x"], ["x", "x"]) == 0.0           # one label: 0 (App. A.3)
    assert cohen_kappa(["x", "x"], ["y", "y"]) == 0.0           # chance agreement undefined → 0

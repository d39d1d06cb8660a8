"""One paired design (``stats.paired.differences``) behind every B − A judgeaudit reports: a world run's paired
gain between arms (``paired_gain``) and a card diff between two runs (``card.paired.compare``) read the same
numbers from the same counts; paired resampling cancels between-unit variance, unpaired does not."""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.card.paired import Units, compare
from judgeaudit.stats.paired import METRICS, arm_resamples, differences, metric, paired_gain
from judgeaudit.stats.resample import bootstrap_counts, percentile_interval


def _arms(n: int, seed: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster counts (tp, fn, tn, fp, fa) of two judges on the same clusters; each cluster has its own
    difficulty (shared by both judges), judge B catches ``shift`` more of the defective units."""
    rng = np.random.default_rng(seed)
    hard = rng.uniform(0.2, 0.95, n)   # 1 − hard + shift ≤ 1: the planted gain is not clipped
    defective = rng.integers(5, 31, n)
    clean = rng.integers(1, 6, n)
    out = []
    for s in (0.0, shift):
        tp = rng.binomial(defective, np.clip(1 - hard + s, 0, 1))
        fp = rng.binomial(clean, 0.1)
        out.append(np.stack([tp, defective - tp, clean - fp, fp, fp], axis=1).astype(float))
    return out[0], out[1]


@pytest.mark.parametrize("name", METRICS)
def test_a_world_gain_and_a_card_diff_are_one_computation(name):
    ca, cb = _arms(60, 1, 0.15)
    gain = paired_gain(ca, cb, name, n_boot=500, seed=4)
    f = lambda s: metric(s, name)   # noqa: E731
    ids = np.array([f"c{i:03d}" for i in range(len(ca))])   # sorted as the shared units are
    card = compare(Units("cluster", ids, ca, {name: f}), Units("cluster", ids[::-1], cb[::-1], {name: f}),
                   n_boot=500, seed=4)[name]
    assert card.paired and card.n_shared == len(ca)
    assert (card.diff, *card.ci) == gain
    # by hand: one multiplicity matrix for both arms
    w = bootstrap_counts(len(ca), 500, 4)
    assert gain == (float(metric(cb.sum(0), name)) - float(metric(ca.sum(0), name)),
                    *percentile_interval(metric(w @ cb, name) - metric(w @ ca, name)))


def test_unpaired_arms_are_resampled_independently():
    ca, cb = _arms(40, 2, 0.1)
    wa, wb = arm_resamples(40, 30, paired=False, n_boot=200, seed=7)
    assert np.array_equal(wa, bootstrap_counts(40, 200, 7)) and np.array_equal(wb, bootstrap_counts(30, 200, 8))
    f = lambda s: metric(s, "recall")   # noqa: E731
    a, b, ci = differences({"r": (f, f)}, ca, cb[:30], paired=False, n_boot=200, seed=7)["r"]
    assert ci == percentile_interval(metric(wb @ cb[:30], "recall") - metric(wa @ ca, "recall"))
    with pytest.raises(ValueError, match="same units"):
        arm_resamples(40, 30, paired=True)
    assert differences({"r": (f, f)}, ca, cb, n_boot=0)["r"][2] == pytest.approx((np.nan, np.nan), nan_ok=True)


def test_pairing_cancels_the_clusters_difficulty():
    """Planted effect: B catches 0.15 more of the defective units on clusters of very different difficulty.
    Both intervals cover the planted recall gain; the paired one is the narrower (the clusters' difficulty,
    shared by both judges, cancels), the unpaired one pays for it."""
    ca, cb = _arms(200, 3, 0.15)
    f = lambda s: metric(s, "recall")   # noqa: E731
    _, _, paired = differences({"r": (f, f)}, ca, cb, paired=True, n_boot=1000, seed=0)["r"]
    _, _, unpaired = differences({"r": (f, f)}, ca, cb, paired=False, n_boot=1000, seed=0)["r"]
    assert paired[0] < 0.15 < paired[1] and unpaired[0] < 0.15 < unpaired[1]
    assert paired[1] - paired[0] < 0.6 * (unpaired[1] - unpaired[0])

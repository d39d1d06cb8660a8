"""The gate's decision rule on simulated intervals: size and power.

Each simulated card holds a PPI++ interval for a pass rate (a biased binary judge, 200 human labels,
2,000 unlabelled items; ``judgeaudit.analyses.calibrate.simulate``). With the true rate exactly at the
bar, PASS (the 95% interval clearing ``>= bar``) must be rare — a one-sided 2.5% error, so at most 4%
over 1,000 sets — and FAIL as rare; 0.10 above the bar, PASS must be the common outcome.
"""

from __future__ import annotations

from collections import Counter


from judgeaudit.analyses.calibrate.simulate import binary_sets, ppi_batch
from judgeaudit.gate import evaluate_policy
from judgeaudit.gate.policy import Bar, Policy, parse_expression

Z = 1.959963984540054


def _outcomes(p: float, bar: float, seed: int) -> Counter:
    y, yh, yu = binary_sets(1000, 200, 2000, p=p, seed=seed)
    est, se, _ = ppi_batch(y, yh, yu)
    terms, cond = parse_expression(f"calibrate.pass_rate >= {bar}")
    policy = Policy((Bar("pass rate", cond.bar, terms, cond),))
    out = Counter()
    for e, s in zip(est, se, strict=True):
        card = {"sections": {"calibrate": {"pass_rate": {"value": float(e), "ci": [e - Z * s, e + Z * s]}}}}
        out[evaluate_policy(policy, card).outcome] += 1
    return out


def test_size_at_the_bar():
    got = _outcomes(0.30, 0.30, seed=31)        # measured: 22 PASS, 31 FAIL, 947 BLIND
    assert got["PASS"] / 1000 <= 0.04, got
    assert got["FAIL"] / 1000 <= 0.04, got
    assert got["BLIND"] / 1000 >= 0.92, got


def test_power_above_the_bar():
    got = _outcomes(0.40, 0.30, seed=32)
    assert got["PASS"] / 1000 >= 0.88, got     # measured 0.931 (PPI++ half-width ≈ 0.055 here)
    assert got["FAIL"] == 0, got

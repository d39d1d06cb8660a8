"""The gate's decision rule on simulated intervals: size and power.

Each simulated card holds a PPI++ interval for a pass rate (a biased binary judge, 200 human labels,
2,000 unlabelled items; ``judgeaudit.analyses.calibrate.simulate``). With the true rate exactly at the
bar, PASS (the 95% interval clearing ``>= bar``) must be rare — a one-sided 2.5% error, so at most 4%
over 1,000 sets — and FAIL as rare; 0.10 above the bar, PASS must be the common outcome.
"""

from __future__ import annotations

from collections import Counter

from cardshape import whole

from judgeaudit.analyses.calibrate.simulate import binary_sets, ppi_batch
from judgeaudit.gate import evaluate_policy
from judgeaudit.gate.policy import Bar, Policy, parse_expression

Z = 1.959963984540054


def _outcomes(p: float, bar: float, seed: int) -> Counter:
    y, yh, yu = binary_sets(1000, 200, 2000, p=p, seed=seed)
    est, se, _ = ppi_batch(y, yh, yu)
    terms, cond = parse_expression(f"calibrate.estimate >= {bar}")
    policy = Policy((Bar("pass rate", cond.bar, terms, cond),))
    out = Counter()
    for e, s in zip(est, se, strict=True):
        card = whole({"sections": {"calibrate": {"measured": True, "target": "pass_rate", "n": {"labelled": 200},
                                                 "estimate": {"value": float(e), "ci": [e - Z * s, e + Z * s]}}}})
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


# ----------------------------------------------------------------------------- the example policies' bars
# Size and power of every bar of docs/gate/*.yaml, as the policy states it (its unit floors included), on the
# designs users have (gate_size_sim: the validity profile on 5 and 48 base items, the demo's world slices of 7 and
# 16 questions). A judge that misses a bar by a hair (0.005-0.006 on the wrong side) must PASS at most 5% of the
# time; one that meets it exactly must FAIL at most 5% of the time (each interval is a 95% percentile interval:
# 2.5% one-sided when it covers). 200 simulated judges per cell (500 resamples each). Measured, as false PASS at a
# hair's miss / false FAIL at the bar (BLIND: every judge BLIND, by the floor), before (units counted as edits and
# answers, the unpaired bound, fail.yaml with no floor) and now (at 48 base items the floor is met either way and
# the interval read is the same, so the outcomes are too):
#
#   policy     bar                                      design        before          now
#   pass.yaml  R >= 0.30 at S >= 0.90  (30 units)       5 bases       0.120 / 0.125   BLIND (5 base items < 30)
#                                                       48 bases      0.030 / 0.025   0.030 / 0.025
#   pass.yaml  informed − blind recall >= 0.10          7 questions   BLIND           BLIND (7 < 16)
#              (30 answers before; 16 questions now)    16 questions  0.015 / 0.005   0.045 / 0.050 (paired)
#   pass.yaml  informed specificity >= 0.50             7 questions   BLIND           BLIND (7 < 16)
#              (30 answers before; 16 questions now)    16 questions  0.045 / 0.035   0.045 / 0.035
#   fail.yaml  R >= 0.90 at S >= 0.90  (no floor → 30)  5 bases       0.070 / 0.070   BLIND (5 < 30)
#                                                       48 bases      0.030 / 0.040   0.030 / 0.040
#   blind.yaml R >= 0.30 at S >= 0.90  (500 units)      5, 48 bases   BLIND           BLIND
#   blind.yaml informed − blind recall >= 0.10 (100)    7, 16 q.      BLIND           BLIND
#
# Before, the world bars' 16-question cells were read on 32 answers ≥ 30 through the unpaired bound (rarely
# decisive either way: 98% BLIND); now they are read on 16 questions through the paired interval (92% BLIND at the
# bar), at the 5% limit on false FAIL: 16 questions is the smallest world slice these bars can be read on.
# pass.yaml's `control_flip_rate <= 0.10` is gone (a bar the S floor implies: test_gate.py).
# Not simulated here: fail.yaml's vp.a_imp (the surface-only family's fit per label set), blind.yaml's CAP and loop
# bars (the demo runs no CAP, and its loop has 9 units against the bar's 30: BLIND by the floor).

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from gate_size_sim import outcomes, validity_cards, world_cards  # noqa: E402

from judgeaudit.gate import load_policy  # noqa: E402

POLICIES = Path(__file__).resolve().parents[2] / "docs" / "gate"
HAIR = 0.005


def _bar(policy: str, quantity: str, value: float):
    bars = [b for b in load_policy(POLICIES / f"{policy}.yaml").bars
            if b.quantity == quantity and b.condition.value == value]
    assert len(bars) == 1, (policy, quantity, value)
    return bars[0]


VALIDITY = [("pass", 0.30), ("fail", 0.90), ("blind", 0.30)]
WORLD_DIFF = [("pass",), ("blind",)]


@pytest.mark.slow                   # 200 validity profiles per cell: minutes on a busy machine
@pytest.mark.parametrize("policy, bar_value", VALIDITY)
@pytest.mark.parametrize("bases", [5, 48])
def test_validity_bars_size_and_power(policy, bar_value, bases):
    bar = _bar(policy, "R", bar_value)
    miss = outcomes(bar, validity_cards(bases, round(bar_value - 0.006, 3)))       # R 0.294: 0.006 short
    meet = outcomes(bar, validity_cards(bases, bar_value))
    n = sum(miss.values())
    assert miss["PASS"] / n <= 0.05, (policy, bases, miss)
    assert meet["FAIL"] / n <= 0.05, (policy, bases, meet)


@pytest.mark.parametrize("policy", ["pass", "blind"])
@pytest.mark.parametrize("questions", [7, 16])
def test_world_difference_bars_size_and_power(policy, questions):
    bar = _bar(policy, "world.informed.recall - world.blind.recall", 0.10)
    miss = outcomes(bar, world_cards(questions, 0.5, 0.10 - HAIR, 0.9))
    meet = outcomes(bar, world_cards(questions, 0.5, 0.10, 0.9))
    n = sum(miss.values())
    assert miss["PASS"] / n <= 0.05, (policy, questions, miss)
    assert meet["FAIL"] / n <= 0.05, (policy, questions, meet)


@pytest.mark.parametrize("questions", [7, 16])
def test_world_specificity_bar_size_and_power(questions):
    bar = _bar("pass", "world.informed.specificity", 0.50)
    miss = outcomes(bar, world_cards(questions, 0.5, 0.3, 0.50 - HAIR))
    meet = outcomes(bar, world_cards(questions, 0.5, 0.3, 0.50))
    n = sum(miss.values())
    assert miss["PASS"] / n <= 0.05, (questions, miss)
    assert meet["FAIL"] / n <= 0.05, (questions, meet)

"""``calibrate --plan``: the labels needed for a target interval width, by formula and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from judgeaudit.analyses.calibrate.simulate import graded_sets

from judgeaudit.analyses.calibrate.plan import plan_binary, plan_lines, plan_pairs, ppi_se

Z2 = 2 * 1.959963984540054


def test_binary_plan_reaches_its_width_in_simulation():
    plan = plan_binary(0.08, 0.3, 0.85, 0.75, 10_000, sets=300, seed=1)
    n_h, n_p = plan["human"]["n"], plan["ppi"]["n"]
    assert n_h == math.ceil(Z2 ** 2 * 0.21 / 0.08 ** 2)                       # 505: (2z)²·p(1 − p)/w²
    q = 0.3 * 0.85 + 0.7 * 0.25
    assert Z2 * ppi_se(n_p, 0.21, q * (1 - q), 0.3 * (0.85 - q), 10_000) <= 0.08
    assert Z2 * ppi_se(n_p - 1, 0.21, q * (1 - q), 0.3 * (0.85 - q), 10_000) > 0.08   # the least such n
    assert n_p < n_h                                                           # the judge is worth labels
    for key in ("ppi", "human"):
        s = plan[key]["simulated"]
        assert s[f"{key}_width"] <= 0.08 * 1.03 and s[f"{key}_coverage"] >= 0.93, (key, s)
    lines = plan_lines(plan)
    assert lines[0].startswith(f"PPI++: {n_p} labels") and "coverage" in lines[0]


def test_a_rare_class_needs_ten_labels_of_it():
    plan = plan_binary(0.2, 0.02, 0.9, 0.9, 5000, sets=100)
    assert plan["support_floor"] == 500 and plan["ppi"]["n"] == 500 and plan["ppi"]["n_formula"] < 500
    assert "put 10 of each class" in plan_lines(plan)[0]


def test_pilot_pairs_plan():
    y, yh, _ = graded_sets(1, 300, 10, seed=3)
    plan = plan_pairs(0.4, y[0], yh[0], 5000, (float(y.min()) - 1, float(y.max()) + 2), sets=200, seed=2)
    assert plan["ppi"]["n"] < plan["human"]["n"]
    assert plan["human"]["n"] == math.ceil(Z2 ** 2 * np.var(y[0], ddof=1) / 0.4 ** 2)
    s = plan["ppi"]["simulated"]
    assert s["ppi_width"] == pytest.approx(0.4, rel=0.05) and s["ppi_coverage"] >= 0.93

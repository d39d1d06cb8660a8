"""Loop accounting on hand-made before/after tables: exact fixed, broken, net and the rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit.loop.accounting import net_bootstrap, round_summary, spearman_permutation, summarise, transitions
from judgeaudit.loop.engine import COMPLAINT_COLUMNS, UNIT_COLUMNS


def _units(rows, regulator="A", rnd=1):
    out = []
    for item, unit, init, end, flagged, acted in rows:
        out.append({"regulator": regulator, "round": rnd, "item_id": item, "unit": unit, "pass_initial": init,
                    "pass_start": init, "pass_end": end, "loose_initial": init, "loose_end": end,
                    "flagged": flagged, "acted": acted})
    return pd.DataFrame(out, columns=list(UNIT_COLUMNS))


ROWS = [  # item, unit, initial, end, flagged, acted
    ("i1", "u1", False, True, True, True),    # fixed
    ("i1", "u2", True, False, False, True),   # broken, unflagged but followed
    ("i2", "u1", True, True, True, True),     # a false alarm, not broken
    ("i3", "u1", False, False, False, False),  # untouched
    ("i4", "u1", False, True, True, True),    # fixed
]


def _complaints(correct, regulator="A"):
    return pd.DataFrame([{"regulator": regulator, "round": 1, "item_id": "i1", "text": "t", "severity": 1,
                          "units": [], "correct": c} for c in correct], columns=list(COMPLAINT_COLUMNS))


def test_transitions_exact():
    t = transitions(pd.Series([False, True, True, False, False]), pd.Series([True, False, True, False, True]))
    assert (t.fixed, t.broken, t.n) == (2, 1, 5)
    assert t.net == pytest.approx(0.2)


def test_round_summary_hand_computed():
    s = round_summary(_units(ROWS), _complaints([True, True, False]))
    assert (s["fixed"], s["broken"]) == (2, 1)
    assert s["net"] == pytest.approx((2 - 1) / 5)
    assert s["pass_rate"] == pytest.approx(3 / 5)
    assert s["acted_on"] == 3                         # i1, i2, i4
    assert s["false_alarm_rate"] == pytest.approx(1 / 2)   # satisfied: i1/u2 (clean), i2/u1 (flagged)
    assert s["break_rate_flagged"] == 0.0             # i2/u1 kept
    assert s["break_rate_unflagged"] == 1.0           # i1/u2 broken
    assert s["precision"] == pytest.approx(2 / 3)


def test_bootstrap_is_degenerate_when_every_response_moves_alike_and_paired_across_arms():
    rows = [(f"i{k}", "u", False, True, True, True) for k in range(10)]
    units = pd.concat([_units(rows, "A"), _units(rows, "B")])
    boot = net_bootstrap(units, ["A", "B"], 1, n_boot=200, seed=1)
    assert np.all(boot["A"] == 1.0)
    assert np.all(boot["A"] - boot["B"] == 0.0)       # same resamples for both arms


def test_bootstrap_resamples_responses_not_units():
    # one response with 3 fixed units and one with 1 broken unit: every resample's net is one of
    # (3a - b)/(3a + b) for a + b = 2 responses drawn, i.e. 1, 0.5 or -1; never a unit-level mix.
    rows = [("i1", "a", False, True, True, True), ("i1", "b", False, True, True, True),
            ("i1", "c", False, True, True, True), ("i2", "a", True, False, True, True)]
    boot = net_bootstrap(_units(rows), ["A"], 1, n_boot=500, seed=0)
    assert set(np.round(boot["A"], 6)) <= {1.0, 0.5, -1.0}


def test_spearman_three_arms_perfectly_ordered_gives_one_sixth():
    r = spearman_permutation([0.1, 0.5, 1.0], [-0.1, 0.0, 0.05])
    assert r["rho"] == pytest.approx(1.0)
    assert r["p"] == pytest.approx(1 / 6)


def test_summarise_final_round_against_initial():
    r1 = _units(ROWS, "A", 1)
    r2 = _units(ROWS, "A", 2)
    r2["pass_start"] = r1["pass_end"].to_numpy()
    r2.loc[r2["item_id"] == "i3", "pass_end"] = True           # round 2 fixes i3 too
    comps = _complaints([True, True, False])
    s = summarise(pd.concat([r1, r2]), comps, ["A"], 2, n_boot=100)
    a = s["regulators"]["A"]
    assert (a["fixed"], a["broken"], a["net"]) == (3, 1, pytest.approx(0.4))
    assert [x["net"] for x in a["rounds"]] == [pytest.approx(0.2), pytest.approx(0.4)]
    assert a["rounds"][1]["fixed_this_round"] == 1 and a["rounds"][1]["broken_this_round"] == 0
    assert s["before"] == {"pass_rate": pytest.approx(0.4), "loose_pass_rate": pytest.approx(0.4), "n_units": 5,
                           "n_responses": 4}


def test_no_bootstrap_gives_nan_intervals():
    s = summarise(_units(ROWS), _complaints([True]), ["A"], 1, n_boot=0)
    assert all(x != x for x in s["regulators"]["A"]["net_ci"])


def test_multi_round_sums_and_rates_over_the_same_rounds():
    # round 1: i1/u1 fixed, i1/u2 broken, i4/u1 fixed; round 2 breaks i4/u1 again (flagged), fixes i3/u1
    # and restores i1/u2 — initial → final: fixed 2 (i1/u1, i3/u1), broken 0 (i4/u1 is back to failing)
    r1 = _units(ROWS, "A", 1)
    r2 = _units(ROWS, "A", 2)
    r2["pass_start"] = r1["pass_end"].to_numpy()
    end2 = {("i1", "u1"): True, ("i1", "u2"): True, ("i2", "u1"): True, ("i3", "u1"): True, ("i4", "u1"): False}
    r2["pass_end"] = [end2[(i, u)] for i, u in zip(r2["item_id"], r2["unit"], strict=True)]
    r2["flagged"] = [u == "u1" and i in ("i3", "i4") for i, u in zip(r2["item_id"], r2["unit"], strict=True)]
    r2["acted"] = r2["item_id"].isin(["i1", "i3", "i4"]).to_numpy()
    c2 = _complaints([False, True])
    c2["round"] = 2
    comps = pd.concat([_complaints([True, True, False]), c2])
    a = summarise(pd.concat([r1, r2]), comps, ["A"], 2, n_boot=0)["regulators"]["A"]
    assert (a["fixed"], a["broken"]) == (2, 0)                      # final round against the initial outputs
    # Fig. 16b: each round against its own start, summed: round 1 fixes 2 and breaks 1, round 2 fixes 2
    # (i1/u2, i3/u1) and breaks 1 (i4/u1); their difference over N is the same net
    assert (a["fixed_summed"], a["broken_summed"]) == (4, 2)
    assert (a["fixed_summed"] - a["broken_summed"]) / 5 == pytest.approx(a["net"]) == pytest.approx(0.4)
    # every rate over both rounds, pooled: satisfied at a round's start: round 1 i1/u2, i2/u1; round 2
    # i1/u1, i2/u1, i4/u1 — flagged: i2/u1 (round 1), i4/u1 (round 2) → 2/5
    assert a["false_alarm_rate"] == pytest.approx(2 / 5)
    # followed and satisfied: round 1 i1/u2 (unflagged, broken), i2/u1 (flagged, kept); round 2 i1/u1
    # (unflagged, kept), i4/u1 (flagged, broken)
    assert (a["break_rate_flagged"], a["break_rate_unflagged"]) == (pytest.approx(1 / 2), pytest.approx(1 / 2))
    assert a["acted_on"] == 3 + 3 and a["precision"] == pytest.approx(3 / 5)
    assert [x["false_alarm_rate"] for x in a["rounds"]] == [pytest.approx(1 / 2), pytest.approx(1 / 3)]


def test_a_scalar_arm_has_no_rate():
    s = summarise(_units(ROWS), _complaints([True, False]), ["A"], 1, n_boot=0, scalar=["A"])
    a = s["regulators"]["A"]
    assert [a[k] for k in ("precision", "false_alarm_rate", "break_rate_flagged", "break_rate_unflagged")] == [None] * 4
    assert s["precision_vs_net"]["regulators"] == []

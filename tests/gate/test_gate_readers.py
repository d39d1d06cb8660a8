"""The gate's quantity readers (``gate.quantities``) section by section — CAP, calibrate, migrate, a world
run's paired gain read either way round, the validity profile, the ruler rows, the loop, the generic
path — and the interval rules at their edges (``gate.evaluate``): the unpaired bound of a difference,
a side with several readings, strict and loose comparators, the operating point, the S floor."""

from __future__ import annotations

import json
import math

import pytest
from cardshape import whole

from judgeaudit.errors import InputError
from judgeaudit.gate import evaluate, load_policy
from judgeaudit.gate.evaluate import worst
from judgeaudit.gate.quantities import read, read_paired

NAN = float("nan")


def _m(v, lo, hi, **kw):
    return {"value": v, "ci": [lo, hi], **kw}


def card(**sections):
    base = {
        "validity": {"measured": True, "s_floor": 0.9, "interpretable": True, "bootstrap": {"unit": "base_id", "n": 48},
                     "metrics": {"S": _m(0.95, 0.92, 0.97), "R": _m(0.42, 0.36, 0.48)}},
        "world": {"measured": True,
                  "arms": {"blind": {"recall": _m(0.30, 0.22, 0.38, n=60, unit="group")},
                           "informed": {"recall": _m(0.62, 0.55, 0.69, n=40, unit="group"),
                                        "specificity": _m(0.9, 0.85, 0.95, n=70, unit="group")}},
                  "paired": [{"metric": "recall", "a": "blind", "b": "informed", "gain": 0.32, "ci": [0.2, 0.45],
                              "n": 55, "unit": "group"}]},
        "cap": {"measured": True, "sets": {"llmbar": {
            "overall": _m(0.7, 0.6, 0.8, n=120),
            "conditions": {"hard": _m(0.5, 0.35, 0.65, n=40)}}}},
        "calibrate": {"measured": True, "n": {"labelled": 50, "positives": 12, "negatives": 38},
                      "estimate": _m(0.31, 0.25, 0.37), "human": _m(0.3, 0.18, 0.42), "tpr": _m(0.9, 0.7, 0.98),
                      "tnr": _m(0.8, 0.66, 0.9), "agreement": {"cohen_kappa": _m(0.65, 0.54, 0.74)}},
        "migrate": {"measured": True, "verdict": "LINKABLE", "reasons": [], "n": {"units": 30},
                    "quantities": [{"name": "kappa", "value": 0.1, "ci": [0.05, 0.2], "n": 30}],
                    "linked": [{"name": "kappa", "value": 0.02, "ci": [-0.01, 0.05], "n": 30},
                               {"name": "gone", "value": None, "ci": None}]},
        "vp": {"measured": True, "rows": [{"set": "a", "mode": "item", "n": 400, "a_imp": 0.08, "a_imp_ci": [0.03, 0.13]},
                                          {"set": "b", "mode": "item", "n": 300, "a_imp": 0.18, "a_imp_ci": [0.1, 0.26]}]},
        "loop": {"measured": True, "regulators": {"informed": {"net": 4.0, "ci": [1.0, 9.0]}},
                 "numbers": {"other": 3, "loop.n_units": 25}},
        "extra": {"kappa": 0.3, "kappa_ci": [0.2, 0.4]},
    }
    base.update(sections)
    return whole({"judge": "j", "sections": base})


def one(c, name):
    rs = read(c, name)
    assert len(rs) == 1, rs
    return rs[0]


# ------------------------------------------------------------------------------------------- the readers


def test_cap_reads_the_overall_cell_and_a_condition_with_their_items():
    c = card()
    r = one(c, "cap.llmbar.overall")
    assert (r.value, r.ci, r.n, r.missing) == (0.7, (0.6, 0.8), 120, None)
    r = one(c, "cap.llmbar.hard")
    assert (r.value, r.ci, r.n) == (0.5, (0.35, 0.65), 40)
    assert "no condition 'easy'" in one(c, "cap.llmbar.easy").missing
    assert "no set 'x' (llmbar)" in one(c, "cap.x.overall").missing
    assert one(c, "cap.llmbar").missing == "a CAP quantity is cap.<set>.<condition|overall>"
    off = card(cap={"measured": False, "not_measured": "not run"})
    assert one(off, "cap.llmbar.overall").missing == "not run"
    assert one(card(calibrate=None), "calibrate.tpr").missing == "the card has no such section"
    with pytest.raises(InputError) as e:                     # every card holds a CAP section, measured or not
        one(card(cap=None), "cap.llmbar.overall")
    assert e.value.field == "sections.cap" and "malformed card" in str(e.value)


def test_calibrate_counts_positives_for_tpr_negatives_for_tnr_and_all_labels_otherwise():
    c = card()
    assert (one(c, "calibrate.tpr").n, one(c, "calibrate.tnr").n, one(c, "calibrate.estimate").n) == (12, 38, 50)
    r = one(c, "calibrate.agreement.cohen_kappa")
    assert (r.value, r.ci, r.n, r.missing) == (0.65, (0.54, 0.74), 50, None)
    assert one(c, "calibrate.human").value == 0.3
    assert "reports no agreement.margin" in one(c, "calibrate.agreement.margin").missing
    assert "no quantity 'bias'" in one(c, "calibrate.bias").missing
    c2 = card(calibrate={"measured": True, "n": {"labelled": None}, "estimate": {"value": None, "ci": [0.1, 0.2]}})
    r = one(c2, "calibrate.estimate")
    assert r.n is None and r.value is None and r.missing == "estimate is undefined in the calibrate run"
    with pytest.raises(InputError) as e:                     # a count that is not a count: named where it is
        one(card(calibrate={"measured": True, "n": {"labelled": "x"}}), "calibrate.estimate")
    assert e.value.field == "sections.calibrate.n.labelled" and "malformed card" in str(e.value)


def test_migrate_reads_its_verdict_as_one_or_zero_and_its_quantities():
    c = card()
    assert (one(c, "migrate.equivalent").value, one(c, "migrate.comparable").value) == (0.0, 1.0)
    assert one(c, "migrate.comparable").ci == (1.0, 1.0) and one(c, "migrate.comparable").n == 30
    eq = card(migrate={**c["sections"]["migrate"], "verdict": "EQUIVALENT"})
    assert (one(eq, "migrate.equivalent").value, one(eq, "migrate.comparable").value) == (1.0, 1.0)
    blind = card(migrate={**c["sections"]["migrate"], "verdict": "BLIND", "reasons": ["too few anchors"]})
    assert one(blind, "migrate.equivalent").missing == "the migrate run was BLIND: too few anchors"
    assert "the verdict is a word" in one(c, "migrate.verdict").missing
    r = one(c, "migrate.kappa")
    assert (r.value, r.ci, r.n) == (0.1, (0.05, 0.2), 30)
    r = one(c, "migrate.linked.kappa")
    assert (r.value, r.ci, r.n) == (0.02, (-0.01, 0.05), 30)
    assert one(c, "migrate.linked.gone").missing == "gone was not computable in the migrate run"
    assert "no linked quantity 'x' (one of kappa, gone)" in one(c, "migrate.linked.x").missing
    assert "no quantity 'x' (one of kappa)" in one(c, "migrate.x").missing


def test_a_world_gain_is_read_on_the_paired_interval_either_way_round():
    c = card()
    r = read_paired(c, "world.informed.recall", "world.blind.recall")
    assert (r.value, r.ci, r.n, r.unit, r.paired) == (0.32, (0.2, 0.45), 55, "source items", True)
    r = read_paired(c, "world.blind.recall", "world.informed.recall")
    assert (r.value, r.ci, r.paired) == (-0.32, (-0.45, -0.2), True)
    assert read_paired(c, "world.informed.specificity", "world.blind.specificity") is None   # no such row
    assert read_paired(c, "world.informed.recall", "world.blind.specificity") is None        # not one metric
    assert read_paired(c, "world.informed.recall", "world.other.recall") is None
    assert read_paired(c, "world.informed.recall", "cap.llmbar.overall") is None
    assert read_paired(c, "validity.R", "validity.S") is None
    undefined = card(world={**c["sections"]["world"], "paired": [
        {"metric": "recall", "a": "blind", "b": "informed", "gain": None, "ci": None}]})
    r = read_paired(undefined, "world.informed.recall", "world.blind.recall")
    assert r.value is None and r.missing == "the paired gain is undefined"


def test_world_validity_ruler_loop_and_generic_readings():
    c = card()
    r = one(c, "world.informed.recall")
    assert (r.value, r.ci, r.n, r.unit) == (0.62, (0.55, 0.69), 40, "source items")
    assert "no 'x' arm (arms: blind, informed)" in one(c, "world.x.recall").missing
    assert one(c, "world.blind.specificity").missing == "the 'blind' arm reports no specificity"
    assert one(c, "world.blind").missing == "a world quantity is world.<arm>.<recall|specificity>"
    r = one(c, "R")
    assert (r.value, r.ci, r.n, r.unit) == (0.42, (0.36, 0.48), 48, "base items")
    assert one(c, "validity.S").value == 0.95
    assert "no quantity 'T'" in one(c, "validity.T").missing
    un = card(validity={**c["sections"]["validity"], "interpretable": False})
    assert one(un, "R").missing.startswith("uninterpretable: no operating point reaches S ≥ 0.9")
    assert one(un, "S").value == 0.95                                   # S is read whatever the floor
    rows = read(c, "vp.a_imp")
    assert [(r.label, r.value, r.ci, r.n) for r in rows] == [("vp.a_imp [a, item]", 0.08, (0.03, 0.13), 400),
                                                            ("vp.a_imp [b, item]", 0.18, (0.1, 0.26), 300)]
    assert [r.value for r in read(c, "vp.b.a_imp")] == [0.18]
    assert read(c, "vp.b.kappa")[0].missing == "the ruler section has no quantity 'kappa'"
    assert read(c, "vp.z.a_imp")[0].missing == "the ruler section holds no label set 'z'"
    r = one(c, "loop.informed.net")
    assert (r.value, r.ci, r.n) == (4.0, (1.0, 9.0), 25)
    assert "no regulator 'x' (informed)" in one(c, "loop.x.net").missing
    assert one(c, "loop.informed.gain").missing == "a loop quantity is loop.<regulator>.net"
    r = one(c, "extra.kappa")
    assert (r.value, r.ci, r.n) == (0.3, (0.2, 0.4), None)
    assert one(c, "extra.nothing").missing == "the card holds no such quantity"


@pytest.mark.parametrize("n", [-1, 2.5, "12", True])
def test_a_malformed_unit_count_names_its_field(n):
    c = card()
    c["sections"]["world"]["arms"]["blind"]["recall"]["n"] = n
    with pytest.raises(InputError) as e:
        read(c, "world.blind.recall")
    assert e.value.field == "sections.world.arms.blind.recall.n"


def test_a_null_or_nan_count_is_unknown_not_an_error():
    for n in (None, NAN):
        c = card()
        c["sections"]["world"]["arms"]["blind"]["recall"]["n"] = n
        assert one(c, "world.blind.recall").n is None
    c = card()
    c["sections"]["world"]["arms"]["blind"]["recall"]["n"] = 7.0
    assert one(c, "world.blind.recall").n == 7


def test_a_count_of_zero_units_is_read_as_zero():
    """No unit is a count (a floor then decides BLIND on it), neither unknown nor malformed."""
    c = card()
    c["sections"]["world"]["arms"]["blind"]["recall"]["n"] = 0
    assert one(c, "world.blind.recall").n == 0


# ------------------------------------------------------------------------------------- the interval rules


def gate(tmp_path, bars, c=None, min_units=None):
    p = tmp_path / "p.yaml"
    head = f"min_units: {min_units}\n" if min_units else ""
    p.write_text(head + "bars:\n" + "".join(f"  - {json.dumps(b)}\n" for b in bars))
    return evaluate(load_policy(p), c or card())


def outcomes(tmp_path, bars, c=None, min_units=None):
    return [b.outcome for b in gate(tmp_path, bars, c, min_units).bars]


def test_the_unpaired_bound_of_a_difference(tmp_path):
    """CAP has no paired interval: A − B on [lo_A − hi_B, hi_A − lo_B], units the fewer of the two."""
    r = gate(tmp_path, ["cap.llmbar.overall - cap.llmbar.hard >= -1"])
    ch = r.bars[0].checks[0]
    assert ch.value == pytest.approx(0.2) and ch.ci == (pytest.approx(0.6 - 0.65), pytest.approx(0.8 - 0.35))
    assert ch.n == 40 and "unpaired bound" in ch.why and ch.outcome == "PASS"
    assert outcomes(tmp_path, ["cap.llmbar.overall - cap.llmbar.hard >= 0"]) == ["BLIND"]
    assert outcomes(tmp_path, ["cap.llmbar.overall - cap.llmbar.hard >= 0.5"]) == ["FAIL"]
    assert outcomes(tmp_path, ["cap.llmbar.overall - cap.llmbar.hard <= 0.5"]) == ["PASS"]
    # units: the world's two arms count their own source items; a difference counts the fewer
    mixed = gate(tmp_path, ["world.informed.specificity - cap.llmbar.hard >= 0"]).bars[0].checks[0]
    assert mixed.n == 40 and mixed.value == pytest.approx(0.4) and mixed.ci == (pytest.approx(0.2),
                                                                                 pytest.approx(0.6))
    # a side with no interval or no count
    noci = card(extra={"kappa": 0.3})
    assert "has no interval" in gate(tmp_path, ["extra.kappa - cap.llmbar.hard >= 0"], noci).bars[0].checks[0].why
    got = gate(tmp_path, ["extra.kappa - cap.llmbar.hard >= -5"], min_units=1).bars[0].checks[0]
    assert got.outcome == "BLIND" and got.why.startswith("no count of the units its interval resamples recorded")


def test_a_paired_world_gain_decides_where_the_bound_cannot(tmp_path):
    r = gate(tmp_path, ["world.informed.recall - world.blind.recall >= 0.15"])
    ch = r.bars[0].checks[0]
    assert ch.outcome == "PASS" and ch.ci == (0.2, 0.45) and ch.n == 55
    assert "(55 source items resampled, paired interval)" in ch.why


def test_a_side_with_several_readings_is_blind(tmp_path):
    r = gate(tmp_path, ["vp.a_imp - cap.llmbar.hard <= 1", "cap.llmbar.hard - vp.a_imp >= -1"])
    for b in r.bars:
        assert b.outcome == "BLIND" and "one reading on each side" in b.checks[0].why


def test_comparators_at_and_around_the_bar(tmp_path):
    c = card(extra={"k": {"value": 0.5, "ci": [0.4, 0.6]}, "kappa": 0.3, "kappa_ci": [0.2, 0.4]})
    got = outcomes(tmp_path, ["extra.k > 0.4", "extra.k >= 0.4", "extra.k < 0.6", "extra.k <= 0.6",
                              "extra.k > 0.3", "extra.k < 0.7", "extra.k > 0.6", "extra.k < 0.4",
                              "extra.k between 0.4 and 0.6", "extra.k between 0.7 and 0.9",
                              "extra.k between 0.1 and 0.3", "extra.k between 0.45 and 0.9"], c)
    assert got == ["BLIND", "PASS", "BLIND", "PASS", "PASS", "PASS", "FAIL", "FAIL", "PASS", "FAIL", "FAIL",
                   "BLIND"]
    r = gate(tmp_path, ["extra.k >= 0.3", "extra.k >= 0.7", "extra.k >= 0.5"], c)
    assert r.bars[0].checks[0].why == "0.5 [0.4, 0.6]: the interval clears >= 0.3"
    assert r.bars[1].checks[0].why == "0.5 [0.4, 0.6]: the interval is on the wrong side of >= 0.7"
    assert r.bars[2].checks[0].why == "0.5 [0.4, 0.6]: the interval straddles >= 0.5 (too wide to decide)"
    assert r.outcome == "FAIL" and r.exit_code == 1


def test_unit_floors_and_the_policy_outcome(tmp_path):
    r = gate(tmp_path, ["R >= 0.3", "world.informed.recall >= 0.5"], min_units=48)
    assert [b.outcome for b in r.bars] == ["PASS", "BLIND"]
    assert r.bars[1].checks[0].why == "40 source items resampled, fewer than the 48 the bar needs"
    assert r.bars[0].checks[0].why == "0.42 [0.36, 0.48] (48 base items resampled): the interval clears >= 0.3"
    assert r.outcome == "BLIND" and r.exit_code == 2
    d = r.to_dict()
    assert d["outcome"] == "BLIND" and d["exit_code"] == 2 and d["judge"] == "j"
    assert d["bars"][0]["checks"][0]["ci"] == [0.36, 0.48] and d["bars"][0]["checks"][0]["n"] == 48
    assert outcomes(tmp_path, ["R >= 0.3"], min_units=49) == ["BLIND"]
    assert gate(tmp_path, ["R >= 0.3", "S >= 0.91"]).exit_code == 0
    assert worst([]) == "BLIND" and worst(["PASS", "FAIL", "BLIND"]) == "FAIL" and worst(["PASS", "BLIND"]) == "BLIND"


def test_the_operating_point(tmp_path):
    got = gate(tmp_path, ["R >= 0.3 at S >= 0.9", "R >= 0.3 at S >= 0.96", "R >= 0.3 at vp.a_imp <= 0.5",
                          "R >= 0.3 at extra.none >= 0"])
    assert [b.outcome for b in got.bars] == ["PASS", "BLIND", "BLIND", "BLIND"]
    assert got.bars[1].checks[0].why.startswith("read at S = 0.95, not at S >= 0.96")
    assert got.bars[2].checks[0].why == "operating point vp.a_imp <= 0.5: it names several readings"
    assert got.bars[3].checks[0].why == "operating point extra.none >= 0: the card holds no such quantity"


def test_the_s_floor_implies_only_bars_no_stricter_than_it(tmp_path):
    c = card()
    assert outcomes(tmp_path, ["S >= 0.9", "S > 0.9", "validity.S >= 0.8"], c) == ["BLIND"] * 3
    assert outcomes(tmp_path, ["S >= 0.91", "S <= 0.99", "validity.S >= 0.89", "R >= 0.3"], c) == \
        ["PASS", "PASS", "BLIND", "PASS"]
    sec = c["sections"]["validity"]
    for over in ({"interpretable": None}, {"measured": False, "not_measured": "not run"},
                 {"tau_in_bootstrap": "fixed"}):
        v = card(validity={**sec, **over})
        got = outcomes(tmp_path, ["S >= 0.9"], v)
        assert got == (["BLIND"] if "measured" in over else ["PASS"]), over
    for bad in (True, "0.9"):            # a floor that is not a number: a malformed card, named where it is
        with pytest.raises(InputError) as e:
            outcomes(tmp_path, ["S >= 0.9"], card(validity={**sec, "s_floor": bad}))
        assert e.value.field == "sections.validity.s_floor" and "malformed card" in str(e.value)
    cf = card(validity={**sec, "metrics": {"control_flip_rate": _m(0.05, 0.03, 0.08)}})
    assert outcomes(tmp_path, ["control_flip_rate <= 0.1", "control_flip_rate <= 0.09",
                               "control_flip_rate >= 0.01"], cf) == ["BLIND", "PASS", "PASS"]
    assert outcomes(tmp_path, ["S - R >= 0"], c) == ["PASS"]          # a difference is not implied by the floor


def test_nan_and_none_never_reach_a_comparison(tmp_path):
    for v, ci in ((NAN, [0.1, 0.2]), (0.1, [NAN, 0.2]), (0.1, [0.1, None]), (None, None), (0.1, [0.1])):
        c = card(extra={"q": {"value": v, "ci": ci}})
        r = gate(tmp_path, ["extra.q >= 0", "extra.q between 0 and 1"], c)
        assert [b.outcome for b in r.bars] == ["BLIND", "BLIND"], (v, ci)
        assert not any(isinstance(ch.value, float) and math.isnan(ch.value) for b in r.bars for ch in b.checks)


def test_between_and_the_one_sided_comparators_agree_at_the_tolerances_edge(tmp_path):
    """An interval ending exactly BAR_TOL short of the range touches it, as ``>=`` says: BLIND on both."""
    c = card(extra={"q": {"value": 0.3, "ci": [0.2, 0.4 - 1e-12]}})
    assert outcomes(tmp_path, ["extra.q >= 0.40", "extra.q between 0.40 and 0.9"], c) == ["BLIND", "BLIND"]
    c = card(extra={"q": {"value": 0.95, "ci": [0.9 + 1e-12, 0.99]}})
    assert outcomes(tmp_path, ["extra.q <= 0.90", "extra.q between 0.40 and 0.9"], c) == ["BLIND", "BLIND"]


def test_a_difference_with_one_side_missing_says_which_and_why(tmp_path):
    """One side of a difference the card does not hold: BLIND, with that side's reason (not "no value")."""
    for bar in ("cap.llmbar.hard - extra.nothing >= 0", "extra.nothing - cap.llmbar.hard >= 0"):
        ch = gate(tmp_path, [bar]).bars[0].checks[0]
        assert ch.outcome == "BLIND" and ch.why == "the card holds no such quantity", bar


def test_a_reading_without_a_value_is_blind(tmp_path):
    """A reading that names no reason but carries no value (a side of a difference with no number) is BLIND."""
    from judgeaudit.gate.evaluate import judge_interval
    from judgeaudit.gate.quantities import Reading

    p = tmp_path / "p.yaml"
    p.write_text("bars:\n  - extra.k >= 0.4\n")
    ch = judge_interval(load_policy(p).bars[0], Reading("extra.k"))
    assert (ch.outcome, ch.why) == ("BLIND", "no value")


def test_a_cap_cell_without_its_value_names_the_cell():
    """A CAP cell missing its value is a malformed card, named where it is: the overall cell or a condition's."""
    c = card()
    c["sections"]["cap"]["sets"]["llmbar"]["overall"] = {"ci": [0.6, 0.8], "n": 120}
    with pytest.raises(InputError) as e:
        read(c, "cap.llmbar.overall")
    assert e.value.field == "sections.cap.sets.llmbar.overall.value"
    c = card()
    c["sections"]["cap"]["sets"]["llmbar"]["conditions"]["hard"] = {"ci": [0.35, 0.65], "n": 40}
    with pytest.raises(InputError) as e:
        read(c, "cap.llmbar.hard")
    assert e.value.field == "sections.cap.sets.llmbar.conditions.hard.value"

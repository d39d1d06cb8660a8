"""The (S, R) validity profile (construct-validity.txt §2, §4.2, §5.1–5.2, App. A–D)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses.validity import (
    base_weighted_mean,
    flips_at,
    frontier_hull,
    matched_operating_point,
    validity_profile,
)
from judgeaudit.probes.taxonomy import CONSTRUCT_SLOTS, CONTROL_SLOTS, axis_of

try:
    from simulate_validity import (grades_frame, make_probes, null_judge_grades, one_edit_per_arm, planted,
                                   simulate_grades, truth)
except ImportError:  # tests laid out as a package
    from .simulate_validity import (grades_frame, make_probes, null_judge_grades, one_edit_per_arm, planted,
                                    simulate_grades, truth)


def _in(ci, x):
    return ci is not None and ci[0] - 1e-12 <= x <= ci[1] + 1e-12


# ----------------------------------------------------------------------------- Proposition 2


def test_constant_judge_at_1_0_and_flip_judge_at_0_1():
    probes = make_probes(24)
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    const = grades_frame("constant", {k: 5 for k in ids})
    flip = grades_frame("flip", {**{b: 1 for b in pd.unique(probes["base_id"])},
                                 **{p: 9 for p in probes["probe_id"]}})
    res = validity_profile(probes, pd.concat([const, flip]), n_boot=200, n_perm=100)
    c, f = res["constant"], res["flip"]
    assert (c["S"], c["R"]) == (1.0, 0.0)
    assert c["single_point"] and not c["interpretable"]   # the degenerate corner says nothing about it
    assert any("single distinct grade" in n for n in c["notes"])
    assert (f["S"], f["R"]) == (0.0, 1.0)
    assert f["tau"] == 9.0
    assert not f["interpretable"]  # never reported as sensitive
    assert [0.0, 1.0, 9.0] in f["frontier"]
    # the constant corners are on every frontier
    assert f["frontier"][0][:2] == [1.0, 0.0] and f["frontier"][-1][:2] == [1.0, 0.0]
    row = res.to_frame().set_index("judge").loc["flip"]
    assert not row["interpretable"]


def test_judge_without_usable_grades_is_a_single_point_with_the_fact_stated():
    probes = make_probes(6)
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    v = pd.DataFrame({"judge_id": "broken", "request_id": ids, "score": np.nan, "parse_ok": False,
                      "error": None, "epoch": 0})
    p = validity_profile(probes, v, n_boot=50, n_perm=0)["broken"]
    assert p["single_point"] and not p["interpretable"]
    assert p["S"] is None and p["R"] is None
    assert p["parse_failures"] == len(ids)
    assert any("no usable grades" in n for n in p["notes"])


# ----------------------------------------------------------------------------- Eq. (6)


def _tiny_probes(spec):
    """spec: list of (base_id, slot) pairs."""
    rows = []
    for b, s in spec:
        rows.append({"probe_id": f"{b}-{s}", "base_id": b, "group": b, "domain": "d", "criterion": "c",
                     "evidence": "e", "original": "orig text", "edited": "edited text", "slot": s,
                     "labels": None, "intended_direction": None, "meta": {}})
    return pd.DataFrame(rows)


def test_eq6_weights_base_items_equally_not_interventions():
    # Base A: one construct edit, which flips. Base B: three construct edits, none flips.
    # Base-weighted R = (1 + 0) / 2 = 0.5; pooled over interventions it would be 1/4.
    spec = [("A", "domain_extension"), ("A", "format_shift"),
            ("B", "domain_extension"), ("B", "hedging_removal"), ("B", "condition_removal"),
            ("B", "format_shift")]
    probes = _tiny_probes(spec)
    g = {"A": 2, "B": 2, "A-domain_extension": 8, "A-format_shift": 2, "B-domain_extension": 2,
         "B-hedging_removal": 2, "B-condition_removal": 2, "B-format_shift": 2}
    p = validity_profile(probes, grades_frame("j", g), n_boot=0, n_perm=0)["j"]
    assert p["tau"] == 8.0
    assert p["R"] == pytest.approx(0.5)
    assert p["R_scope"] == pytest.approx(0.5)      # A: 1, B: 0
    assert p["R_strength"] == pytest.approx(0.0)   # only B has strength edits
    assert p["S"] == pytest.approx(1.0)
    # the pooled estimator differs: the test is not vacuous
    flips = np.array([1, 0, 0, 0], dtype=float)
    assert flips.mean() == pytest.approx(0.25)
    assert base_weighted_mean(flips, np.array([0, 1, 1, 1]), 2) == pytest.approx(0.5)


def test_flips_at_cuts_the_grade_at_tau():
    f = flips_at(np.array([2.0, 5.0, 5.0]), np.array([6.0, 5.0, 4.5]), np.array([3.0, 5.0, 7.0]))
    assert f.tolist() == [[True, True, False], [False, False, False], [False, True, False]]


# ----------------------------------------------------------------------------- frontier and operating point


def test_hull_keeps_best_R_at_that_S_or_stricter():
    pts = [(1.0, 0.0, 1), (0.95, 0.3, 2), (0.97, 0.2, 3), (0.9, 0.25, 4), (0.5, 0.9, 5), (1.0, 0.0, 6)]
    assert [p[2] for p in frontier_hull(pts)] == [1, 3, 2, 5]


def test_matched_point_highest_R_over_floor_ties_to_higher_S():
    S = np.array([1.0, 0.95, 0.92, 0.80, 1.0])
    R = np.array([0.0, 0.40, 0.40, 0.90, 0.0])
    deg = np.array([True, False, False, False, True])
    idx, ok = matched_operating_point(S, R, np.arange(5.0), deg, 0.90)
    assert (idx, ok) == (1, True)
    # a judge whose best non-degenerate S is below the floor is not interpretable
    idx, ok = matched_operating_point(np.array([1.0, 0.7, 0.85, 1.0]), np.array([0, 0.9, 0.5, 0]),
                                      np.arange(4.0), np.array([True, False, False, True]), 0.90)
    assert (idx, ok) == (2, False)


def test_proposition_3_dominated_judge_with_higher_default_R_ranks_below_at_matched_S():
    probes = make_probes(48)
    bases = list(pd.unique(probes["base_id"]))
    g1, g2 = {b: 2 for b in bases}, {b: 2 for b in bases}
    ctrl = probes[probes["slot"].isin(CONTROL_SLOTS)].reset_index(drop=True)
    cons = probes[probes["slot"].isin(CONSTRUCT_SLOTS)].reset_index(drop=True)
    for i, pid in enumerate(ctrl["probe_id"]):
        g1[pid] = 8 if (ctrl.loc[i, "slot"] == "reordering" and i % 10 < 5) else 2  # ~ 10% control flips
        g2[pid] = 2
    for i, pid in enumerate(cons["probe_id"]):
        g1[pid] = (2, 3, 4, 5, 6, 7, 8)[i % 7]
        g2[pid] = (3, 4)[i % 2]
    res = validity_profile(probes, pd.concat([grades_frame("J1", g1), grades_frame("J2", g2)]),
                           n_boot=200, n_perm=0)
    j1, j2 = res["J1"], res["J2"]
    default = {tuple(p[:2]): p[2] for p in []}  # noqa: F841 (documentation: default τ below)
    r_at = lambda p, tau: next(x[1] for x in p["frontier"] if x[2] == tau)  # noqa: E731
    # at a default threshold of 5, J1 reports the higher sensitivity ...
    assert r_at(j1, 5.0) > r_at(j2, 5.0) + 0.4
    # ... yet J2's frontier dominates J1's everywhere ...
    for s1, r1, _ in j1["frontier"]:
        assert any(s2 >= s1 and r2 >= r1 for s2, r2, _ in j2["frontier"])
    # ... and at matched invariance J2 ranks above J1
    assert j1["interpretable"] and j2["interpretable"]
    assert j2["R"] > j1["R"] and j2["S"] >= j1["S"]
    frame = res.to_frame().sort_values("R", ascending=False)
    assert frame["judge"].tolist() == ["J2", "J1"]


# ----------------------------------------------------------------------------- planted effects


def test_planted_S_R_axes_and_gap_are_recovered_within_their_intervals():
    probes = make_probes(96, seed=3)
    fps = {"good": planted(0.05, {"domain_extension": 0.6, "population_widening": 0.5,
                                  "quantifier_strengthening": 0.55, "tense_modality_shift": 0.45},
                           {"condition_removal": 0.35, "hedging_removal": 0.2, "intensifier_addition": 0.25}),
           "flat": planted(0.08, 0.3, 0.3)}
    v = pd.concat([simulate_grades(probes, fp, seed=11 + i, judge_id=j) for i, (j, fp) in enumerate(fps.items())])
    res = validity_profile(probes, v, n_boot=1000, n_perm=500)
    for j, fp in fps.items():
        p, t = res[j], truth(fp)
        assert p["tau"] == 7.0 and p["interpretable"]
        assert _in(p["S_ci"], t["S"]) and _in(p["R_ci"], t["R"])
        assert _in(p["R_scope_ci"], t["R_scope"]) and _in(p["R_strength_ci"], t["R_strength"])
        assert _in(p["gap_ci"], t["gap"])
        for s in CONSTRUCT_SLOTS + CONTROL_SLOTS:
            assert p["per_slot"][s]["n"] == 96
    assert res["good"]["gap_perm_p"] < 0.01 and res["good"]["gap_ci"][0] > 0
    assert res["flat"]["gap_perm_p"] > 0.05


# ----------------------------------------------------------------------------- direction and the bar


def _labels(n, slots_labels):
    return {s: [list(lab(b)) for b in range(n)] for s, lab in slots_labels.items()}


def test_agreement_bar_excludes_a_slot_whose_annotators_disagree():
    n = 48
    agree_c = lambda b: ("edited",) * 3  # noqa: E731
    agree_i = lambda b: ("neither",) * 3  # noqa: E731
    spec = {s: (agree_c if s in CONSTRUCT_SLOTS else agree_i) for s in CONSTRUCT_SLOTS + CONTROL_SLOTS}
    # hedging_removal: annotators split (agreement 1/3 per item), majority still 'edited'
    spec["hedging_removal"] = lambda b: ("edited", "edited", "neither")
    # tense_modality_shift: agreed, but half the items judged 'neither' (low yield, still measurable)
    spec["tense_modality_shift"] = lambda b: ("edited",) * 3 if b % 2 else ("neither",) * 3
    probes = make_probes(n, labels=_labels(n, spec))
    fp = planted(0.05, 0.4, 0.3)
    fp["hedging_removal"] = 1.0  # would pull R_strength up if it were counted
    res = validity_profile(probes, simulate_grades(probes, fp, seed=2), n_boot=200, n_perm=100)
    d = res.to_dict()
    assert d["direction_source"] == "human"
    hr = d["slots"]["hedging_removal"]
    assert hr["agreement"] == pytest.approx(1 / 3) and not hr["measurable"] and hr["n_in_arm"] == 0
    assert any("hedging_removal is not measurable" in x for x in d["notes"])
    tm = d["slots"]["tense_modality_shift"]
    assert tm["measurable"] and tm["yield"] == pytest.approx(0.5) and tm["n_in_arm"] == n // 2
    p = res["sim"]
    assert p["per_slot"]["hedging_removal"]["n"] == 0 and p["per_slot"]["hedging_removal"]["flip_rate"] is None
    # R_strength is the base-weighted mean over condition_removal and intensifier_addition only
    expect = np.mean([p["per_slot"]["condition_removal"]["flip_rate"],
                      p["per_slot"]["intensifier_addition"]["flip_rate"]])
    assert p["R_strength"] == pytest.approx(expect)
    assert p["gap_unanimous"] is not None
    frame = res.slot_frame().set_index("slot")
    assert not frame.loc["hedging_removal", "measurable"]


def test_axis_below_bar_is_excluded_and_gap_not_reported():
    n = 24
    spec = {s: (lambda b: ("edited",) * 3) for s in CONSTRUCT_SLOTS}
    spec.update({s: (lambda b: ("neither",) * 3) for s in CONTROL_SLOTS})
    for s in CONSTRUCT_SLOTS:
        if axis_of(s) == "strength":
            spec[s] = lambda b: ("edited", "original", "cannot_tell")
    probes = make_probes(n, labels=_labels(n, spec))
    res = validity_profile(probes, simulate_grades(probes, planted(0.05, 0.4, 0.3), seed=4),
                           n_boot=100, n_perm=50)
    p = res["sim"]
    assert not res.axes["strength"]["measurable"]
    assert p["R_strength"] is None and p["gap"] is None and p["gap_perm_p"] is None
    assert p["R"] == pytest.approx(p["R_scope"])
    # no majority on any strength item: reported
    assert res.slots["hedging_removal"]["n_no_majority"] == n


def test_construct_item_enters_only_if_majority_matches_and_cannot_tell_is_counted():
    n = 12
    spec = {s: (lambda b: ("edited",) * 3) for s in CONSTRUCT_SLOTS}
    spec.update({s: (lambda b: ("neither",) * 3) for s in CONTROL_SLOTS})
    spec["domain_extension"] = lambda b: (("edited",) * 3 if b < 6 else ("neither",) * 3 if b < 9
                                          else ("cannot_tell",) * 3)
    probes = make_probes(n, labels=_labels(n, spec))
    res = validity_profile(probes, simulate_grades(probes, planted(0.0, 1.0, 1.0), seed=1),
                           n_boot=0, n_perm=0)
    de = res.slots["domain_extension"]
    assert de["measurable"] and de["agreement"] == pytest.approx(1.0)
    assert de["n_in_arm"] == 6 and de["yield"] == pytest.approx(0.5)
    assert de["n_cannot_tell"] == 3 and de["n_other_direction"] == 3 and de["n_no_majority"] == 0
    assert res["sim"]["per_slot"]["domain_extension"]["n"] == 6
    # Appendix C: a pair the annotators say changes the facts is discarded as a generator failure
    probes.at[0, "meta"] = {"facts_differ": [True, True, False]}     # b000-domain_extension, in the arm
    res2 = validity_profile(probes, simulate_grades(probes, planted(0.0, 1.0, 1.0), seed=1), n_boot=0, n_perm=0)
    assert probes.at[0, "slot"] == "domain_extension"
    assert res2.slots["domain_extension"]["n_facts_differ"] == 1 and res2.slots["domain_extension"]["n_in_arm"] == 5
    assert any("cannot-tell majority on 3" in x for x in res.notes)


def test_without_labels_directions_are_intended_and_said_so():
    probes = make_probes(8)
    res = validity_profile(probes, simulate_grades(probes, planted(0.0, 0.5, 0.5)), n_boot=0, n_perm=0)
    assert res.direction_source == "intended"
    assert "directions are author-intended and not human-verified" in res.notes
    assert res.slots["format_shift"]["agreement"] is None


# ----------------------------------------------------------------------------- unusable grades


def test_missing_and_failed_grades_are_counted_not_dropped_silently():
    probes = make_probes(20)
    v = simulate_grades(probes, planted(0.05, 0.4, 0.3), seed=3).reset_index(drop=True)
    full = validity_profile(probes, v, n_boot=0, n_perm=0)["sim"]
    pids = probes["probe_id"].tolist()
    drop = v["request_id"] == pids[0]                     # missing row
    v2 = v[~drop].copy()
    v2.loc[v2["request_id"] == pids[1], ["parse_ok", "score"]] = [False, np.nan]   # parse failure
    v2.loc[v2["request_id"] == pids[2], "error"] = "timeout"                        # call error
    v2.loc[v2["request_id"] == pids[3], "score"] = np.nan                            # NaN score
    v2.loc[v2["request_id"] == "b005", ["parse_ok", "score"]] = [False, np.nan]      # a base original
    other = pd.DataFrame([{"judge_id": "sim", "request_id": "not-a-probe", "score": np.nan, "parse_ok": False,
                           "error": None, "epoch": 0}])  # another analysis's request: not counted here
    p = validity_profile(probes, pd.concat([v2, other]), n_boot=0, n_perm=0)["sim"]
    assert p["missing"] == 1 and p["parse_failures"] == 2 and p["errors"] == 1 and p["nan_scores"] == 1
    assert p["unusable_probes"] == 4 + 12      # four edits, and all 12 probes of base b005
    assert p["n_control"] + p["n_construct"] == len(probes) - 16
    assert full["unusable_probes"] == 0
    assert any("lack a usable" in n for n in p["notes"])


def test_regrade_agreement_uses_epochs_after_zero():
    probes = make_probes(10)
    v = simulate_grades(probes, planted(0.0, 0.5, 0.5), seed=5)
    again = v.iloc[:20].copy()
    again["epoch"] = 1
    again.loc[again.index[:5], "score"] = 10 - again.loc[again.index[:5], "score"]   # 3 <-> 7: verdict changes
    again.loc[again.index[5:10], "score"] = again.loc[again.index[5:10], "score"] + 0.5  # same side
    p = validity_profile(probes, pd.concat([v, again]), n_boot=0, n_perm=0)["sim"]
    assert p["n_regraded"] == 20
    assert p["regrade_agreement"] == pytest.approx(10 / 20)          # exact reproduction (App. D)
    assert p["regrade_binary_agreement"] == pytest.approx(15 / 20)
    assert p["regrade_exact_agreement"] == pytest.approx(10 / 20)
    assert validity_profile(probes, v, n_boot=0, n_perm=0)["sim"]["regrade_agreement"] is None


def test_usable_points_need_one_percent_of_grades():
    probes = make_probes(20)  # 20 bases + 240 probes = 260 grades; 1% = 2.6 grades
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    g = {k: (2 if i % 2 else 6) for i, k in enumerate(ids)}
    g[ids[0]], g[ids[1]], g[ids[2]] = 9, 9, 9     # 3 grades of 9: ≥ 1%
    g[ids[3]], g[ids[4]] = 4, 4                   # 2 grades of 4: < 1%
    p = validity_profile(probes, grades_frame("j", g), n_boot=0, n_perm=0)["j"]
    assert p["distinct_grades"] == 4 and p["usable_points"] == 3


# ----------------------------------------------------------------------------- Remark 2: remedies


def test_averaging_noisy_graders_raises_S_without_raising_R():
    """A judge with a fixed blind spot plus test–retest glitches: a K-vote mean removes the glitches,
    so S rises, while R does not rise beyond its interval (Remark 2, App. H S1)."""
    probes = make_probes(96, seed=7)
    rng = np.random.default_rng(0)
    bases = list(pd.unique(probes["base_id"]))
    base_hi = dict(zip(bases, rng.random(len(bases)) < 0.5, strict=True))
    detect = {s: (axis_of(s) == "scope") for s in CONSTRUCT_SLOTS}
    latent = {b: (7.0 if base_hi[b] else 3.0) for b in bases}
    for pid, b, s in zip(probes["probe_id"], probes["base_id"], probes["slot"], strict=True):
        flip = detect.get(s, False)
        latent[pid] = (3.0 if base_hi[b] else 7.0) if flip else latent[b]
    keys = list(latent)
    L = np.array([latent[k] for k in keys])

    def grader(k: int, jid: str) -> pd.DataFrame:
        glitch = rng.random((k, len(L))) < 0.05
        g = np.where(glitch, rng.integers(1, 10, (k, len(L))), L[None, :]).mean(axis=0)
        return pd.DataFrame({"judge_id": jid, "request_id": keys, "score": g, "parse_ok": True,
                             "error": None, "epoch": 0})

    res = validity_profile(probes, pd.concat([grader(1, "single"), grader(5, "vote:5:single")]),
                           n_boot=1000, n_perm=0)
    one, vote = res["single"], res["vote:5:single"]
    assert one["interpretable"] and vote["interpretable"]
    # R, read off the table at matched invariance, does not rise beyond the single judge's noise ...
    table = res.to_frame().set_index("judge")
    assert table.loc["vote:5:single", "R"] <= table.loc["single", "R_hi"]
    # ... while S rises: at the sensitivity the single judge reaches, the vote holds its verdict on
    # more control edits than the single judge's interval allows (read on the frontier, since the
    # matched operating point spends S down towards the floor for any judge).
    s_vote = max(s for s, r, _ in vote["hull"] if r >= one["R"])
    assert s_vote > one["S_ci"][1]
    # and the vote's whole frontier dominates in S at every R the single judge attains
    for s1, r1, _ in one["frontier"]:
        assert any(s2 >= s1 and r2 >= r1 - 0.02 for s2, r2, _ in vote["frontier"])


# ----------------------------------------------------------------------------- §5.2 length checks, η²


def test_length_checks_and_eta_squared():
    probes = make_probes(30)
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    lens = {b: len(o) for b, o in zip(probes["base_id"], probes["original"], strict=True)}
    lens.update(dict(zip(probes["probe_id"], probes["edited"].str.len(), strict=True)))
    # a length-only judge: the grade is a monotone function of length
    g = grades_frame("length", {k: 1 + lens[k] / 10 for k in ids})
    res = validity_profile(probes, g, n_boot=0, n_perm=0)
    assert res["length"]["length"]["spearman_grade_length"] == pytest.approx(1.0)
    dl = (probes["edited"].str.len() - probes["original"].str.len()) / probes["original"].str.len()
    sel = probes["slot"] == "domain_extension"
    assert res.length["per_slot"]["domain_extension"]["median_abs_dlen"] == pytest.approx(float(np.median(dl[sel].abs())))
    ax = probes["slot"].map(axis_of) == "strength"
    assert res.length["per_axis"]["strength"]["median_dlen"] == pytest.approx(float(np.median(dl[ax])))


def test_eta_squared_of_slot_R_by_axis_hand_computed():
    from judgeaudit.analyses.validity import _eta_squared

    # scope slots 0.4, 0.4, 0.6, 0.6 (mean .5), strength .2, .2, .2 (mean .2); grand = 2.6/7
    v = [0.4, 0.4, 0.6, 0.6, 0.2, 0.2, 0.2]
    g = ["scope"] * 4 + ["strength"] * 3
    grand = sum(v) / 7
    between = 4 * (0.5 - grand) ** 2 + 3 * (0.2 - grand) ** 2
    total = sum((x - grand) ** 2 for x in v)
    assert _eta_squared(v, g) == pytest.approx(between / total)


# ----------------------------------------------------------------------------- result shape


def test_result_json_shape():
    probes = make_probes(12)
    res = validity_profile(probes, simulate_grades(probes, planted(0.05, 0.5, 0.3)), n_boot=100, n_perm=50)
    d = json.loads(json.dumps(res.to_dict()))  # JSON-safe without a custom encoder
    for k in ("s_floor", "bar", "n_base", "n_probes", "direction_source", "judges"):
        assert k in d
    assert (d["n_base"], d["n_probes"]) == (12, 144)
    j = d["judges"]["sim"]
    for k in ("S", "R", "R_scope", "R_strength", "gap", "gap_ci", "gap_perm_p", "S_ci", "R_ci", "tau",
              "interpretable", "per_slot", "frontier", "usable_points", "regrade_agreement", "parse_failures"):
        assert k in j
    assert set(j["per_slot"]) == set(CONSTRUCT_SLOTS) | set(CONTROL_SLOTS)
    assert {"n", "flip_rate"} <= set(j["per_slot"]["reordering"])
    assert all(len(x) == 3 for x in j["frontier"])
    frame = res.to_frame()
    assert list(frame["judge"]) == ["sim"] and {"S", "R", "R_scope", "R_strength", "gap"} <= set(frame.columns)


# ----------------------------------------------------------------------------- §5.2 the gap's null on the hard design


def test_gap_null_permutes_axis_labels_across_the_arm_with_one_construct_edit_per_base():
    """CV §5.2: the axis label is permuted across the construct arm, grades and τ fixed. With one
    construct edit per base item (the paper's design) a within-base shuffle cannot move anything
    and returned p = 1.0 for a planted gap of 0.3."""
    probes = make_probes(240, seed=5, slots_of=one_edit_per_arm)
    v = simulate_grades(probes, planted(0.05, 0.5, 0.2), seed=6)
    res = validity_profile(probes, v, n_boot=0, n_perm=2000, seed=1)
    p = res["sim"]
    assert p["tau"] == 7.0 and p["n_construct"] == 240
    assert p["gap"] == pytest.approx(0.3, abs=0.13)
    assert p["gap_perm_p"] < 0.01
    assert res.to_dict()["gap_null"] == "construct_arm"
    # the within-base restriction is still available, and on this design it is degenerate
    within = validity_profile(probes, v, n_boot=0, n_perm=200, seed=1, gap_null="within_base")["sim"]
    assert within["gap_perm_p"] == 1.0


# ----------------------------------------------------------------------------- App. D: regrade


def test_regrade_means_exact_grade_reproduction():
    """CV App. D, Fig. 10: regrade agreement is the share of re-graded requests whose grade is
    reproduced exactly; agreement of the binary verdict at τ is reported under its own name."""
    probes = make_probes(10)
    v = simulate_grades(probes, planted(0.0, 0.5, 0.5), seed=5)
    again = v.iloc[:20].copy()
    again["epoch"] = 1
    again.loc[again.index[:4], "score"] = 10 - again.loc[again.index[:4], "score"]        # verdict changes
    again.loc[again.index[4:10], "score"] = again.loc[again.index[4:10], "score"] + 0.5   # same side of τ
    p = validity_profile(probes, pd.concat([v, again]), n_boot=0, n_perm=0)["sim"]
    assert p["tau"] == 7.0 and p["n_regraded"] == 20
    assert p["regrade_agreement"] == pytest.approx(10 / 20)
    assert p["regrade_binary_agreement"] == pytest.approx(16 / 20)
    row = validity_profile(probes, pd.concat([v, again]), n_boot=0, n_perm=0).to_frame().iloc[0]
    assert row["regrade_agreement"] == pytest.approx(0.5) and row["regrade_binary_agreement"] == pytest.approx(0.8)


# ----------------------------------------------------------------------------- τ chosen inside the bootstrap


def test_tau_is_reselected_in_every_resample():
    """The intervals are those of the whole procedure: a judge whose operating point is unstable
    gets its τ chosen again in each resample (reported as the share that kept the point's τ)."""
    probes = make_probes(80, seed=1, slots_of=one_edit_per_arm)
    v = null_judge_grades(probes, seed=3)
    re = validity_profile(probes, v, n_boot=300, n_perm=0, seed=2)["null"]
    fixed = validity_profile(probes, v, n_boot=300, n_perm=0, seed=2, tau_in_bootstrap="fixed")["null"]
    assert re["tau"] == fixed["tau"] and re["R"] == fixed["R"]
    assert 0.0 < re["tau_boot_same_share"] < 0.9 and fixed["tau_boot_same_share"] == 1.0
    assert re["R_ci"] != fixed["R_ci"]
    # a sensitive judge is told apart from its control flips by the cross-fitted excess
    good = validity_profile(probes, simulate_grades(probes, planted(0.05, 0.5, 0.4), seed=4), n_boot=300,
                            n_perm=0)["sim"]
    assert good["R_excess_ci"][0] > 0.2


# ----------------------------------------------------------------------------- cross-judge aggregates


def test_cross_judge_means_leave_out_reference_instruments_and_single_points():
    """Per-slot mean flip rate and η² "mean over judges" average the judges under study only: not a
    reference instrument (read from the verdict rows' provider, not the judge id), not a single-point
    judge. A constant judge sits at the degenerate corner (1, 0) and is not interpretable."""
    probes = make_probes(48, seed=2)
    ids = list(pd.unique(probes["base_id"])) + list(probes["probe_id"])
    good = simulate_grades(probes, planted(0.05, {"domain_extension": 0.7, "population_widening": 0.6,
                                                  "quantifier_strengthening": 0.5, "tense_modality_shift": 0.6},
                                          0.2), seed=8, judge_id="reference-style-name").assign(provider="replay")
    ref = simulate_grades(probes, planted(0.02, 0.9, 0.9), seed=9, judge_id="baseline").assign(provider="reference")
    const = grades_frame("constant", {k: 5 for k in ids}).assign(provider="replay")
    res = validity_profile(probes, pd.concat([good, ref, const]), n_boot=0, n_perm=0)
    g, r, c = res["reference-style-name"], res["baseline"], res["constant"]
    assert r["reference_instrument"] and not g["reference_instrument"] and not c["reference_instrument"]
    assert g["interpretable"] and r["interpretable"]
    assert c["single_point"] and not c["interpretable"] and (c["S"], c["R"]) == (1.0, 0.0)
    frame = res.slot_frame().set_index("slot")
    for s in CONSTRUCT_SLOTS:
        assert frame.loc[s, "mean_flip_rate"] == pytest.approx(g["per_slot"][s]["flip_rate"])
    assert res.length["eta2_axis_mean_over_judges"] == pytest.approx(g["eta2_axis"])
    assert res.to_dict()["cross_judge_judges"] == ["reference-style-name"]


# ----------------------------------------------------------------------------- directional sensitivity


def test_directional_sensitivity_splits_R_into_toward_and_wrong_way_hand_computed():
    """R counts any flip (Def. 3). A higher grade means more overreach, so a construct edit the
    labels say overreaches flips toward its direction when the edit is flagged and the original is
    not (R⁺), the wrong way when the original is flagged and the edit is not."""
    spec = [("A", "domain_extension"), ("A", "format_shift"), ("B", "hedging_removal"),
            ("B", "domain_extension"), ("B", "format_shift"), ("C", "condition_removal"), ("C", "reordering")]
    probes = _tiny_probes(spec)
    g = {"A": 2, "A-domain_extension": 8, "A-format_shift": 2,
         "B": 8, "B-hedging_removal": 2, "B-domain_extension": 8, "B-format_shift": 8,
         "C": 2, "C-condition_removal": 8, "C-reordering": 2}
    p = validity_profile(probes, grades_frame("j", g), n_boot=0, n_perm=0)["j"]
    assert (p["tau"], p["S"]) == (8.0, 1.0)
    assert p["R"] == pytest.approx(2.5 / 3)              # A: 1, B: 1/2, C: 1
    assert p["R_plus"] == pytest.approx(2 / 3)           # A: 1, B: 0, C: 1
    assert p["wrong_way_rate"] == pytest.approx(0.5 / 3)  # B: 1/2
    d = p["directional"]
    assert (d["n_flips"], d["n_toward"], d["n_wrong_way"]) == (3, 2, 1)
    assert d["scope"]["R_plus"] == pytest.approx(0.5) and d["scope"]["wrong_way_rate"] == pytest.approx(0.0)
    assert d["strength"]["R_plus"] == pytest.approx(0.5) and d["strength"]["wrong_way_rate"] == pytest.approx(0.5)


def test_directional_sensitivity_recovers_planted_rates():
    """A judge whose originals are graded high a quarter of the time flips the wrong way on a
    quarter of its construct flips: R⁺ = 0.75·R, wrong-way = 0.25·R, per axis too."""
    probes = make_probes(96, seed=4)
    fp = planted(0.05, 0.6, 0.4)
    res = validity_profile(probes, simulate_grades(probes, fp, seed=12, p_high=0.25), n_boot=1000, n_perm=0)
    p, t = res["sim"], truth(fp)
    assert p["tau"] == 7.0
    assert p["R_plus"] + p["wrong_way_rate"] == pytest.approx(p["R"])
    assert _in(p["R_plus_ci"], 0.75 * t["R"]) and _in(p["wrong_way_rate_ci"], 0.25 * t["R"])
    for ax in ("scope", "strength"):
        d = p["directional"][ax]
        assert _in(d["R_plus_ci"], 0.75 * t[f"R_{ax}"]) and _in(d["wrong_way_rate_ci"], 0.25 * t[f"R_{ax}"])
    d = json.loads(json.dumps(res.to_dict()))["judges"]["sim"]
    assert {"R_plus", "R_plus_ci", "wrong_way_rate", "wrong_way_rate_ci", "directional"} <= set(d)


# ----------------------------------------------------------------------------- the gap's null chosen by the design


def test_gap_null_is_chosen_by_the_design_and_recorded():
    """Where every base item carries edits on both axes (the bundled design: all 7 construct slots on
    each of 48 bases) the axis label is permuted within base items, which keeps each base item's own
    scope/strength split; where a base item carries one construct edit (the paper's design) that
    shuffle cannot move and the label is permuted across the arm. The run says which and why."""
    full = make_probes(48, seed=3)
    v = simulate_grades(full, planted(0.05, 0.5, 0.2), seed=4)
    res = validity_profile(full, v, n_boot=0, n_perm=199, seed=1)
    assert res.gap_null == "within_base"
    assert res.to_dict()["gap_null_reason"].startswith("48 of 48 base items in the construct arm carry edits on both")
    within = validity_profile(full, v, n_boot=0, n_perm=199, seed=1, gap_null="within_base")
    assert res["sim"]["gap_perm_p"] == within["sim"]["gap_perm_p"] < 0.05
    assert within.to_dict()["gap_null_reason"] == "requested"
    one = make_probes(60, seed=3, slots_of=one_edit_per_arm)
    r1 = validity_profile(one, simulate_grades(one, planted(0.05, 0.5, 0.2), seed=4), n_boot=0, n_perm=99, seed=1)
    assert r1.gap_null == "construct_arm" and r1.gap_null_reason.startswith("0 of 60 base items")
    from judgeaudit.report.validity import validity_sections

    assert "chosen by the design: 48 of 48 base items" in validity_sections(res)[0].body

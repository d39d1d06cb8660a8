"""CAP estimators: registry, hand-computed cells, bootstrap coverage, Spearman null, bias
correction, stress, L1, C8 evaluator rules (conditional-accuracy-profiles.txt §3, App. H–M)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgeaudit.analyses import cap
from judgeaudit.analyses.cap import CONDITIONS, bias_correct, cap_profile, l1_summary
from judgeaudit.analyses.cap_design import (
    evaluator_agreement,
    pairwise_requests,
    rationale_labels,
    rationale_requests,
    two_order_table,
)
from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell
from judgeaudit.errors import InputError
from judgeaudit.stats.tests import mcnemar_exact, spearman_permutation, wilson_interval

COV = {
    "C1": CoverageCell("direct", "first half; PA", ("s1",)),
    "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
    "C5": CoverageCell("direct", "plain vs polished; BC", variants=("original", "polished")),
    "C6": UNAVAILABLE,
    "C7": CoverageCell("direct", "A/B and B/A; BC"),
    "C8": CoverageCell("direct", "evaluator"),
}


def _pairs(n, set_name="s", labels=None, subset=None):
    labels = labels if labels is not None else ["A"] * n
    return pd.DataFrame({
        "pair_id": [f"{set_name}-{i}" for i in range(n)], "prompt": "q", "response_a": "a",
        "response_b": "b", "label": labels, "group": None, "source_set": set_name,
        "subset": subset if subset is not None else ["s1"] * n, "condition_a": None,
        "condition_b": None, "meta": [{}] * n,
    })


def _table(pids, ab, ba, judge="j", family="f", fail_ab=None, fail_ba=None):
    n = len(pids)
    return pd.DataFrame({
        "pair_id": pids, "judge_id": judge, "family": family, "choice_ab": ab, "choice_ba": ba,
        "rationale_ab": ["because"] * n, "rationale_ba": ["because"] * n,
        "failure_ab": fail_ab or [None] * n, "failure_ba": fail_ba or [None] * n,
    })


def test_registry_is_frozen():
    assert [c.code for c in CONDITIONS] == [f"C{i}" for i in range(1, 9)]
    assert [c.name for c in CONDITIONS] == ["factual", "logical", "scope-overclaim", "scope-omission",
                                            "style", "length", "position", "rationale"]
    assert cap.ROBUSTNESS == ("C5", "C6", "C7")
    assert all(c.measurement.startswith("Pr[v(x") for c in CONDITIONS if c.category == "robustness")


def test_hand_computed_cells_and_exclusions():
    # labels A,A,B,B,A ; AB / BA choices in the original frame; item 4 has a parse failure in BA
    p = _pairs(5, labels=["A", "A", "B", "B", "A"], subset=["s1", "s1", "s1", "s2", "s2"])
    t = _table(list(p["pair_id"]), ["A", "A", "A", "B", "A"], ["A", "B", "B", "A", None],
               fail_ba=[None, None, None, None, "parse"])
    r = cap_profile(p, {"j": t}, {"s": COV}, n_boot=50, seed=1)
    # C7 on items 0..3 (item 4 excluded): both correct only item 0; consistent only item 0
    assert r.value("s", "j", "C7", "strict") == pytest.approx(1 / 4)
    assert r.value("s", "j", "C7", "consistency") == pytest.approx(1 / 4)
    assert r.value("s", "j", "C7", "acc_AB") == pytest.approx(3 / 4)
    assert r.value("s", "j", "C7", "acc_BA") == pytest.approx(2 / 4)
    # C1 (subset s1: items 0,1,2) PA = (1 + .5 + .5)/3
    assert r.value("s", "j", "C1") == pytest.approx(2 / 3)
    ex = r.exclusions.set_index(["condition"]).loc["C7"]
    assert (ex["n_scope"], ex["n_parse"], ex["n_api"], ex["n_used"]) == (5, 1, 0, 4)
    # failures counted wrong instead: n = 5
    w = cap_profile(p, {"j": t}, {"s": COV}, n_boot=50, failures="wrong")
    assert w.value("s", "j", "C7", "acc_AB") == pytest.approx(4 / 5)
    assert w.value("s", "j", "C7", "acc_BA") == pytest.approx(2 / 5)
    d = r.to_dict()["sets"]["s"]["judges"]["j"]
    assert set(d["conditions"]["C7"]) >= {"value", "ci", "n", "coverage", "strict", "consistency",
                                          "acc_AB", "acc_BA"}
    assert d["conditions"]["C7"]["n"] == 4 and d["overall"]["n"] == 4


def test_paired_style_cell():
    # base items 0..3, each with an original and a polished variant
    base = _pairs(4)
    pol = base.assign(pair_id=base["pair_id"] + "|polished", variant="polished", augmented=True)
    p = pd.concat([base.assign(variant="original", base_id=base["pair_id"]),
                   pol.assign(base_id=base["pair_id"])], ignore_index=True)
    ab = ["A", "A", "B", "A"] + ["A", "B", "B", "A"]
    ba = ["A", "A", "B", "B"] + ["A", "A", "B", "B"]
    t = _table(list(p["pair_id"]), ab, ba)
    r = cap_profile(p, {"j": t}, {"s": COV}, n_boot=20)
    # per ordering strict: AB: item0 yes, item1 no (pol B), item2 no, item3 yes -> 2/4 ; BA: 0 yes, 1 yes,
    # 2 no, 3 no -> 2/4 ; value = 0.5. consistency AB: 0,2,3 -> 3/4 ; BA: all 4 -> 1 ; mean 7/8
    assert r.value("s", "j", "C5", "strict") == pytest.approx(0.5)
    assert r.value("s", "j", "C5", "consistency") == pytest.approx(7 / 8)
    # augmented rows never enter C7 / overall
    assert r.to_dict()["sets"]["s"]["judges"]["j"]["conditions"]["C7"]["n"] == 4


def _simulate(rng, n_items, acc):
    lab = rng.choice(["A", "B"], n_items)
    other = np.where(lab == "A", "B", "A")
    ab = np.where(rng.random(n_items) < acc, lab, other)
    ba = np.where(rng.random(n_items) < acc, lab, other)
    return lab, ab, ba


def test_bootstrap_intervals_cover_planted_accuracy():
    rng = np.random.default_rng(7)
    n_sims, n_items, acc = 200, 120, 0.7
    pairs, judges = [], {}
    for s in range(n_sims):
        lab, ab, ba = _simulate(rng, n_items, acc)
        p = _pairs(n_items, f"s{s}", list(lab))
        pairs.append(p)
        judges[f"j{s}"] = _table(list(p["pair_id"]), list(ab), list(ba), judge=f"j{s}")
    pairs = pd.concat(pairs, ignore_index=True)
    cov = {f"s{s}": COV for s in range(n_sims)}
    r = cap_profile(pairs, judges, cov, n_boot=400, seed=3, n_perm=9)
    c = r.cells[r.cells["judge_id"].str[1:] == r.cells["set"].str[1:]]
    for cond, metric, truth in (("overall", "value", acc), ("C7", "strict", acc * acc),
                                ("C7", "consistency", acc * acc + (1 - acc) ** 2)):
        x = c[(c["condition"] == cond) & (c["metric"] == metric)]
        assert len(x) == n_sims
        cover = ((x["ci_lo"] <= truth) & (truth <= x["ci_hi"])).mean()
        assert 0.89 <= cover <= 0.99, (cond, metric, cover)


def test_spearman_permutation_null_is_uniform():
    rng = np.random.default_rng(11)
    ps = []
    for _ in range(300):
        x, y = rng.random(10), rng.random(10)
        ps.append(spearman_permutation(x, y, n_perm=499, seed=rng)[1])
    ps = np.array(ps)
    assert stats.kstest(ps, "uniform").pvalue > 0.01
    assert 0.02 <= (ps <= 0.05).mean() <= 0.09
    # exact enumeration for small n: perfect monotone agreement among 5 judges -> p = 2/120
    rho, p = spearman_permutation([1, 2, 3, 4, 5], [10, 20, 30, 40, 50])
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 120)


def test_wilson_and_mcnemar():
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-3) and hi == pytest.approx(0.9433, abs=1e-3)
    assert mcnemar_exact(0, 6) == pytest.approx(2 * 0.5**6)


def test_bias_correction_hand_case_and_saturation():
    assert bias_correct(0.7, 0.6, 0.8) == pytest.approx(0.75)
    # 10 items, all label A. AB (gold first): 8 correct -> q1 = .8 ; BA (gold second): 6 correct -> q0 = .6
    p = _pairs(10, subset=["s1"] * 5 + ["s2"] * 5)
    ab = ["A"] * 8 + ["B"] * 2
    ba = ["A"] * 6 + ["B"] * 4
    r = cap_profile(p, {"j": _table(list(p["pair_id"]), ab, ba)}, {"s": COV}, n_boot=200, seed=0)
    bc = r.bias_corrected.set_index("condition")
    assert bc.loc["overall", "q1"] == pytest.approx(0.8) and bc.loc["overall", "q0"] == pytest.approx(0.6)
    # overall raw PA = .7 -> (.7 + .6 - 1) / (.6 + .8 - 1) = .75, not saturated
    assert bc.loc["overall", "raw"] == pytest.approx(0.7)
    assert bc.loc["overall", "corrected"] == pytest.approx(0.75)
    assert not bc.loc["overall", "saturated"]
    # C1 = items 0..4, all correct in both orders: raw 1 -> (1 + .6 - 1)/.4 = 1.5, saturated
    assert bc.loc["C1", "corrected"] == pytest.approx(1.5)
    assert bc.loc["C1", "saturated"]
    assert "C7" not in bc.index  # robustness is never corrected


def test_stress_and_l1_tables():
    pa_ = _pairs(4, "base")
    ps_ = _pairs(4, "stress")
    pairs = pd.concat([pa_, ps_], ignore_index=True)
    j1 = pd.concat([_table(list(pa_["pair_id"]), ["A"] * 4, ["A"] * 4, "j1", "x"),
                    _table(list(ps_["pair_id"]), ["A", "A", "B", "B"], ["A"] * 4, "j1", "x")])
    j2 = pd.concat([_table(list(pa_["pair_id"]), ["A", "B", "B", "B"], ["A"] * 4, "j2", "x"),
                    _table(list(ps_["pair_id"]), ["A"] * 4, ["A"] * 4, "j2", "x")])
    j3 = pd.concat([_table(list(pa_["pair_id"]), ["B"] * 4, ["A"] * 4, "j3", "y"),
                    _table(list(ps_["pair_id"]), ["A"] * 4, ["A"] * 4, "j3", "y")])
    r = cap_profile(pairs, {"j1": j1, "j2": j2, "j3": j3}, {"base": COV, "stress": COV},
                    stress=[("base", "stress")], n_boot=100)
    st = r.stress.set_index(["judge_id", "condition"])
    assert st.loc[("j1", "C7"), "delta"] == pytest.approx(1.0 - 0.5)
    assert st.loc[("j2", "C7"), "delta"] == pytest.approx(0.25 - 1.0)
    l1 = r.l1[r.l1["set"] == "base"].set_index(["judge_a", "judge_b"])
    # base: j1 C1 1, C7 1 ; j2 C1 .625, C7 .25 ; j3 C1 .5, C7 0
    assert l1.loc[("j1", "j2"), "l1"] == pytest.approx(0.375 + 0.75)
    assert l1.loc[("j1", "j2"), "same_family"]
    assert not l1.loc[("j1", "j3"), "same_family"]
    summ = l1_summary(r.l1).set_index(["set", "pair"])
    assert summ.loc[("base", "x (WF)"), "l1"] == pytest.approx(1.125)
    assert summ.loc[("base", "cross-family avg."), "l1"] == pytest.approx(((0.5 + 1) + (0.125 + 0.25)) / 2)
    with pytest.raises(InputError):
        cap_profile(pairs, {"j1": j1}, {"base": COV, "stress": COV}, stress=[("base", "nope")], n_boot=5)


def test_two_order_table_from_verdicts():
    p = _pairs(3)
    reqs = pairwise_requests(p)
    assert [r.request_id for r in reqs[:2]] == ["s-0|AB", "s-0|BA"]
    assert reqs[1].response_a == p["response_b"][0]
    v = pd.DataFrame({
        "request_id": ["s-0|AB", "s-0|BA", "s-1|AB", "s-1|BA", "s-2|AB", "s-2|BA"],
        "judge_id": "j", "family": "f",
        "choice": ["A", "B", "B", None, "A", None], "rationale": ["r"] * 6,
        "parse_ok": [True, True, True, False, True, False],
        "error": [None, None, None, None, None, "HTTP 500"],
    })
    t = two_order_table(v).set_index("pair_id")
    assert t.loc["s-0", "choice_ba"] == "A"  # B in the swapped frame is A in the original
    assert t.loc["s-1", "failure_ba"] == "parse" and t.loc["s-2", "failure_ba"] == "api"
    r = cap_profile(p, {"j": t.reset_index()}, {"s": COV}, n_boot=10)
    ex = r.exclusions.set_index("condition").loc["C7"]
    assert (ex["n_parse"], ex["n_api"], ex["n_used"]) == (1, 1, 1)


def test_c8_same_family_refused_unless_allowed():
    p = _pairs(4)
    t = _table(list(p["pair_id"]), ["A", "A", "B", "A"], ["A"] * 4, judge="gpt", family="openai")
    with pytest.raises(InputError, match="allow-same-family"):
        rationale_requests(p, {"gpt": t}, evaluator_family="openai")
    reqs = rationale_requests(p, {"gpt": t}, evaluator_family="openai", allow_same_family=True)
    assert len(reqs) == 3 and all(r.form == "generate" for r in reqs)  # correct A/B verdicts only
    assert len(rationale_requests(p, {"gpt": t}, evaluator_family="anthropic")) == 3
    ver = pd.DataFrame({"request_id": [r.request_id for r in reqs], "judge_id": "ev",
                        "raw": ['{"supports": "yes"}', "NO, generic", '{"rationale_correct": 1}'],
                        "error": None})
    labels = rationale_labels(ver)
    assert list(labels["supports"]) == [True, False, True]
    r = cap_profile(p, {"gpt": t}, {"s": COV}, rationale_labels=labels, n_boot=10,
                    evaluator={"id": "ev", "family": "openai", "allow_same_family": True})
    assert r.value("s", "gpt", "C8") == pytest.approx(2 / 3)
    assert r.value("s", "gpt", "C8", "unconditional") == pytest.approx(2 / 4)
    assert r.to_dict()["evaluator"]["allow_same_family"] is True
    human = labels.assign(human=[True, True, True]).drop(columns="supports")
    agr = evaluator_agreement(labels, human)
    assert agr["n"] == 3 and agr["agreement"] == pytest.approx(2 / 3)
    assert agr["confusion"] == {"e0_h0": 0, "e0_h1": 1, "e1_h0": 0, "e1_h1": 2}


# ------------------------------------------------------------------ C8 unconditional (§4.1)


def _sampled_evaluator_sets(n_sets, n_items=1000, acc=0.7, support=0.6, n_eval=100, seed=0):
    """Judges correct under A/B with probability ``acc``; a rationale of a correct verdict supports it with
    probability ``support``; the evaluator labels a random ``n_eval`` of each judge's correct A/B verdicts (the
    paper's ~100 rationales per judge). Returns pairs, judge tables, coverage and the evaluator labels."""
    rng = np.random.default_rng(seed)
    pairs, judges, labels = [], {}, []
    for s in range(n_sets):
        lab, ab, ba = _simulate(rng, n_items, acc)
        p = _pairs(n_items, f"s{s}", list(lab))
        pairs.append(p)
        judges[f"j{s}"] = _table(list(p["pair_id"]), list(ab), list(ba), judge=f"j{s}")
        correct = np.flatnonzero(ab == lab)
        ev = rng.choice(correct, size=n_eval, replace=False)
        labels.append(pd.DataFrame({"pair_id": p["pair_id"].to_numpy()[ev], "judge_id": f"j{s}",
                                    "supports": rng.random(n_eval) < support}))
    return (pd.concat(pairs, ignore_index=True), judges, {f"s{s}": COV for s in range(n_sets)},
            pd.concat(labels, ignore_index=True))


def test_c8_unconditional_with_a_sampled_evaluator():
    """§4.1: Pr[v = a* and supported] = Pr[v = a*] * CAP_8, with CAP_8 estimated on the evaluated sample.
    Planted 0.7 * 0.6 = 0.42; dropping the unevaluated correct items from the denominator (while the
    incorrect ones stay) gave ~ 60 / (300 + 100) = 0.15."""
    pairs, judges, cov, labels = _sampled_evaluator_sets(1, seed=5)
    r = cap_profile(pairs, judges, cov, rationale_labels=labels, n_boot=1000, seed=2)
    c8 = r.cells[(r.cells["condition"] == "C8")].set_index("metric")
    assert c8.loc["value", "n"] == 100
    acc_ab = float((judges["j0"]["choice_ab"].to_numpy() == pairs["label"].to_numpy()).mean())
    assert c8.loc["accuracy", "value"] == pytest.approx(acc_ab) and c8.loc["accuracy", "n"] == 1000
    unc = c8.loc["unconditional"]
    assert unc["value"] == pytest.approx(acc_ab * c8.loc["value", "value"])
    assert abs(unc["value"] - 0.42) < 0.06
    assert unc["ci_lo"] <= 0.42 <= unc["ci_hi"]
    # the joint bootstrap carries both factors' variability: wider than the C8 factor's alone times accuracy
    assert unc["ci_hi"] - unc["ci_lo"] > acc_ab * (c8.loc["value", "ci_hi"] - c8.loc["value", "ci_lo"]) * 0.98


def test_c8_unconditional_interval_coverage():
    pairs, judges, cov, labels = _sampled_evaluator_sets(60, n_items=300, seed=9)
    r = cap_profile(pairs, judges, cov, rationale_labels=labels, n_boot=300, seed=4, n_perm=9)
    x = r.cells[(r.cells["condition"] == "C8") & (r.cells["metric"] == "unconditional")]
    assert len(x) == 60
    assert abs(x["value"].mean() - 0.42) < 0.01
    cover = ((x["ci_lo"] <= 0.42) & (0.42 <= x["ci_hi"])).mean()
    assert 0.88 <= cover <= 0.99, cover


# ------------------------------------------------------------------ resampling unit, Appendix K, stress


def _clustered(n_base, p_correct, seed, variants=("original", "polished", "padded")):
    """``n_base`` base items, each shown as every variant (all non-augmented, as in a built testbed); a judge
    whose correctness is a property of the base item (same verdicts on every variant and in both orders)."""
    rng = np.random.default_rng(seed)
    right = rng.random(n_base) < p_correct
    rows, ab = [], []
    lab = rng.choice(["A", "B"], n_base)
    for v in variants:
        p = _pairs(n_base, labels=list(lab))
        p = p.assign(pair_id=p["pair_id"] + "|" + v, base_id=p["pair_id"], variant=v)
        rows.append(p)
        ab += list(np.where(right, lab, np.where(lab == "A", "B", "A")))
    pairs = pd.concat(rows, ignore_index=True)
    return pairs, _table(list(pairs["pair_id"]), ab, ab)


def test_bootstrap_resamples_base_items_with_their_variants():
    """The resampling unit is the base item: its variants (and both orders of each) move together. With
    correctness fixed per base item the bootstrap SD is the clustered sqrt(p(1-p)/n_base), not the
    sqrt(p(1-p)/n_rows) of resampling rows."""
    n_base = 80
    pairs, t = _clustered(n_base, 0.5, seed=3)
    r = cap_profile(pairs, {"j": t}, {"s": COV}, n_boot=2000, seed=1, n_perm=9)
    p = r.value("s", "j", "overall")
    sd = np.nanstd(r.boot[("s", "j", "overall", "value")], ddof=1)
    assert sd == pytest.approx(np.sqrt(p * (1 - p) / n_base), rel=0.12)


def test_bias_correction_standard_errors_are_clustered():
    """Appendix K's q0/q1 carry the same clustering: their SEs are the bootstrap SDs over base items, not
    binomial SEs over rows (which are sqrt(3) too small when each base item has three variants)."""
    n_base = 80
    pairs, t = _clustered(n_base, 0.8, seed=4)
    r = cap_profile(pairs, {"j": t}, {"s": COV}, n_boot=2000, seed=2, n_perm=9)
    bc = r.bias_corrected.set_index("condition").loc["overall"]
    for q, se in (("q0", "se_q0"), ("q1", "se_q1")):
        clustered = np.sqrt(bc[q] * (1 - bc[q]) / n_base)
        assert bc[se] == pytest.approx(clustered, rel=0.15), (q, bc[se], clustered)
    # the corrected replicates recompute raw, q0 and q1 from the same resample: here raw = q0 = q1 = 0.8-ish,
    # corrected = (raw + q0 - 1) / (q0 + q1 - 1) = 1 in every replicate, so the interval collapses on 1
    assert bc["corrected"] == pytest.approx(1.0)
    assert bc["ci_lo"] == pytest.approx(1.0) and bc["ci_hi"] == pytest.approx(1.0)


def test_bias_correction_nonpositive_denominator_is_flagged_not_a_number():
    # 10 items labelled A; AB (gold first) right on 5 -> q1 = .5 ; BA (gold second) right on 3 -> q0 = .3
    p = _pairs(10)
    ab = ["A"] * 5 + ["B"] * 5
    ba = ["A"] * 3 + ["B"] * 7
    r = cap_profile(p, {"j": _table(list(p["pair_id"]), ab, ba)}, {"s": COV}, n_boot=200, seed=0, n_perm=9)
    bc = r.bias_corrected.set_index("condition").loc["overall"]
    assert bc["q1"] == pytest.approx(0.5) and bc["q0"] == pytest.approx(0.3)
    assert bc["undefined"] and bool(np.isnan(bc["corrected"])) and bool(np.isnan(bc["ci_lo"]))
    assert not bc["saturated"]
    assert np.isnan(bias_correct(0.4, 0.3, 0.5)) and np.isnan(bias_correct(0.4, 0.5, 0.5))


def test_q_and_raw_accuracy_treat_failures_alike():
    # labels A; item 0's B/A verdict is a parse failure
    p = _pairs(4)
    t = _table(list(p["pair_id"]), ["A", "A", "B", "A"], [None, "A", "A", "B"],
               fail_ba=["parse", None, None, None])
    ex = cap_profile(p, {"j": t}, {"s": COV}, n_boot=50, n_perm=9).bias_corrected.set_index("condition")
    # excluded: item 0 leaves raw and q alike -> items 1..3: q1 (A/B, gold first) = 2/3, q0 (B/A) = 2/3
    assert ex.loc["overall", "raw"] == pytest.approx(4 / 6)
    assert ex.loc["overall", "q1"] == pytest.approx(2 / 3) and ex.loc["overall", "q0"] == pytest.approx(2 / 3)
    w = cap_profile(p, {"j": t}, {"s": COV}, n_boot=50, n_perm=9, failures="wrong")
    wr = w.bias_corrected.set_index("condition")
    # counted wrong: all 4 items in raw and q; the failed B/A verdict is wrong in q0 as in raw
    assert wr.loc["overall", "raw"] == pytest.approx(5 / 8)
    assert wr.loc["overall", "q1"] == pytest.approx(3 / 4) and wr.loc["overall", "q0"] == pytest.approx(2 / 4)


def test_stress_table_keeps_like_cells_and_reports_the_mean():
    """Eq. 3 on conditions measured the same way on both sets; augmented cells and a direct cell against an
    approximate one stay out; Table 6's per-judge mean over the C1-C7 rows (C8 omitted from the mean)."""
    cov_base = {**COV, "C2": CoverageCell("approx", "second half; PA", ("s2",)),
                "C5": CoverageCell("augmented", "plain vs polished; BC", variants=("original", "polished"))}
    cov_stress = {**cov_base, "C2": CoverageCell("direct", "second half; PA", ("s2",))}
    pb, ps = _pairs(4, "base", subset=["s1", "s1", "s2", "s2"]), _pairs(4, "stress", subset=["s1", "s1", "s2", "s2"])
    pol = [x.assign(pair_id=x["pair_id"] + "|polished", base_id=x["pair_id"], variant="polished", augmented=True)
           for x in (pb, ps)]
    pairs = pd.concat([pb, ps] + pol, ignore_index=True)
    ids_b = list(pb["pair_id"]) + list(pol[0]["pair_id"])
    ids_s = list(ps["pair_id"]) + list(pol[1]["pair_id"])
    j = pd.concat([_table(ids_b, ["A"] * 8, ["A"] * 8),
                   _table(ids_s, ["A", "B", "A", "B"] + ["B"] * 4, ["A", "A", "A", "B"] + ["B"] * 4)])
    labels = pd.DataFrame({"pair_id": ["base-0", "base-1", "stress-0"], "judge_id": "j",
                           "supports": [True, False, True]})
    r = cap_profile(pairs, {"j": j}, {"base": cov_base, "stress": cov_stress}, stress=[("base", "stress")],
                    rationale_labels=labels, n_boot=100, n_perm=9)
    st = r.stress.set_index("condition")
    assert set(st.index) == {"C1", "C7", "C8", "mean"}
    # base: C1 = 1, C7 = 1, C8 = 1/2 ; stress: C1 (items 0,1) = (1 + .5)/2 = .75, C7 = 2/4, C8 = 1
    assert st.loc["C1", "delta"] == pytest.approx(0.25)
    assert st.loc["C7", "delta"] == pytest.approx(0.5)
    assert st.loc["C8", "delta"] == pytest.approx(-0.5) and not st.loc["C8", "in_mean"]
    assert st.loc["mean", "delta"] == pytest.approx((0.25 + 0.5) / 2)
    assert st.loc["mean", "ci_lo"] <= st.loc["mean", "delta"] <= st.loc["mean", "ci_hi"]


def test_c8_evaluator_sees_the_responses_labelled_as_the_judge_saw_them():
    """Appendix B.4 position alignment: the A/B rationale says "Response A"/"Response B", so the evaluator is
    shown the two responses under those labels in the A/B order, with the one the judge chose named."""
    p = _pairs(2, labels=["A", "B"]).assign(response_a=["first text", "third text"],
                                            response_b=["second text", "fourth text"])
    t = _table(list(p["pair_id"]), ["A", "B"], ["A", "B"], judge="g", family="openai")
    reqs = {r.meta["pair_id"]: r.prompt for r in rationale_requests(p, {"g": t}, evaluator_family="anthropic")}
    for pid, a, b, chosen in (("s-0", "first text", "second text", "A"), ("s-1", "third text", "fourth text", "B")):
        text = reqs[pid]
        assert f"Response A:\n{a}" in text and f"Response B:\n{b}" in text
        assert text.index("Response A:") < text.index("Response B:")
        assert f"The judge chose Response {chosen}" in text


def test_c8_requests_sample_per_judge():
    p = _pairs(10)
    t = _table(list(p["pair_id"]), ["A"] * 8 + ["B"] * 2, ["A"] * 10, judge="g", family="openai")
    reqs = rationale_requests(p, {"g": t}, evaluator_family="anthropic", sample=3, seed=1)
    assert len(reqs) == 3 and len({r.meta["pair_id"] for r in reqs}) == 3
    assert {r.meta["pair_id"] for r in reqs} <= {f"s-{i}" for i in range(8)}  # correct A/B verdicts only
    again = rationale_requests(p, {"g": t}, evaluator_family="anthropic", sample=3, seed=1)
    assert [r.request_id for r in again] == [r.request_id for r in reqs]
    assert len(rationale_requests(p, {"g": t}, evaluator_family="anthropic")) == 8


def test_report_shows_conditional_and_unconditional_c8():
    from judgeaudit.report.cap import c8_table

    pairs, judges, cov, labels = _sampled_evaluator_sets(1, n_items=200, n_eval=40, seed=3)
    r = cap_profile(pairs, judges, cov, rationale_labels=labels, n_boot=100, seed=0, n_perm=9)
    t = c8_table(r, "s0").set_index("judge").loc["j0"]
    assert t["rationales evaluated"] == 40
    unc = r.value("s0", "j0", "C8", "unconditional")
    assert t["Pr[v_AB = a* ∧ supported]"].startswith(f"{100 * unc:.1f} (")

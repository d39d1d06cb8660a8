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

from __future__ import annotations

import json

import pytest
from world_fixtures import ScriptedJudge, oracle_reply, summary_item, tiny_items

from judgeaudit.world.run import analyse, factorial_table, judge_world


def _run(tmp_path, judges, arms, form="label", votes=3, items=None):
    items = items or tiny_items()
    v = judge_world(items, judges, arms, form=form, votes=votes, store_path=tmp_path / "calls.sqlite",
                    progress=False)
    return items, v, analyse(items, v, form=form, arms=arms, n_boot=200, seed=0)


def test_oracle_informed_is_perfect_blind_is_half_and_mcnemar_counts_the_defective(tmp_path):
    items, v, an = _run(tmp_path, [ScriptedJudge(oracle_reply, "oracle")], ["blind", "informed", "placebo"])
    assert len(v) == 8 * 3 * 3 and set(v["epoch"]) == {0, 1, 2}
    arms = an.result["judges"]["oracle"]["arms"]
    assert arms["informed"]["balanced_accuracy"] == 1.0 and arms["informed"]["recall"] == 1.0
    assert arms["blind"]["balanced_accuracy"] == 0.5 and arms["blind"]["recall"] == 0.0
    assert arms["blind"]["specificity"] == 1.0
    assert arms["placebo"]["balanced_accuracy"] == 0.5
    assert arms["blind"]["n"] == 8 and arms["blind"]["n_defective"] == 4
    row = next(p for p in an.result["paired"] if p["b"] == "informed" and p["metric"] == "balanced_accuracy")
    assert row["gain"] == 0.5
    assert row["mcnemar"]["b"] == 4 and row["mcnemar"]["c"] == 0
    assert row["mcnemar"]["p"] == pytest.approx(2 * 0.5 ** 4)
    json.dumps(an.result)


def test_flag_all_and_flag_none_and_votes_that_do_not_parse(tmp_path):
    flag_all = ScriptedJudge(lambda r: '{"defective": true}', "flag-all")
    calls = {"n": 0}

    def flaky(r):          # epoch 0 unparseable, epochs 1-2 say clean
        return "no idea" if r.epoch == 0 else '{"defective": false}'

    _, _, an = _run(tmp_path, [flag_all, ScriptedJudge(flaky, "flaky")], ["blind", "informed"])
    fa = an.result["judges"]["flag-all"]["arms"]["informed"]
    assert (fa["recall"], fa["specificity"], fa["balanced_accuracy"], fa["false_alarms_per_clean"]) == (1, 0, .5, 1)
    fl = an.result["judges"]["flaky"]["arms"]["blind"]
    assert fl["recall"] == 0.0 and fl["specificity"] == 1.0 and fl["parse_failures"] == 8


def test_sentence_and_typed_forms_score_units(tmp_path):
    items = [summary_item()] + tiny_items()
    items = [items[0]]
    _, _, an = _run(tmp_path, [ScriptedJudge(oracle_reply, "oracle")], ["blind", "informed"], form="sentences",
                    items=items)
    inf = an.result["judges"]["oracle"]["arms"]["informed"]
    assert (inf["n"], inf["balanced_accuracy"]) == (2, 1.0)
    _, _, an = _run(tmp_path, [ScriptedJudge(oracle_reply, "oracle")], ["blind", "informed"], form="typed",
                    items=items)
    assert an.result["judges"]["oracle"]["arms"]["informed"]["balanced_accuracy"] == 1.0
    assert an.result["judges"]["oracle"]["arms"]["blind"]["recall"] == 0.0


def test_defects_form_reports_span_scores_under_both_matchers(tmp_path):
    items = tiny_items()
    v = judge_world(items, [ScriptedJudge(oracle_reply, "oracle")], ["blind", "informed"], form="defects", votes=2,
                    store_path=tmp_path / "c.sqlite", progress=False)
    an = analyse(items, v, form="defects", arms=["blind", "informed"], n_boot=100,
                 generous=lambda c, s, it: True)
    sp = an.result["judges"]["oracle"]["arms"]["informed"]["spans"]
    assert sp["strict"]["recall"] == 1.0 and sp["strict"]["precision"] == 1.0
    assert sp["char_overlap"]["f1"] == 1.0
    assert sp["generous"]["recall"] == 1.0 and sp["permuted_audit_generous"]["false_match_rate"] == 1.0
    assert sp["permuted_audit_strict"]["false_match_rate"] == 0.0
    assert an.result["judges"]["oracle"]["arms"]["blind"]["spans"]["strict"]["found"] == 0


def test_factorial_cells_and_shapley_of_an_oracle(tmp_path):
    from judgeaudit.world.run import factorial_arms
    factors = ["question", "source", "typed"]
    arms = sorted(set(factorial_arms(factors).values()))
    items = tiny_items()
    v = judge_world(items, [ScriptedJudge(oracle_reply, "oracle")], arms, form="label", votes=1,
                    store_path=tmp_path / "c.sqlite", progress=False)
    an = analyse(items, v, form="label", arms=arms, n_boot=0)
    fac = factorial_table(an, factors, ["oracle"])
    assert len(fac["cells"]) == 8
    # only the source matters to the oracle: all of v(all) - v(none) = 0.5 goes to it
    assert fac["shapley"]["balanced_accuracy"] == pytest.approx({"question": 0, "source": 0.5, "typed": 0})
    assert fac["shapley"]["recall"]["source"] == pytest.approx(1.0)


def test_factorial_with_the_instrument_factor(tmp_path):
    from judgeaudit.world.run import factorial_arms
    factors = ["source", "instrument"]
    arms = sorted(set(factorial_arms(factors).values()))
    assert arms == ["Q0S0T0", "Q0S1T0"]
    items = tiny_items()
    judges = [ScriptedJudge(oracle_reply, "oracle"), ScriptedJudge(lambda r: '{"defective": true}', "flag-all")]
    v = judge_world(items, judges, arms, form="label", votes=1, store_path=tmp_path / "c.sqlite", progress=False)
    fac = factorial_table(analyse(items, v, form="label", arms=arms, n_boot=0), factors, ["oracle", "flag-all"])
    got = {c["cell"]: (c["judge"], c["balanced_accuracy"]) for c in fac["cells"]}
    assert got == {"S0I0": ("oracle", 0.5), "S1I0": ("oracle", 1.0), "S0I1": ("flag-all", 0.5),
                   "S1I1": ("flag-all", 0.5)}
    # φ_S = ½(1.0 − 0.5) + ½(0.5 − 0.5) = 0.25; φ_I = ½(0.5 − 0.5) + ½(0.5 − 1.0) = −0.25
    assert fac["shapley"]["balanced_accuracy"] == pytest.approx({"source": 0.25, "instrument": -0.25})


def test_typed_form_scores_one_unit_per_constraint(tmp_path):
    # IFEval has responses with two constraints of one type, one violated and one kept (834 constraints would
    # collapse to 817 units if merged by type): every constraint is its own unit. A typed report can only name
    # the type, so the oracle naming exactly the violated types flags the kept constraint of that type too.
    from judgeaudit.records import Unit, WorldItem

    units = [Unit(unit_id="r.0", text="use 'cat' twice", defective=True, kind="keywords:frequency"),
             Unit(unit_id="r.1", text="use 'dog' once", defective=False, kind="keywords:frequency"),
             Unit(unit_id="r.2", text="all lower case", defective=False, kind="change_case:english_lowercase")]
    it = WorldItem(item_id="r", task="instruction", output="A cat.", world="Write about a cat and a dog.",
                   defective=True, units=units, group="r")
    clean = it.model_copy(update={"item_id": "s", "group": "s", "defective": False, "output": "A cat and a dog.",
                                  "units": [u.model_copy(update={"defective": False}) for u in units]})
    _, _, an = _run(tmp_path, [ScriptedJudge(oracle_reply, "oracle")], ["blind", "informed"], form="typed",
                    items=[it, clean])
    inf = an.result["judges"]["oracle"]["arms"]["informed"]
    assert (inf["n"], inf["n_defective"]) == (6, 1)          # 2 answers × 3 constraints; r.0 violated
    assert inf["recall"] == 1.0
    assert inf["specificity"] == pytest.approx(4 / 5)        # r.1 shares r.0's named type
    row = next(p for p in an.result["paired"] if p["metric"] == "recall")
    assert (row["mcnemar"]["b"], row["mcnemar"]["c"]) == (1, 0)


@pytest.mark.data
def test_typed_form_has_one_unit_per_ifeval_constraint(data_dir):
    # the shipped IFEval responses joined to their prompts by text carry 832 labelled constraints (prompt 2785,
    # edited upstream, has no response and is left out); merged by type id they were fewer units
    from judgeaudit.datasets.world import load_world_set
    from judgeaudit.analyses.world.pooling import Pooled
    from judgeaudit.analyses.world.scoring import decisions

    items = load_world_set(f"ifeval:{data_dir / 'ifeval'}")
    none = Pooled(parsed_votes=1, votes=1, label=False, unit_labels=None, defect_ids=[], score=None, defects=None,
                  ties=0)
    rows = [(it.item_id, r["unit"]) for it in items for r in decisions(it, none, "typed")]
    assert len(rows) == sum(u.defective is not None for it in items for u in it.units) == 832
    assert len(set(rows)) == 832

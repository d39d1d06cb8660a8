"""The development split, the τ sensitivity table, and the recorded defaults re-derived on the split."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from structural_scripted import ScriptedNLI

from judgeaudit.structural.calibrate import (balanced_accuracy, build_graphs, choose, dev_split, halueval_qa_items,
                                             sensitivity)
from judgeaudit.structural.graph import GraphParams, build_graph
from judgeaudit.structural.nli import make_nli


def test_dev_split_is_a_seeded_share_of_groups():
    groups = [f"q{i}" for i in range(50)] * 2
    a, b = dev_split(groups), dev_split(list(reversed(groups)))
    assert a == b and len(a) == 10 and a <= set(groups)
    assert dev_split(groups, seed=1) != a


def test_balanced_accuracy_by_hand():
    # defective: 3 flagged of 4; clean: 1 of 2 left alone -> (0.75 + 0.5) / 2
    assert balanced_accuracy([1, 1, 1, 0, 1, 0], [1, 1, 1, 1, 0, 0]) == 0.625
    with pytest.raises(ValueError):
        balanced_accuracy([1, 0], [1, 1])


def test_sensitivity_grid_matches_the_threshold_each_item_crosses():
    # item 0 (defective): its only claim has P(entail)=0.6; item 1 (clean): 0.8. Flagged when P(entail) < tau_s.
    nli = ScriptedNLI({("w0.", "c0."): (0.6, 0.4, 0.0), ("w1.", "c1."): (0.8, 0.2, 0.0)})
    graphs = [build_graph("w0.", "c0.", nli), build_graph("w1.", "c1.", nli)]
    t = sensitivity(graphs, [True, False], tau_s=[0.5, 0.7, 0.9], tau_c=[0.5])
    assert t["balanced_accuracy"].tolist() == [0.5, 1.0, 0.5]
    assert t["flag_rate"].tolist() == [0.0, 0.5, 1.0]
    assert choose(t) == (0.7, 0.5)


HALUEVAL = Path(os.environ.get("JUDGEAUDIT_DATA_DIR", "data")) / "halueval"


@pytest.mark.skipif(not HALUEVAL.is_dir(), reason="HaluEval data not present")
def test_recorded_defaults_are_the_dev_split_choice_with_the_lexical_backend():
    items = halueval_qa_items(HALUEVAL)
    dev = dev_split(items["group"])
    d = items[items["group"].isin(dev)].reset_index(drop=True)
    assert (len(dev), len(d), int(d["defective"].sum())) == (100, 200, 100)
    graphs = build_graphs(d, make_nli("lexical"))
    t = sensitivity(graphs, d["defective"], tau_s=[0.5, 0.85, 0.9, 0.95, 1.0], tau_c=[0.4, 0.5, 0.6])
    assert choose(t) == (GraphParams().tau_s, GraphParams().tau_c) == (0.9, 0.5)
    ba = t.set_index(["tau_s", "tau_c"])["balanced_accuracy"]
    assert ba[(0.9, 0.5)] == pytest.approx(0.925) and ba[(0.5, 0.5)] == pytest.approx(0.77)

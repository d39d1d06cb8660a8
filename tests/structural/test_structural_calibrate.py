"""The development split, the τ sensitivity table, and the recorded defaults re-derived on the split."""

from __future__ import annotations

import pytest
from structural_scripted import ScriptedNLI

from judgeaudit.structural.calibrate import (TAU_C_GRID, TAU_S_GRID, balanced_accuracy, build_graphs, choose,
                                             dev_result, dev_split, halueval_qa_items, in_dev, sensitivity)
from judgeaudit.structural.graph import DEV_RESULT, DEV_SPLIT, GraphParams, build_graph
from judgeaudit.structural.nli import make_nli


def test_dev_split_is_a_seeded_hash_share_of_groups():
    import hashlib

    groups = [f"q{i}" for i in range(2000)] * 2
    a, b = dev_split(groups), dev_split(list(reversed(groups)))
    assert a == b and a <= set(groups) and 0.17 < len(a) / 2000 < 0.23
    assert dev_split(groups, seed=1) != a
    # the rule by hand for one group: first 16 hex digits of sha256("<seed>:<group>") as a fraction of 2^64
    g = "halueval/qa/7"
    frac = int(hashlib.sha256(f"{DEV_SPLIT['seed']}:{g}".encode()).hexdigest()[:16], 16) / 2**64
    assert in_dev(g) == (frac < 0.2) and dev_split([g]) == ({g} if frac < 0.2 else set())


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


@pytest.mark.data
def test_recorded_defaults_are_the_dev_split_choice_with_the_lexical_backend(data_dir):
    items = halueval_qa_items(data_dir / "halueval")
    dev = dev_split(items["group"])
    d = items[items["group"].isin(dev)].reset_index(drop=True)
    assert (len(dev), len(d), int(d["defective"].sum())) == (91, 182, 91)
    graphs = build_graphs(d, make_nli(DEV_SPLIT["backend"]))
    t = sensitivity(graphs, d["defective"], TAU_S_GRID, TAU_C_GRID)
    assert choose(t) == (GraphParams().tau_s, GraphParams().tau_c) == (0.95, 0.8)
    assert dev_result(t, len(dev), len(d)) == DEV_RESULT          # the recorded record, sensitivity lines and all
    ba = t.set_index(["tau_s", "tau_c"])["balanced_accuracy"]
    assert ba[(0.95, 0.8)] == pytest.approx(0.8901, abs=1e-4) and ba[(0.9, 0.5)] == pytest.approx(0.8736, abs=1e-4)

"""The entailment graph on hand-made worlds, with a scripted NLI backend whose probabilities are known."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from structural_scripted import NEUTRAL, ScriptedNLI

from judgeaudit.errors import InputError
from judgeaudit.records import JudgeRequest
from judgeaudit.structural.certificates import defects, verify_certificate
from judgeaudit.structural.graph import GraphParams, build_graph, route
from judgeaudit.structural.judge import structural_judge
from judgeaudit.structural.render import graph_text, routed_evidence

E0 = "The bridge is 120 metres long."
E1 = "It opened in 1932."
E2 = "It crosses the river Tyne."
C0 = "The bridge is 150 metres long."
C1 = "It opened in 1932."
C2 = "It was painted red."
R0 = "State the opening year."
R1 = "State the colour of the bridge."
WORLD = f"{E0} {E1} {E2}"
OUTPUT = f"{C0} {C1} {C2}"

TABLE = {
    (E0, C0): (0.05, 0.15, 0.80),    # the contradicted number
    (E1, C1): (0.90, 0.08, 0.02),    # supported
    (E2, C2): (0.30, 0.60, 0.10),    # the best (still unsupported) evidence of C2
    (C1, R0): (0.95, 0.04, 0.01),    # R0 covered by C1
    (C2, R1): (0.40, 0.50, 0.10),    # R1 not covered
}


P = {"tau_s": 0.5, "tau_c": 0.5}   # explicit, so these tests do not move with the calibrated defaults


def _graph(**kw):
    return build_graph(WORLD, OUTPUT, ScriptedNLI(TABLE), GraphParams(**{**P, **kw}), requirements=[R0, R1])


def test_graph_nodes_edges_and_the_three_defects():
    g = _graph()
    assert g.evidence == (E0, E1, E2) and g.claims == (C0, C1, C2) and g.requirements == (R0, R1)
    assert [(e.kind, e.src, e.dst, e.p) for e in g.edges if e.kind != "specificity"] == [
        ("conflict", ("evidence", 0), ("claim", 0), 0.80),
        ("support", ("evidence", 1), ("claim", 1), 0.90),
        ("coverage", ("claim", 1), ("requirement", 0), 0.95),
    ]
    found = defects(g)
    assert [(d.unit_id, d.certificate["type"]) for d in found] == [
        ("claim:0", "contradicted_claim"), ("claim:2", "unsupported_claim"), ("requirement:1", "uncovered_requirement")]
    contra, unsup, uncov = (d.certificate for d in found)
    assert contra["node"] == {"kind": "claim", "index": 0, "text": C0}
    assert contra["pairs"] == [{"premise": {"kind": "evidence", "index": 0, "text": E0},
                                "hypothesis": {"kind": "claim", "index": 0, "text": C0},
                                "probs": [0.05, 0.15, 0.80], "role": "fired"}]
    assert contra["backend"] == "scripted" and contra["thresholds"] == {"tau_s": 0.5, "tau_c": 0.5, "rule": "p >= tau"}
    assert found[0].citation == "E1"
    # unsupported: every routed evidence sentence shown below threshold, in world order
    assert [(p["premise"]["index"], p["probs"]) for p in unsup["pairs"]] == [
        (0, list(NEUTRAL)), (1, list(NEUTRAL)), (2, [0.30, 0.60, 0.10])]
    assert [(p["premise"]["index"], p["probs"][0]) for p in uncov["pairs"]] == [(0, 0.1), (1, 0.1), (2, 0.40)]


def test_specificity_edge_marks_an_unsupported_claim_that_states_its_evidence_and_more():
    table = {**TABLE, (C2, E2): (0.70, 0.20, 0.10)}   # the claim entails its best evidence
    g = build_graph(WORLD, OUTPUT, ScriptedNLI(table), GraphParams(**P))
    # C1's text is E1's, so it entails its best evidence too (0.90): the edge is defined for every claim
    assert [(e.src, e.dst, e.p) for e in g.edges_of("specificity")] == [
        (("claim", 1), ("evidence", 1), 0.90), (("claim", 2), ("evidence", 2), 0.70)]
    d = [d for d in defects(g) if d.unit_id == "claim:2"][0]
    assert d.certificate["pairs"][-1]["role"] == "specificity" and "adds detail" in d.reason
    assert verify_certificate(d.certificate, ScriptedNLI(table)) is None


@pytest.mark.parametrize("tau, fires", [(0.80, True), (np.nextafter(0.80, 1.0), False)])
def test_conflict_fires_at_p_equal_to_tau_c_and_not_above(tau, fires):
    g = _graph(tau_c=float(tau))
    assert any(e.kind == "conflict" for e in g.edges) is fires


@pytest.mark.parametrize("tau, fires", [(0.90, True), (np.nextafter(0.90, 1.0), False)])
def test_support_fires_at_p_equal_to_tau_s_and_not_above(tau, fires):
    g = _graph(tau_s=float(tau))
    assert (("claim", 1) in {e.dst for e in g.edges_of("support")}) is fires
    # re-deriving from the stored probabilities gives the same edges as building again
    assert _graph().with_params(tau_s=float(tau)).edges == g.edges


def test_certificates_verify_and_a_tampered_one_is_rejected():
    backend = ScriptedNLI(TABLE)
    found = defects(_graph())
    assert [verify_certificate(d.certificate, backend) for d in found] == [None, None, None]
    import copy

    prob = copy.deepcopy(found[0].certificate)
    prob["pairs"][0]["probs"] = [0.05, 0.25, 0.70]
    assert "recorded [0.05, 0.25, 0.7], recomputed [0.05, 0.15, 0.8]" in verify_certificate(prob, backend)
    text = copy.deepcopy(found[0].certificate)
    text["pairs"][0]["premise"]["text"] = "The bridge is 150 metres long."
    assert "pair 0 (evidence 0 → claim 0)" in verify_certificate(text, backend)
    thr = copy.deepcopy(found[1].certificate)   # an unsupported claim certified under a lower tau_s
    thr["thresholds"]["tau_s"] = 0.3
    assert "examined pair 2 reaches a threshold" in verify_certificate(thr, backend)
    other = copy.deepcopy(found[2].certificate)
    other["backend"] = "lexical"
    assert "names backend 'lexical'" in verify_certificate(other, backend)


def test_top_k_routes_each_claim_to_its_nearest_sentences_and_asks_only_those():
    backend = ScriptedNLI(TABLE)
    g = build_graph(WORLD, OUTPUT, backend, GraphParams(**P, top_k=1, specificity=False))
    # C0 shares bridge/metres/long with E0; C1 equals E1; C2 ("painted red") shares nothing: tie -> E0
    assert g.routes == ((0,), (1,), (0,))
    assert sorted(backend.asked) == sorted([(E0, C0), (E1, C1), (E0, C2)])
    enc = lambda texts: np.array([[1.0, 0.0] if "river" in t or "red" in t else [0.0, 1.0] for t in texts])  # noqa: E731
    assert route([C2], [E0, E1, E2], 1, enc) == [(2,)]


def test_duplicate_pairs_are_asked_once_in_one_batched_call():
    backend = ScriptedNLI({}, batch_size=100)
    build_graph(f"{E0} {E0}", f"{C0} {C0}", backend, GraphParams(specificity=False))
    assert backend.asked == [(E0, C0)] and backend.calls == 1


def _judge(form, text, evidence, units=None, **kw):
    j = structural_judge(ScriptedNLI(TABLE), **{**P, **kw})
    return asyncio.run(j.judge_one(JudgeRequest(request_id="r", form=form, text=text, evidence=evidence, units=units)))


def test_forms_label_sentences_defects():
    assert _judge("label", OUTPUT, WORLD).label is True
    assert _judge("label", C1, WORLD).label is False
    v = _judge("sentences", OUTPUT, WORLD)
    assert v.unit_labels == [True, False, True] and v.parse_ok
    v = _judge("sentences", OUTPUT, WORLD, units=[C1, C0])       # the given units are the claims, in order
    assert v.unit_labels == [False, True]
    v = _judge("defects", OUTPUT, WORLD, units=[R0, R1])
    assert [d.unit_id for d in v.defects] == ["claim:0", "claim:2", "requirement:1"]
    assert v.meta["nli_backend"] == "scripted" and v.meta["weak_backend"] is False
    with pytest.raises(ValueError, match="not graded"):
        _judge("graded", OUTPUT, WORLD)


def test_empty_world_and_empty_output_have_defined_verdicts():
    v = _judge("defects", OUTPUT, None)               # no world: every claim unsupported, nothing examined
    assert [(d.unit_id, d.certificate["type"], d.certificate["pairs"]) for d in v.defects] == [
        ("claim:0", "unsupported_claim", []), ("claim:1", "unsupported_claim", []),
        ("claim:2", "unsupported_claim", [])]
    assert verify_certificate(v.defects[0].certificate, ScriptedNLI(TABLE)) is None
    v = _judge("defects", "   ", WORLD, units=[R0])  # no output: no claim; the requirement is uncovered
    assert [(d.unit_id, d.certificate["pairs"]) for d in v.defects] == [("requirement:0", [])]
    assert _judge("label", "", "").label is False      # nothing asserted, nothing required
    assert _judge("sentences", "", WORLD).unit_labels == []


def test_graph_text_names_nodes_edges_and_thresholds():
    text = graph_text(_graph())
    assert text.splitlines() == [
        "Evidence:", f"E1. {E0}", f"E2. {E1}", f"E3. {E2}",
        "Claims:", f"C1. {C0}", f"C2. {C1}", f"C3. {C2}",
        "Requirements:", f"R1. {R0}", f"R2. {R1}",
        "Graph (NLI backend scripted; support if P(entail) >= 0.5, conflict if P(contradict) >= 0.5):",
        "C1: CONFLICT with E1 (P(contradict)=0.80)",
        "C2: supported by E2 (P(entail)=0.90)",
        "C3: unsupported (best E3, P(entail)=0.30)",
        "R1: covered by C2 (P(entail)=0.95)",
        "R2: not covered by any claim",
    ]


@pytest.mark.parametrize("kw", [{"tau_s": 1.5}, {"tau_c": -0.1}, {"top_k": 0}, {"tau_s": "x"}])
def test_bad_parameters_are_input_errors(kw):
    with pytest.raises(InputError):
        GraphParams(**kw)


def test_routed_evidence_keeps_the_union_of_each_claims_nearest_sentences_in_world_order():
    # C0 -> E0 (bridge, metres, long), C1 -> E1 (same text), C2 shares nothing -> E0 (tie to the earlier)
    assert routed_evidence(WORLD, OUTPUT, k=1) == f"{E0} {E1}"
    assert routed_evidence(WORLD, C1, k=1) == E1
    assert routed_evidence(WORLD, OUTPUT, k=5) == WORLD
    assert routed_evidence(None, OUTPUT, k=1) == "" and routed_evidence(WORLD, "", k=1) == ""

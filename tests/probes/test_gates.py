"""The program gates and the verifier gate (construct-validity.txt §4.2, Appendix B)."""

from __future__ import annotations

import hashlib
import json

import pytest

from judgeaudit.probes import gates
from judgeaudit.probes.templates import (GENERATOR_TEMPLATES, VERIFIER_TEMPLATE, parse_generator_output,
                                         parse_verifier_output, render_generator_prompt,
                                         render_verifier_prompt)
from judgeaudit.probes.taxonomy import SLOTS

ORIG = "In this basin, the method may reduce forecast error by about a tenth."   # 70 chars


def test_length_gate_rejects_15_percent_longer_and_accepts_5():
    longer = ORIG + "x" * round(len(ORIG) * 0.15)
    assert gates.length_ratio(ORIG, longer) == pytest.approx(1.15, abs=0.01)
    assert gates.length_gate(ORIG, longer, 0.10) == [gates.LENGTH]
    shorter = ORIG[: round(len(ORIG) * 0.85)]
    assert gates.length_gate(ORIG, shorter, 0.10) == [gates.LENGTH]
    slightly = ORIG + "x" * round(len(ORIG) * 0.05)
    assert gates.length_gate(ORIG, slightly, 0.10) == []
    # whitespace runs do not count as length
    assert gates.length_ratio(ORIG, ORIG.replace(" ", "   ")) == 1.0


def test_marker_filter_rejects_control_edit_adding_as_is_well_known():
    edited = "As is well known, in this basin the method may reduce forecast error by about a tenth."
    assert gates.epistemic_marker_gate(ORIG, edited, "verbosity_padding") == [gates.EPISTEMIC_MARKER]
    assert gates.marker_changes(ORIG, edited)["added"] == ["aside:as is well known"]


@pytest.mark.parametrize("edited, kind", [
    ("In this basin, the method reduces forecast error by about a tenth.", "removed"),        # hedge removed
    ("In this basin, the method may substantially reduce forecast error by about a tenth.", "added"),
    ("In all basins, the method may reduce forecast error by about a tenth.", "added"),         # quantifier
])
def test_marker_filter_rejects_control_edits_changing_markers(edited, kind):
    assert gates.epistemic_marker_gate(ORIG, edited, "register_shift") == [gates.EPISTEMIC_MARKER]
    assert gates.marker_changes(ORIG, edited)[kind]


def test_marker_filter_passes_marker_neutral_control_and_any_construct_edit():
    reordered = "The method may reduce forecast error by about a tenth in this basin."
    assert gates.epistemic_marker_gate(ORIG, reordered, "reordering") == []
    # a construct edit is expected to move markers; the verifier judges it instead
    removed = "In this basin, the method reduces forecast error by about a tenth."
    assert gates.epistemic_marker_gate(ORIG, removed, "hedging_removal") == []
    # word boundaries: "mayor" and "allow" are not markers
    assert not gates.marker_counts("The mayor will allow it.")


def test_marker_list_is_frozen():
    digest = hashlib.sha256(json.dumps(gates.EPISTEMIC_MARKERS, sort_keys=True).encode()).hexdigest()[:16]
    assert set(gates.EPISTEMIC_MARKERS) == {"hedge", "intensifier", "quantifier", "aside"}
    assert digest == FROZEN_MARKER_DIGEST, "the epistemic-marker list changed: bump TEMPLATE_VERSION and this pin"


FROZEN_MARKER_DIGEST = "cad35a3002d6f339"


def _rep(slot, **over):
    d = {"facts_identical": True, "anchor_free_both": True, "register_comparable": True,
         "slot_changed": slot, "scope_relation": "same", "second_claims_more": False}
    d.update(over)
    return parse_verifier_output(json.dumps(d))


def test_verifier_gate_wrong_slot_and_each_condition():
    assert gates.verifier_gate(_rep("hedging_removal"), "hedging_removal") == []
    assert gates.verifier_gate(_rep("intensifier_addition"), "hedging_removal") == [gates.WRONG_SLOT]
    assert gates.verifier_gate(_rep("hedging_removal", facts_identical=False), "hedging_removal") == [
        gates.FACTS_DIFFER]
    assert gates.verifier_gate(_rep("hedging_removal", anchor_free_both=False), "hedging_removal") == [gates.ANCHOR]
    assert gates.verifier_gate(_rep("hedging_removal", register_comparable="no"), "hedging_removal") == [
        gates.REGISTER]
    # a construct edit may widen scope; a control edit must keep it the same
    assert gates.verifier_gate(_rep("population_widening", scope_relation="wider"), "population_widening") == []
    assert gates.verifier_gate(_rep("reordering", scope_relation="wider"), "reordering") == [gates.SCOPE_CHANGED]


def test_templates_one_per_class_filled_from_taxonomy():
    assert set(GENERATOR_TEMPLATES) == {"construct_changing", "construct_preserving"}
    for s in SLOTS:
        p = render_generator_prompt("C.", "E.", s.name, 0.10)
        assert s.name in p and s.gloss in p and "10%" in p
    v = render_verifier_prompt("one", "two", "ev")
    assert all(s.name in v for s in SLOTS) and "second_claims_more" in VERIFIER_TEMPLATE


def test_parsers():
    assert parse_generator_output('Sure!\n```json\n{"edited": " New claim. "}\n```') == "New claim."
    assert parse_generator_output("no json here") is None
    assert parse_generator_output('{"edited": ""}') is None
    assert parse_verifier_output('{"facts_identical": true}') is None
    rep = _rep("reordering", scope_relation="Same", second_claims_more="yes")
    assert rep.scope_relation == "same" and rep.second_claims_more is True
    assert _rep("reordering", scope_relation="broader") is None

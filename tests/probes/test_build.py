"""The probe build: generator → length gate → marker gate → verifier gate (§4.2, App. B, App. H S4)."""

from __future__ import annotations

import json

import pytest
from scripted_judges import generator_from, good_report, verifier_from

from judgeaudit.errors import InputError
from judgeaudit.probes import gates
from judgeaudit.probes.build import BaseItem, build_probes, read_bases
from judgeaudit.probes.taxonomy import SLOT_BY_NAME

C1 = "In this basin, the method may reduce forecast error by about a tenth."
C2 = "In the trial cohort, the drug lowered systolic pressure in some adults."
EV = "A single-basin study found forecast error fell by 9% with the method."
EV2 = "A 12-week trial in 80 adults found lower systolic pressure in a subgroup."

BASES = [BaseItem(claim=C1, evidence=EV, group="g1", domain="hydro", base_id="b1"),
         BaseItem(claim=C2, evidence=EV2, group="g2", domain="med", base_id="b2")]

EDITS = {
    # b1: accepted construct edits
    (C1, "hedging_removal"): "In this basin, the method reduces forecast error by about a tenth.",
    (C1, "domain_extension"): "In every river basin, the method may reduce forecast error by a tenth.",
    # b1: control, adds "as is well known" but within length → marker gate
    (C1, "verbosity_padding"): "As is well known, in this basin the method may reduce error by a tenth.",
    # b1: control, fine → accepted
    (C1, "reordering"): "The method may reduce forecast error by about a tenth in this basin.",
    # b1: 15% longer → length gate
    (C1, "intensifier_addition"): "In this basin, the method may reduce forecast error by about a tenth, markedly so.",
    # b2: verifier will name the wrong slot
    (C2, "hedging_removal"): "In the trial cohort, the drug lowered systolic pressure in adults.",
    # b2: control that the verifier says widened scope
    (C2, "reordering"): "The drug lowered systolic pressure in some adults in the trial cohort.",
    # b2: generator returns nothing for domain_extension / verbosity_padding / intensifier_addition (API error)
}

WRONG_SLOT_FOR = {EDITS[(C2, "hedging_removal")]: "population_widening"}
WIDER_FOR = {EDITS[(C2, "reordering")]}
NOTICED = {EDITS[(C1, "domain_extension")]}


def _verifier():
    def report(original, edited):
        slot = next(s for (c, s), e in EDITS.items() if e == edited)
        rep = good_report(WRONG_SLOT_FOR.get(edited, slot))
        if edited in WIDER_FOR:
            rep["scope_relation"] = "wider"
        if SLOT_BY_NAME[slot].is_construct and slot != "hedging_removal":
            rep["scope_relation"] = "wider"
        rep["second_claims_more"] = edited in NOTICED
        return rep

    return verifier_from(report)


SLOTS = ["hedging_removal", "domain_extension", "intensifier_addition", "reordering", "verbosity_padding"]


def test_build_gates_in_order_and_logs_reason_and_slot():
    gen, ver = generator_from(EDITS), _verifier()
    res = build_probes(BASES, SLOTS, gen, ver, audited_families=["fam-c"])
    accepted = {(p.base_id, p.slot) for p in res.probes}
    assert accepted == {("b1", "hedging_removal"), ("b1", "domain_extension"), ("b1", "reordering")}
    p = next(p for p in res.probes if p.slot == "hedging_removal")
    assert p.intended_direction == "edited" and p.original == C1 and p.evidence == EV
    assert p.meta["verifier_family"] == "fam-b" and p.meta["family_override"] is False
    assert next(p for p in res.probes if p.slot == "reordering").intended_direction == "neither"

    rej = {(r.base_id, r.slot): r.reason for r in res.rejections.itertuples()}
    assert rej == {
        ("b1", "verbosity_padding"): gates.EPISTEMIC_MARKER,
        ("b1", "intensifier_addition"): gates.LENGTH,
        ("b2", "hedging_removal"): gates.WRONG_SLOT,
        ("b2", "reordering"): gates.SCOPE_CHANGED,
        ("b2", "domain_extension"): gates.GENERATOR_ERROR,
        ("b2", "intensifier_addition"): gates.GENERATOR_ERROR,
        ("b2", "verbosity_padding"): gates.GENERATOR_ERROR,
    }
    # the verifier saw only edits that passed both program gates: 3 accepted + 2 verifier rejections
    assert len(ver.prompts) == 5
    assert not any(EDITS[(C1, "verbosity_padding")] in pr for pr in ver.prompts)
    assert not any(EDITS[(C1, "intensifier_addition")] in pr for pr in ver.prompts)

    tab = res.rejection_table()
    assert tab.loc["hedging_removal", gates.WRONG_SLOT] == 1
    assert tab.loc["verbosity_padding", gates.EPISTEMIC_MARKER] == 1
    assert tab.loc["verbosity_padding", gates.GENERATOR_ERROR] == 1

    y = res.yield_table().set_index("slot")
    assert y.loc["hedging_removal", ["requested", "generated", "length_ok", "markers_ok", "verified",
                                     "accepted"]].tolist() == [2, 2, 2, 2, 1, 1]
    assert y.loc["hedging_removal", "yield"] == 0.5
    assert y.loc["verbosity_padding", "yield"] == 0.0
    assert y.loc["all", "accepted"] == 3 and y.loc["all", "requested"] == 10

    # S4: the verifier's own directional answer, per axis, over the pairs it answered
    n = res.verifier_notices().set_index("axis")
    assert n.loc["scope", "n_verified"] == 1 and n.loc["scope", "noticed"] == 1
    assert n.loc["scope", "notice_rate"] == 1.0 and n.loc["scope", "axis_agree"] == 1.0
    assert n.loc["strength", "n_verified"] == 2 and n.loc["strength", "notice_rate"] == 0.0
    assert n.loc["control", "n_verified"] == 2
    json.dumps(res.to_dict(), default=str)


def test_marker_filter_runs_before_any_verifier_call():
    edits = {(C1, "verbosity_padding"): EDITS[(C1, "verbosity_padding")]}
    ver = _verifier()
    res = build_probes(BASES[:1], ["verbosity_padding"], generator_from(edits), ver, audited_families=["fam-c"])
    assert res.probes == []
    assert res.rejections["reason"].tolist() == [gates.EPISTEMIC_MARKER]
    assert "aside:as is well known" in res.rejections["detail"].iloc[0]
    assert ver.prompts == []          # the verifier was never called


def test_length_tolerance_is_a_parameter_stated_in_the_prompt():
    gen = generator_from(EDITS)
    res = build_probes(BASES[:1], ["intensifier_addition"], gen, _verifier(), audited_families=["fam-c"],
                       length_tolerance=0.20)
    assert "20%" in gen.prompts[0]
    assert [p.slot for p in res.probes] == ["intensifier_addition"]


def test_families_must_be_disjoint_unless_overridden():
    gen = generator_from(EDITS, family="Acme")
    ver = _verifier()
    ver.spec = ver.spec.model_copy(update={"family": "acme"})
    with pytest.raises(InputError, match="share family 'acme'"):
        build_probes(BASES, ["reordering"], gen, ver, audited_families=["fam-c"])
    assert gen.prompts == []           # refused before any call
    with pytest.raises(InputError, match="also an audited family"):
        build_probes(BASES, ["reordering"], generator_from(EDITS), _verifier(), audited_families=["fam-b"])
    with pytest.raises(InputError, match="no audited judge family"):
        build_probes(BASES, ["reordering"], generator_from(EDITS), _verifier(), audited_families=[])
    res = build_probes(BASES[:1], ["reordering"], gen, ver, audited_families=["fam-c"], allow_shared_family=True)
    assert res.families["override"] is True and res.families["violations"]
    assert res.probes[0].meta["family_override"] is True
    assert res.to_dict()["families"]["override"] is True


def test_unknown_slot_and_bad_bases_file(tmp_path):
    with pytest.raises(InputError, match="unknown slot"):
        build_probes(BASES, ["hedge_padding"], generator_from(EDITS), _verifier(), audited_families=["c"])
    p = tmp_path / "bases.jsonl"
    p.write_text(json.dumps({"claim": C1, "evidence": EV, "group": "g", "domain": "d"}) + "\n"
                 + json.dumps({"claim": C2, "group": "g", "domain": "d"}) + "\n")
    with pytest.raises(InputError) as e:
        read_bases(p)
    assert e.value.line == 2 and e.value.field == "evidence"
    p.write_text(json.dumps({"claim": C1, "evidence": EV, "group": "g", "domain": "d"}) + "\n")
    (b,) = read_bases(p)
    assert b.resolved_id().startswith("b_")

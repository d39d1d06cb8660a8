"""The edit taxonomy is frozen (construct-validity.txt Appendix B, Table 8): this test fails if it drifts."""

import hashlib

from judgeaudit.probes import taxonomy as tx

FROZEN = (
    ("domain_extension", "construct_changing", "scope"),
    ("population_widening", "construct_changing", "scope"),
    ("quantifier_strengthening", "construct_changing", "scope"),
    ("tense_modality_shift", "construct_changing", "scope"),
    ("condition_removal", "construct_changing", "strength"),
    ("hedging_removal", "construct_changing", "strength"),
    ("intensifier_addition", "construct_changing", "strength"),
    ("elaboration", "construct_preserving", "control"),
    ("format_shift", "construct_preserving", "control"),
    ("register_shift", "construct_preserving", "control"),
    ("reordering", "construct_preserving", "control"),
    ("verbosity_padding", "construct_preserving", "control"),
)
# The glosses are part of the versioned generator templates; changing one changes every prompt.
GLOSS_SHA256 = "d807c037094b1c27c8cfa12a74597b475beec7fd45af0d5317abc928841b153f"


def test_table_is_frozen():
    assert tuple((s.name, s.slot_class, s.axis) for s in tx.SLOTS) == FROZEN
    assert tx.CONSTRUCT_SLOTS == tuple(n for n, c, _ in FROZEN if c == "construct_changing")
    assert tx.CONTROL_SLOTS == tuple(n for n, c, _ in FROZEN if c == "construct_preserving")
    assert all(s.gloss.strip() for s in tx.SLOTS)
    digest = hashlib.sha256("\n".join(s.gloss for s in tx.SLOTS).encode()).hexdigest()
    assert digest == GLOSS_SHA256


def test_directions_and_axes():
    assert {tx.intended_direction(n) for n in tx.CONSTRUCT_SLOTS} == {"edited"}
    assert {tx.intended_direction(n) for n in tx.CONTROL_SLOTS} == {"neither"}
    assert [tx.axis_of(n) for n in ("quantifier_strengthening", "hedging_removal", "reordering")] == \
        ["scope", "strength", "control"]

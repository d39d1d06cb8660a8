"""The frozen edit taxonomy (construct-validity.txt §4.1, Appendix B, Table 8).

Twelve slots: seven construct-changing edits on two axes (scope, strength) and five
construct-preserving controls. The table is frozen: ``tests/probes/test_taxonomy.py`` fails
if it drifts, and the assertion at import fails if a slot lacks an axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SlotClass = Literal["construct_changing", "construct_preserving"]
Axis = Literal["scope", "strength", "control"]


@dataclass(frozen=True)
class Slot:
    name: str
    slot_class: SlotClass
    axis: Axis
    gloss: str

    @property
    def is_construct(self) -> bool:
        return self.slot_class == "construct_changing"


SLOTS: tuple[Slot, ...] = (
    Slot("domain_extension", "construct_changing", "scope",
         "extends the claim to a domain or setting the evidence does not cover"),
    Slot("population_widening", "construct_changing", "scope",
         "widens the population or set of cases the claim applies to"),
    Slot("quantifier_strengthening", "construct_changing", "scope",
         "replaces a restricted quantifier with a stronger one (some -> most/all)"),
    Slot("tense_modality_shift", "construct_changing", "scope",
         "moves the claim from observed/past to general, future or necessary"),
    Slot("condition_removal", "construct_changing", "strength",
         "drops a qualifying condition the evidence attaches to the finding"),
    Slot("hedging_removal", "construct_changing", "strength",
         "removes a hedge so the claim commits harder to the same content"),
    Slot("intensifier_addition", "construct_changing", "strength",
         "adds an intensifier that raises commitment without changing coverage"),
    Slot("elaboration", "construct_preserving", "control",
         "restates content already in the claim at more length, adding no new claim"),
    Slot("format_shift", "construct_preserving", "control",
         "changes layout or punctuation (e.g. a list or parentheses) only"),
    Slot("register_shift", "construct_preserving", "control",
         "changes register or word choice at the same commitment and scope"),
    Slot("reordering", "construct_preserving", "control",
         "reorders clauses without changing what is claimed"),
    Slot("verbosity_padding", "construct_preserving", "control",
         "adds content-free words that neither qualify nor strengthen the claim"),
)

SLOT_BY_NAME: dict[str, Slot] = {s.name: s for s in SLOTS}
AXES: tuple[str, ...] = ("scope", "strength", "control")
CONSTRUCT_AXES: tuple[str, ...] = ("scope", "strength")
CONSTRUCT_SLOTS: tuple[str, ...] = tuple(s.name for s in SLOTS if s.is_construct)
CONTROL_SLOTS: tuple[str, ...] = tuple(s.name for s in SLOTS if not s.is_construct)

for _s in SLOTS:
    assert _s.axis in AXES, f"slot {_s.name} lacks an axis"
    assert (_s.axis == "control") == (not _s.is_construct), f"slot {_s.name}: axis/class mismatch"
assert len(CONSTRUCT_SLOTS) == 7 and len(CONTROL_SLOTS) == 5


def intended_direction(slot: str) -> str:
    """The direction a slot is designed to have: the edited text overreaches, or neither does."""
    return "edited" if SLOT_BY_NAME[slot].is_construct else "neither"


def axis_of(slot: str) -> str:
    return SLOT_BY_NAME[slot].axis

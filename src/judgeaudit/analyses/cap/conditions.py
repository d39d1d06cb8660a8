"""The frozen CAP condition registry (conditional-accuracy-profiles.txt §3.1, Table 1) and the
statuses a coverage cell may carry (§3.2, Table 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Category = Literal["content", "robustness", "explanation"]


@dataclass(frozen=True)
class Condition:
    """One CAP condition (Table 1): its subset and item-level indicator."""

    code: str
    name: str
    category: Category
    subset: str
    measurement: str


#: The frozen condition registry (Table 1). Robustness (C5–C7) uses the strict "both correct"
#: criterion; the pure-consistency counterpart is always computed beside it (Appendix H).
CONDITIONS: tuple[Condition, ...] = (
    Condition("C1", "factual", "content", "factual-fabrication items", "Pr[v = a*]"),
    Condition("C2", "logical", "content", "logical-reversal items", "Pr[v = a*]"),
    Condition("C3", "scope-overclaim", "content", "overclaim items", "Pr[v = a*]"),
    Condition("C4", "scope-omission", "content", "omission items", "Pr[v = a*]"),
    Condition("C5", "style", "robustness", "plain/polished variants", "Pr[v(x1) = v(x2) = a*]"),
    Condition("C6", "length", "robustness", "plain/padded variants", "Pr[v(x1) = v(x2) = a*]"),
    Condition("C7", "position", "robustness", "A/B and B/A orderings", "Pr[v(x_AB) = v(x_BA) = a*]"),
    Condition("C8", "rationale", "explanation", "correct-verdict items", "Pr[e(rho) supports v]"),
)
CONDITION_CODES = tuple(c.code for c in CONDITIONS)
CONDITION_BY_CODE = {c.code: c for c in CONDITIONS}
CONTENT = ("C1", "C2", "C3", "C4")
ROBUSTNESS = ("C5", "C6", "C7")

assert CONDITION_CODES == ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"), "CAP registry drifted"
assert tuple(c.name for c in CONDITIONS) == (
    "factual", "logical", "scope-overclaim", "scope-omission", "style", "length", "position", "rationale"
), "CAP registry drifted"
assert {c.code for c in CONDITIONS if c.category == "robustness"} == set(ROBUSTNESS)

#: Statuses entering the main table; approx and augmented cells are reported beside, never averaged
#: with direct ones (§4, Appendix D).
MAIN_STATUSES = ("direct", "approx")

FailurePolicy = Literal["exclude", "wrong"]

"""Directional sensitivity: R = R⁺ + wrong-way rate (construct-validity.txt §2, §5.1).

A construct probe enters the arm only when its direction (the annotators' majority, or without labels
the intended one) is the slot's designed ``edited``: the edit is the member that claims more than the
evidence licenses. A higher grade means more overreach, so a flip toward that label flags the edit and
not its original; a flip the wrong way flags the original and not the edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from judgeaudit.analyses.validity.rates import _num

#: The moves a column of the subset matrix counts: any flip, a flip toward the labelled direction,
#: a flip the wrong way.
MOVES = ("flip", "toward", "wrong")


def moves_at(F: np.ndarray, bs: np.ndarray, es: np.ndarray, usable: np.ndarray, taus: np.ndarray,
             t: int) -> dict[str, np.ndarray]:
    """Flips at ``taus[t]``, split by direction (``MOVES``): ``F`` is the ``(n_probes, n_tau)`` flip
    matrix, ``bs``/``es`` the original's and the edit's grades, ``usable`` the probes with both."""
    with np.errstate(invalid="ignore"):
        b, e = bs >= taus[t], es >= taus[t]
    return {"flip": F[:, t], "toward": usable & e & ~b, "wrong": usable & b & ~e}


def directional_block(mv: Mapping[str, np.ndarray], est: Mapping[str, float], cis: Mapping[str, Any],
                      subsets: Mapping[str, np.ndarray], measurable: Mapping[str, bool]) -> dict[str, Any]:
    """The ``directional`` block of a judge's stats at its operating point: counts of construct flips
    toward and against the labelled direction, and per axis R⁺ and the wrong-way rate with intervals
    (None on an axis that is not measurable)."""
    cons = subsets["construct"]
    directional: dict[str, Any] = {"n_flips": int((mv["flip"] & cons).sum()),
                                   "n_toward": int((mv["toward"] & cons).sum()),
                                   "n_wrong_way": int((mv["wrong"] & cons).sum())}
    for ax in ("scope", "strength"):
        ok = measurable[ax]
        directional[ax] = {"R_plus": _num(est[f"{ax}+"]) if ok else None,
                           "R_plus_ci": cis[f"{ax}+"] if ok else None,
                           "wrong_way_rate": _num(est[f"{ax}-"]) if ok else None,
                           "wrong_way_rate_ci": cis[f"{ax}-"] if ok else None,
                           "n_flips": int((mv["flip"] & subsets[ax]).sum()),
                           "n_wrong_way": int((mv["wrong"] & subsets[ax]).sum())}
    return directional


def wrong_way_note(directional: Mapping[str, Any], wrong_way_ci: Sequence[float] | None,
                   r_plus_ci: Sequence[float] | None) -> str | None:
    """The note a profile carries when most of its construct flips go the wrong way: the wrong-way rate's 95%
    interval lies wholly above R⁺'s (the card's rule). A count ("at least half of the flips") would fire on
    about half of the judges with no direction preference."""
    if not (directional["n_flips"] and wrong_way_ci and r_plus_ci and wrong_way_ci[0] > r_plus_ci[1]):
        return None
    return (f"{directional['n_wrong_way']} of {directional['n_flips']} construct flips at τ go the wrong way (the "
            "edit graded as overreaching less than its original; wrong-way rate interval "
            f"[{wrong_way_ci[0]:.2f}, {wrong_way_ci[1]:.2f}] above R⁺'s [{r_plus_ci[0]:.2f}, {r_plus_ci[1]:.2f}]): "
            "R counts them, R⁺ does not")

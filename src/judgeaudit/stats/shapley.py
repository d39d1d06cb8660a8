"""A 2^k factorial's cells and the exact Shapley value of each factor (blind-spot §6).

The value of a cell is any metric of the run with the factors in ``A`` switched on. The Shapley
value of factor i is

    φ_i = Σ_{A ⊆ F∖{i}} |A|! (|F| − |A| − 1)! / |F|! · (v(A ∪ {i}) − v(A)),

so Σ_i φ_i = v(F) − v(∅). With |F| = 4 the weights are 1/4, 1/12, 1/12, 1/4 for |A| = 0..3; with
|F| = 3, 1/3, 1/6, 1/3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from math import factorial

MAX_FACTORS = 5


def cells(factors: Sequence[str]) -> list[frozenset[str]]:
    """All 2^k subsets of ``factors`` (the factorial's cells), smallest first."""
    if len(factors) > MAX_FACTORS:
        raise ValueError(f"at most {MAX_FACTORS} factors, got {len(factors)}")
    if len(set(factors)) != len(factors):
        raise ValueError(f"factors repeat: {list(factors)}")
    return [frozenset(c) for r in range(len(factors) + 1) for c in combinations(factors, r)]


def shapley_weight(size: int, k: int) -> float:
    return factorial(size) * factorial(k - size - 1) / factorial(k)


def shapley(values: Mapping[frozenset[str], float] | Callable[[frozenset[str]], float],
            factors: Sequence[str]) -> dict[str, float]:
    """Exact Shapley value of each factor from the value of every cell."""
    v = values if callable(values) else values.__getitem__
    k = len(factors)
    out = {}
    for f in factors:
        rest = [g for g in factors if g != f]
        out[f] = sum(shapley_weight(len(a), k) * (v(frozenset(a) | {f}) - v(frozenset(a)))
                     for r in range(k) for a in combinations(rest, r))
    return out

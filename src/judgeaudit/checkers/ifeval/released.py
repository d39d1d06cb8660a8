"""The released IFEval checker's accuracies where it draws at random: an exact distribution.

google-research's ``LetterFrequencyChecker.build_description`` replaces a ``letter`` outside a-z
with ``random.choice(string.ascii_letters)``, lower-cased — a uniform draw over the 26 letters —
each time an instruction is built, and ``evaluation_main`` builds every instruction once for the
strict pass and once for the loose pass, unseeded. On such an instruction the released checker's
verdict is therefore a coin whose probability is the share of the 26 letters the response's count
satisfies. judgeaudit counts the character it is given instead (a checker outside a loop must not
decide by chance); this module states what the released checker would report on the same
responses: the exact distribution of each of the four counts, the drawn instructions convolved
with the deterministic ones. Prompt-level and instruction-level counts share their draws, so the
four distributions are marginals.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgeaudit.checkers.base import CheckResult
from judgeaudit.checkers.ifeval.evaluate import IFEvalItem, Mode, check_ifeval, follows

DRAWN = "keywords:letter_frequency"
LETTERS = string.ascii_lowercase


def is_drawn(instruction_id: str, args: dict[str, Any] | Any) -> bool:
    """Whether the released checker draws this instruction's parameter at random."""
    return instruction_id == DRAWN and not ("a" <= args["letter"] <= "z")


def p_follow(args: dict[str, Any] | Any, response: str, mode: Mode) -> float:
    """Probability that the released checker finds ``response`` following a letter_frequency
    instruction whose letter it draws: the share of the 26 letters that pass."""
    return sum(follows(DRAWN, {**args, "letter": c}, response, mode) for c in LETTERS) / len(LETTERS)


@dataclass(frozen=True)
class CountDistribution:
    """The exact distribution of one accuracy's numerator (``probs[i]`` = P(count = low + i))."""

    total: int
    low: int
    probs: tuple[float, ...]

    @property
    def high(self) -> int:
        return self.low + len(self.probs) - 1

    def p(self, count: int) -> float:
        i = count - self.low
        return self.probs[i] if 0 <= i < len(self.probs) else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "min": self.low, "max": self.high,
                "mean": float(sum((self.low + i) * p for i, p in enumerate(self.probs))),
                "distribution": {str(self.low + i): p for i, p in enumerate(self.probs) if p > 0}}


def _distribution(fixed: int, coins: Sequence[float], total: int) -> CountDistribution:
    poly = np.array([1.0])
    for p in coins:
        poly = np.convolve(poly, [1.0 - p, p])
    nz = np.flatnonzero(poly > 0)
    lo, hi = (int(nz[0]), int(nz[-1])) if nz.size else (0, 0)
    return CountDistribution(total=total, low=fixed + lo, probs=tuple(float(x) for x in poly[lo:hi + 1]))


def released_counts(pairs: Sequence[tuple[IFEvalItem, str]], mode: Mode,
                    checked: Sequence[CheckResult] | None = None) -> dict[str, Any]:
    """For (item, response) pairs: the drawn instructions with their probabilities, and the
    distributions of the prompt-level and instruction-level counts the released checker reports
    (``checked``: the pairs' :func:`check_ifeval` results in ``mode``, when already computed)."""
    if checked is None:
        checked = [check_ifeval(item, response, mode=mode) for item, response in pairs]
    prompt_fixed = instr_fixed = n_instr = 0
    prompt_coins: list[float] = []
    instr_coins: list[float] = []
    drawn: list[dict[str, Any]] = []
    for (item, response), result in zip(pairs, checked, strict=True):
        all_fixed_pass, ps = True, []
        for i, (iid, a, unit) in enumerate(zip(item.instruction_ids, item.args, result.units, strict=True)):
            n_instr += 1
            if is_drawn(iid, a):
                p = p_follow(a, response, mode)
                ps.append(p)
                drawn.append({"key": item.key, "index": i, "instruction_id": iid, "letter": a["letter"],
                              "p_follow": p})
            elif unit.passed:
                instr_fixed += 1
            else:
                all_fixed_pass = False
        instr_coins += ps
        if all_fixed_pass and ps:
            prompt_coins.append(float(np.prod(ps)))
        elif all_fixed_pass:
            prompt_fixed += 1
    return {"drawn": drawn,
            "prompt_level": _distribution(prompt_fixed, prompt_coins, len(pairs)),
            "instruction_level": _distribution(instr_fixed, instr_coins, n_instr)}

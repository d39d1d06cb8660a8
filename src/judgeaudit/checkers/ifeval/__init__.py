"""IFEval (Zhou et al. 2023): the 25 verifiable instruction types, strict and loose."""

from judgeaudit.checkers.ifeval.evaluate import (
    IFEvalItem,
    IFEvalScores,
    check_ifeval,
    follows,
    loose_variants,
    make_item,
    score,
)
from judgeaudit.checkers.ifeval.instructions import INSTRUCTIONS, bind

__all__ = ["INSTRUCTIONS", "IFEvalItem", "IFEvalScores", "bind", "check_ifeval", "follows", "loose_variants",
           "make_item", "score"]

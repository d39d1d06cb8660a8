"""HaluEval QA: does an answer contain the right answer? (Li et al. 2023; HotpotQA answers)

One unit per item, ``"answer"``. Rule:

* **Normalisation** (SQuAD's ``normalize_answer``): lower-case; drop every ASCII punctuation
  character; drop the articles ``a``, ``an``, ``the`` as whole words; collapse whitespace.
* **Containment**: the normalised right answer's words occur as a contiguous run of the
  normalised output's words (so ``"10"`` is not found in ``"100"``, ``"paris"`` is found in
  ``"it is paris france"``).
* **NLI fallback** (optional; blind-spot §8, §9, §11): when containment fails and an ``nli``
  callable is given, the unit passes when ``nli(question, right_answer, output)`` says the output
  entails the right answer. The callable is the hook for the structural judge's NLI backends
  (``judgeaudit.structural.answer_entailment``, asked about :func:`entailment_pair`); without one,
  containment alone decides. The unit's ``detail`` names the route that decided it
  (:data:`ROUTES`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from judgeaudit.checkers.base import CheckResult, UnitResult
from judgeaudit.errors import InputError

NLI = Callable[[str, str, str], bool]
"""``nli(question, right_answer, output) -> bool``: does the output entail the right answer?"""

ROUTES = {"contains": "containment", "nli entails": "nli", "nli does not entail": "nli",
          "does not contain": "containment"}
"""A unit's ``detail`` → the route that decided it."""

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@dataclass(frozen=True)
class HaluEvalQAItem:
    """One HaluEval QA question with its right answer (the evidence is not needed to check)."""

    id: str
    question: str
    right_answer: str


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_answer(output: str, right_answer: str) -> bool:
    """Whether the normalised ``right_answer`` occurs as a run of words in the normalised output."""
    want = normalize_answer(right_answer).split()
    if not want:
        raise InputError(f"right answer {right_answer!r} is empty after normalisation", field="right_answer")
    have = normalize_answer(output).split()
    k = len(want)
    return any(have[i:i + k] == want for i in range(len(have) - k + 1))


def entailment_pair(question: str, right_answer: str, output: str) -> tuple[str, str]:
    """The (premise, hypothesis) the NLI fallback is asked about: the question with the output, and
    the question with the right answer (judgeaudit's own pair; the paper does not give one)."""
    return f"{question} {output}", f"{question} {right_answer}"


def check_halueval_qa(item: HaluEvalQAItem, output: str, *, nli: NLI | None = None) -> CheckResult:
    """One unit, ``answer``: containment of the right answer, else (optionally) NLI entailment."""
    if contains_answer(output, item.right_answer):
        return CheckResult(item.id, (UnitResult("answer", True, "contains"),))
    if nli is not None:
        ok = bool(nli(item.question, item.right_answer, output))
        return CheckResult(item.id, (UnitResult("answer", ok, "nli entails" if ok else "nli does not entail"),))
    return CheckResult(item.id, (UnitResult("answer", False, "does not contain"),))

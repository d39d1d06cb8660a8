"""HaluEval QA: does an answer contain the right answer? (Li et al. 2023; HotpotQA answers)

One unit per item, ``"answer"``. Rule:

* **Normalisation** (SQuAD's ``normalize_answer``): lower-case; drop every ASCII punctuation
  character; drop the articles ``a``, ``an``, ``the`` as whole words; collapse whitespace.
* **Containment**: the normalised right answer's words occur as a contiguous run of the
  normalised output's words (so ``"10"`` is not found in ``"100"``, ``"paris"`` is found in
  ``"it is paris france"``).
* **NLI fallback** (optional): when containment fails and an ``nli`` callable is given, the unit
  passes when ``nli(question, right_answer, output)`` says the output entails the right answer.
  The callable is the hook for the structural judge's NLI backends; without one, containment
  alone decides.
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


def check_halueval_qa(item: HaluEvalQAItem, output: str, *, nli: NLI | None = None) -> CheckResult:
    """One unit, ``answer``: containment of the right answer, else (optionally) NLI entailment."""
    if contains_answer(output, item.right_answer):
        return CheckResult(item.id, (UnitResult("answer", True, "contains"),))
    if nli is not None:
        ok = bool(nli(item.question, item.right_answer, output))
        return CheckResult(item.id, (UnitResult("answer", ok, "nli entails" if ok else "nli does not entail"),))
    return CheckResult(item.id, (UnitResult("answer", False, "does not contain"),))

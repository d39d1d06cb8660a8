"""HaluEval QA: SQuAD normalisation, word-run containment, and the NLI fallback hook."""

from __future__ import annotations

import pytest

from judgeaudit.checkers import get_checker
from judgeaudit.checkers.halueval_qa import HaluEvalQAItem, check_halueval_qa, contains_answer, normalize_answer
from judgeaudit.errors import InputError

ITEM = HaluEvalQAItem("q1", "Which magazine was started first Arthur's Magazine or First for Women?",
                      "Arthur's Magazine")


@pytest.mark.parametrize(("text", "norm"), [
    ("The  Eiffel Tower!", "eiffel tower"),
    ("Arthur's Magazine", "arthurs magazine"),
    ("An apple, a day.", "apple day"),
    ("Theatre of the Absurd", "theatre of absurd"),
])
def test_normalize_answer_is_squads(text, norm):
    assert normalize_answer(text) == norm


def test_containment_is_a_run_of_whole_words():
    assert contains_answer("I think it was ARTHUR'S magazine, in 1844.", "Arthur's Magazine")
    assert not contains_answer("Arthur's first Magazine", "Arthur's Magazine")
    assert not contains_answer("about 100 people", "10")
    assert contains_answer("It is Paris, France.", "paris")
    with pytest.raises(InputError, match="empty after normalisation"):
        contains_answer("anything", "The!")


def test_check_without_nli_decides_by_containment():
    assert check_halueval_qa(ITEM, "Arthur's Magazine was first.").passed
    res = check_halueval_qa(ITEM, "First for Women was started first.")
    assert [(u.unit, u.passed, u.detail) for u in res.units] == [("answer", False, "does not contain")]


def test_nli_fallback_is_asked_only_when_containment_fails():
    calls = []

    def nli(question, right, output):
        calls.append((question, right, output))
        return output.startswith("The older one")

    assert check_halueval_qa(ITEM, "Arthur's Magazine.", nli=nli).units[0].detail == "contains"
    assert calls == []
    res = check_halueval_qa(ITEM, "The older one, from 1844.", nli=nli)
    assert (res.passed, res.units[0].detail) == (True, "nli entails")
    res = check_halueval_qa(ITEM, "No idea.", nli=nli)
    assert (res.passed, res.units[0].detail) == (False, "nli does not entail")
    assert calls == [(ITEM.question, ITEM.right_answer, "The older one, from 1844."),
                     (ITEM.question, ITEM.right_answer, "No idea.")]


def test_registry_passes_the_hook_through():
    res = get_checker("halueval_qa")(ITEM, "No idea.", nli=lambda q, a, o: True)
    assert res.passed

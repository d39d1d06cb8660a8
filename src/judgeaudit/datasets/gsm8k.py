"""GSM8K adapter (openai/grade-school-math): OpenAI's example model solutions to the 1,319 test
questions, labelled by whether each solution's final answer matches the ground truth — an
objective label, recorded per solution with the model condition that produced it
(construct-validity.txt Def. 5–6, §4.4 item 3 for the provenance-recoverable member).

Quirks handled here:

* ``example_model_solutions.jsonl`` holds, per question, one object per GPT-3 condition
  (``6b_finetuning``, ``6b_verification``, ``175b_finetuning``, ``175b_verification``), each
  ``{is_correct, solution}``; solutions end in ``A: <number>`` (the ground truth is never shown
  to a member — it stays out of the table).
* Item mode (:func:`load_items`): one row per (question, condition) solution, ``text`` = the
  solution, ``label`` = ``correct`` / ``incorrect``, ``group`` = the question, ``condition`` =
  the generating condition.
* Paired mode (:func:`load_pairs`): per question, pairs of solutions of which exactly one is
  correct; by default the first such pair in condition order (the file's order, i<j), or
  every correct × incorrect combination (``pairs="all"``, one group per question). Questions
  whose four solutions are all correct or all incorrect give no pair. The side holding the
  correct solution is fixed by a hash of the question (as the HaluEval adapter does; the audit
  randomises sides again with its own seed); ``label`` names that side and
  ``condition_a``/``condition_b`` record each side's generating condition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgeaudit.datasets._common import files_under, finish_pairs, first_record, hash_side, layout_error, require
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl

SOURCE_SET = "gsm8k"
SOLUTIONS_FILE = "example_model_solutions.jsonl"
CONDITIONS: tuple[str, ...] = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
"""The four GPT-3 conditions of OpenAI's file, in its order. The adapter does not rely on this
list: the conditions are the solution fields found in the file (any number, any names)."""
LABEL_SOURCE = "model_correctness"
"""Label provenance: the solution's final answer checked against the ground truth (objective)."""
EXTRA_COLUMNS = ("label_source", "question_index")
PairSelection = Literal["first", "all"]


def _solution_fields(obj: dict[str, Any]) -> list[str]:
    """The fields of a record holding a model solution (``{is_correct, solution}``), in order."""
    return [k for k, v in obj.items() if isinstance(v, dict) and "is_correct" in v and "solution" in v]


def _solutions_path(root: str | Path) -> Path:
    """``root`` itself when it is a file, ``root/example_model_solutions.jsonl``, else the one
    JSON Lines file under ``root`` whose records hold a question and model solutions (a clone of
    the repository keeps it in ``grade_school_math/data/``)."""
    root = Path(root)
    if root.is_file():
        return root
    if not root.exists():
        raise InputError("GSM8K folder not found", path=root)
    if (root / SOLUTIONS_FILE).is_file():
        return root / SOLUTIONS_FILE
    found = []
    for f in files_under(root, (".jsonl",)):
        rec = first_record(f)
        if rec is not None and "question" in rec and _solution_fields(rec):
            found.append(f)
    if len(found) > 1:
        raise InputError(f"several GSM8K solution files: {', '.join(map(str, found))}; give one", path=root)
    if not found:
        raise layout_error(f"no GSM8K solution file ({SOLUTIONS_FILE}: JSON Lines with a question and "
                           "model solutions {is_correct, solution}) under this folder", root)
    return found[0]


def read_solutions(root: str | Path) -> list[tuple[int, str, dict[str, tuple[bool, str]]]]:
    """``(line, question, condition → (is_correct, solution))`` per question of the solution file under
    ``root`` (or ``root`` itself), in file order, validated. The conditions are the first record's solution
    fields (``CONDITIONS`` in OpenAI's file), in its order; every record must carry them all. A record without
    its question or a solution field, or with ``is_correct`` not a boolean, is an ``InputError`` naming its
    line and field; so is a file with no record. Read by the item and pair tables here, the loop's GSM8K task
    and ``judgeaudit check``."""
    path = _solutions_path(root)
    out = []
    conditions: list[str] | None = None
    for line, obj in iter_jsonl(path):
        require(obj, "question", path, line)
        if conditions is None:
            conditions = _solution_fields(obj)
            if not conditions:
                raise InputError("no model solution fields (objects {is_correct, solution}) in the first record",
                                 path=path, line=line)
        sols: dict[str, tuple[bool, str]] = {}
        for c in conditions:
            s = require(obj, c, path, line)
            if not isinstance(s, dict) or "solution" not in s or "is_correct" not in s:
                raise InputError("must be an object {is_correct, solution}", path=path, line=line, field=c)
            if not isinstance(s["is_correct"], bool):
                raise InputError(f"is_correct must be true or false, got {s['is_correct']!r}", path=path,
                                 line=line, field=f"{c}.is_correct")
            sols[c] = (s["is_correct"], str(s["solution"]))
        out.append((line, str(obj["question"]), sols))
    if not out:
        raise InputError("no solutions found", path=path)
    return out


def read_answer_keys(path: str | Path) -> list[tuple[int, str, Any]]:
    """The answer keys of a GSM8K ``test.jsonl``: (line, question, the key of its ``answer``), in file
    order; ``InputError`` naming the line of a record without a question or answer, or with an answer
    that has no key."""
    from judgeaudit.checkers.gsm8k import answer_key

    out = []
    for line, obj in iter_jsonl(path):
        q, a = require(obj, "question", path, line), require(obj, "answer", path, line)
        try:
            out.append((line, str(q), answer_key(str(a))))
        except InputError as e:
            raise InputError(e.message, path=path, line=line, field="answer") from None
    if not out:
        raise InputError("no questions found", path=path)
    return out


def load_items(root: str | Path) -> pd.DataFrame:
    """Item table: one row per (question, condition) solution, labelled ``correct`` /
    ``incorrect`` against the ground truth; ``group`` is the question, ``condition`` the GPT-3
    condition that produced the solution.

    Args:
        root: the GSM8K folder (holding ``example_model_solutions.jsonl``) or that file.
    """
    rows = []
    for line, q, sols in read_solutions(root):
        for c, (ok, text) in sols.items():
            rows.append({"item_id": f"gsm8k/{line}/{c}", "text": text, "label": "correct" if ok else "incorrect",
                         "group": q, "condition": c, "prompt": q, "label_source": LABEL_SOURCE,
                         "question_index": line})
    return pd.DataFrame(rows)


def correct_side(question: str) -> str:
    """The side ('A' or 'B') the correct solution occupies for ``question`` (a stable hash)."""
    return hash_side(question)


def mixed_pairs(sols: dict[str, tuple[bool, str]], pairs: PairSelection = "first") -> list[tuple[str, str]]:
    """``(correct condition, incorrect condition)`` pairs of one question: the first pair
    ``(c_i, c_j)``, i<j in the order of ``sols`` (the file's order), whose correctness differs
    (``first``), or every correct × incorrect combination in that order (``all``)."""
    conds = list(sols)
    if pairs == "first":
        for i, ci in enumerate(conds):
            for cj in conds[i + 1:]:
                if sols[ci][0] != sols[cj][0]:
                    return [(ci, cj) if sols[ci][0] else (cj, ci)]
        return []
    good = [c for c in conds if sols[c][0]]
    bad = [c for c in conds if not sols[c][0]]
    return [(g, b) for g in good for b in bad]


def load_pairs(root: str | Path, *, pairs: PairSelection | str = "first") -> pd.DataFrame:
    """Paired table: per question, a correct and an incorrect solution; ``label`` names the side
    holding the correct one (fixed by :func:`correct_side`).

    Args:
        root: the GSM8K folder or ``example_model_solutions.jsonl``.
        pairs: ``first`` (one pair per question with mixed correctness, the first in condition
            order) or ``all`` (every correct × incorrect combination; one group per question).
    """
    if pairs not in ("first", "all"):
        raise InputError(f"pairs must be first or all, got {pairs!r}", field="pairs")
    rows: list[dict[str, Any]] = []
    for line, q, sols in read_solutions(root):
        side = correct_side(q)
        for good, bad in mixed_pairs(sols, pairs):  # type: ignore[arg-type]
            a, b = (good, bad) if side == "A" else (bad, good)
            rows.append({"pair_id": f"gsm8k/{line}/{good}>{bad}", "prompt": q,
                         "response_a": sols[a][1], "response_b": sols[b][1], "label": side, "group": q,
                         "source_set": SOURCE_SET, "subset": pairs, "condition_a": a, "condition_b": b,
                         "meta": {"line": line, "correct": good, "incorrect": bad},
                         "label_source": LABEL_SOURCE, "question_index": line})
    return finish_pairs(rows, EXTRA_COLUMNS, Path(root))

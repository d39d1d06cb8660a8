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
  correct; by default the first such pair in condition order (``CONDITIONS`` order, i<j), or
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

from judgeaudit.datasets._common import finish_pairs, hash_side, require
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl

SOURCE_SET = "gsm8k"
SOLUTIONS_FILE = "example_model_solutions.jsonl"
CONDITIONS: tuple[str, ...] = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
"""The four GPT-3 conditions, in the order pairs are chosen."""
LABEL_SOURCE = "model_correctness"
"""Label provenance: the solution's final answer checked against the ground truth (objective)."""
EXTRA_COLUMNS = ("label_source", "question_index")
PairSelection = Literal["first", "all"]


def _solutions_path(root: str | Path) -> Path:
    root = Path(root)
    if root.is_file():
        return root
    if not root.exists():
        raise InputError("GSM8K folder not found", path=root)
    path = root / SOLUTIONS_FILE
    if not path.is_file():
        raise InputError(f"GSM8K {SOLUTIONS_FILE} not found", path=root)
    return path


def _read(root: str | Path) -> list[tuple[int, str, dict[str, tuple[bool, str]]]]:
    """``(line, question, condition → (is_correct, solution))`` per question, validated."""
    path = _solutions_path(root)
    out = []
    for line, obj in iter_jsonl(path):
        require(obj, "question", path, line)
        sols: dict[str, tuple[bool, str]] = {}
        for c in CONDITIONS:
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


def load_items(root: str | Path) -> pd.DataFrame:
    """Item table: one row per (question, condition) solution, labelled ``correct`` /
    ``incorrect`` against the ground truth; ``group`` is the question, ``condition`` the GPT-3
    condition that produced the solution.

    Args:
        root: the GSM8K folder (holding ``example_model_solutions.jsonl``) or that file.
    """
    rows = []
    for line, q, sols in _read(root):
        for c in CONDITIONS:
            ok, text = sols[c]
            rows.append({"item_id": f"gsm8k/{line}/{c}", "text": text, "label": "correct" if ok else "incorrect",
                         "group": q, "condition": c, "prompt": q, "label_source": LABEL_SOURCE,
                         "question_index": line})
    return pd.DataFrame(rows)


def correct_side(question: str) -> str:
    """The side ('A' or 'B') the correct solution occupies for ``question`` (a stable hash)."""
    return hash_side(question)


def mixed_pairs(sols: dict[str, tuple[bool, str]], pairs: PairSelection = "first") -> list[tuple[str, str]]:
    """``(correct condition, incorrect condition)`` pairs of one question: the first pair
    ``(CONDITIONS[i], CONDITIONS[j])``, i<j, whose correctness differs (``first``), or every
    correct × incorrect combination in condition order (``all``)."""
    if pairs == "first":
        for i, ci in enumerate(CONDITIONS):
            for cj in CONDITIONS[i + 1:]:
                if sols[ci][0] != sols[cj][0]:
                    return [(ci, cj) if sols[ci][0] else (cj, ci)]
        return []
    good = [c for c in CONDITIONS if sols[c][0]]
    bad = [c for c in CONDITIONS if not sols[c][0]]
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
    for line, q, sols in _read(root):
        side = correct_side(q)
        for good, bad in mixed_pairs(sols, pairs):  # type: ignore[arg-type]
            a, b = (good, bad) if side == "A" else (bad, good)
            rows.append({"pair_id": f"gsm8k/{line}/{good}>{bad}", "prompt": q,
                         "response_a": sols[a][1], "response_b": sols[b][1], "label": side, "group": q,
                         "source_set": SOURCE_SET, "subset": pairs, "condition_a": a, "condition_b": b,
                         "meta": {"line": line, "correct": good, "incorrect": bad},
                         "label_source": LABEL_SOURCE, "question_index": line})
    return finish_pairs(rows, EXTRA_COLUMNS, Path(root))

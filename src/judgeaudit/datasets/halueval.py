"""HaluEval adapter (RUCAIBox/HaluEval): the human-labelled general set (per-item) and the QA
generation files, a provenance-inherited paired set (construct-validity.txt Def. 5, §5.4's last
row of Table 7).

Quirks handled here:

* Every file is JSON Lines despite the ``.json`` extension.
* ``general_data.json``: the label key is ``hallucination`` (``yes``/``no``; the README says
  ``hallucination_label``); one ChatGPT response per query, one human label per response. Item
  labels are ``hallucinated`` / ``not_hallucinated``; the group key is the user query.
* ``generation/qa/qa_{one-turn,multi-turn}_data.json``: per HotpotQA question the gold answer
  (``right_answer``) and a ChatGPT-generated wrong answer (``hallucinated_answer``). The label
  of a pair is a function of how each answer was produced, i.e. provenance-inherited: the right
  answer is preferred. ``condition_a``/``condition_b`` record the generative condition
  (``hotpotqa_gold`` or ``chatgpt_<strategy>``); the side holding the gold answer is fixed by a
  hash of the question (the audit randomises sides again with its own seed). The evidence
  (``knowledge``) is kept in ``meta`` and never reaches a surface predictor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgeaudit.datasets._common import hash_side, require
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.records import PAIRWISE_COLUMNS

STRATEGIES = ("one-turn", "multi-turn")
Strategy = Literal["one-turn", "multi-turn", "both"]


def _root(root: str | Path) -> Path:
    root = Path(root)
    if not root.exists():
        raise InputError("HaluEval folder not found", path=root)
    return root


def load_items(root: str | Path) -> pd.DataFrame:
    """The general set (``data/general_data.json``) as an item table: one ChatGPT response per
    query, labelled ``hallucinated``/``not_hallucinated`` by a human annotator."""
    path = _root(root) / "data" / "general_data.json"
    if not path.is_file():
        raise InputError("HaluEval data/general_data.json not found", path=Path(root))
    rows = []
    for line, obj in iter_jsonl(path):
        for key in ("ID", "user_query", "chatgpt_response", "hallucination"):
            require(obj, key, path, line)
        lab = str(obj["hallucination"]).strip().lower()
        if lab not in ("yes", "no"):
            raise InputError(f"hallucination must be yes or no, got {obj['hallucination']!r}", path=path,
                             line=line, field="hallucination")
        rows.append({"item_id": f"halueval/general/{obj['ID']}", "text": str(obj["chatgpt_response"]),
                     "label": "hallucinated" if lab == "yes" else "not_hallucinated",
                     "group": str(obj["user_query"]), "condition": "chatgpt",
                     "prompt": str(obj["user_query"]), "label_source": "human_label"})
    return pd.DataFrame(rows)


def gold_side(question: str) -> str:
    """The side ('A' or 'B') the gold answer occupies for ``question`` (a stable hash)."""
    return hash_side(question)


def load_pairs(root: str | Path, *, strategy: Strategy = "one-turn") -> pd.DataFrame:
    """The QA generation files as a paired table (gold vs. generated hallucinated answer).

    Args:
        root: the HaluEval folder (holding ``generation/qa/``).
        strategy: ``one-turn``, ``multi-turn`` or ``both`` (both: two pairs per question, one
            group).
    """
    root = _root(root)
    strategies = STRATEGIES if strategy == "both" else (strategy,)
    if any(s not in STRATEGIES for s in strategies):
        raise InputError(f"strategy must be one-turn, multi-turn or both, got {strategy!r}", field="strategy")
    rows: list[dict[str, Any]] = []
    for s in strategies:
        path = root / "generation" / "qa" / f"qa_{s}_data.json"
        if not path.is_file():
            raise InputError(f"HaluEval generation file qa_{s}_data.json not found", path=root)
        for line, obj in iter_jsonl(path):
            for key in ("question", "right_answer", "hallucinated_answer"):
                require(obj, key, path, line)
            q = str(obj["question"])
            side = gold_side(q)
            gold, fake = str(obj["right_answer"]), str(obj["hallucinated_answer"])
            cg, cf = "hotpotqa_gold", f"chatgpt_{s}"
            a, b, ca, cb = (gold, fake, cg, cf) if side == "A" else (fake, gold, cf, cg)
            rows.append({"pair_id": f"halueval/qa/{s}/{line}", "prompt": q, "response_a": a, "response_b": b,
                         "label": side, "group": q, "source_set": "halueval_qa", "subset": s,
                         "condition_a": ca, "condition_b": cb,
                         "meta": {"line": line, "knowledge": obj.get("knowledge")},
                         "label_source": "provenance"})
    return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS) + ["label_source"])

"""HaluEval adapter (RUCAIBox/HaluEval): the human-labelled general set (per-item) and the QA
generation files, a provenance-inherited paired set (construct-validity.txt Def. 5, §5.4's last
row of Table 7).

Quirks handled here:

* Every file is JSON Lines despite the ``.json`` extension. Files are recognised by their
  records' fields, not their names or places: the general set, and per paired task (``PARTS``:
  qa, dialogue, summarization) the generation files of each strategy and the final file.
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

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgeaudit.datasets._common import files_under, first_record, hash_side, layout_error, require
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.records import PAIRWISE_COLUMNS

STRATEGIES = ("one-turn", "multi-turn")
"""The generation strategies of the paper, in the order files are read (with ``final`` after them,
then any other strategy found); strategies themselves are found from the file names."""
Strategy = Literal["one-turn", "multi-turn", "both"]


@dataclass(frozen=True)
class Part:
    """One paired HaluEval task: the fields of its records and the gold answers' origin."""

    name: str
    prompt: str
    right: str
    hallucinated: str
    gold_source: str


#: The paired tasks, recognised by their records' fields (whatever the file is called).
PARTS: dict[str, Part] = {p.name: p for p in (
    Part("qa", "question", "right_answer", "hallucinated_answer", "hotpotqa"),
    Part("dialogue", "dialogue_history", "right_response", "hallucinated_response", "opendialkg"),
    Part("summarization", "document", "right_summary", "hallucinated_summary", "cnndm"),
)}
GENERAL_FIELDS = ("ID", "user_query", "chatgpt_response", "hallucination")
FINAL = "final"
"""Strategy name of a task's final file (``data/qa_data.json``), which picks one generated answer
per item; the generation files' strategies come from their names (``qa_one-turn_data.json``)."""


def _root(root: str | Path) -> Path:
    root = Path(root)
    if not root.exists():
        raise InputError("HaluEval folder not found", path=root)
    return root


def _files(root: Path) -> list[Path]:
    return files_under(root, (".json", ".jsonl"))


def _has(rec: dict[str, Any] | None, keys: tuple[str, ...]) -> bool:
    return rec is not None and all(k in rec for k in keys)


def general_files(root: str | Path) -> list[Path]:
    """Every file of the general set's schema under ``root`` (any name): JSON Lines records with
    ``ID``, ``user_query``, ``chatgpt_response``, ``hallucination``."""
    return [f for f in _files(_root(root)) if _has(first_record(f), GENERAL_FIELDS)]


def _strategy(path: Path, part: Part) -> str:
    s = path.stem.removeprefix(f"{part.name}_").removesuffix("_data")
    return FINAL if s in ("", part.name, "data") else s


def pair_files(root: str | Path, part: str = "qa") -> dict[str, Path]:
    """strategy -> file, for every file of ``part``'s schema under ``root`` (any depth, any name):
    ``one-turn``/``multi-turn`` (``generation/qa/qa_<strategy>_data.json``) and ``final``
    (``data/qa_data.json``)."""
    if part not in PARTS:
        raise InputError(f"HaluEval part must be one of {', '.join(PARTS)}, got {part!r}", field="part")
    p = PARTS[part]
    out: dict[str, Path] = {}
    for f in _files(_root(root)):
        if _has(first_record(f), (p.prompt, p.right, p.hallucinated)):
            s = _strategy(f, p)
            if s in out:
                raise InputError(f"two HaluEval {part} files for strategy {s!r}: {out[s]}", path=f)
            out[s] = f
    order = [*STRATEGIES, FINAL]
    return dict(sorted(out.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])))


def load_items(root: str | Path) -> pd.DataFrame:
    """The general set (``data/general_data.json``, or any file of its schema under ``root``, or
    the file itself) as an item table: one ChatGPT response per query, labelled
    ``hallucinated``/``not_hallucinated`` by a human annotator."""
    files = general_files(root)
    if not files:
        raise layout_error("no HaluEval general file (JSON Lines with " + ", ".join(GENERAL_FIELDS)
                           + ") under this path", Path(root))
    if len(files) > 1:
        raise InputError(f"several HaluEval general files: {', '.join(map(str, files))}; give one", path=root)
    path = files[0]
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


def load_pairs(root: str | Path, *, strategy: Strategy | str = "one-turn", part: str = "qa") -> pd.DataFrame:
    """A paired task's files as a paired table (gold vs. generated hallucinated answer).

    Args:
        root: the HaluEval folder, any folder below it, or one file: the files of ``part`` are
            found by their fields, whatever their names (:func:`pair_files`).
        strategy: a strategy found (``one-turn``, ``multi-turn``, ``final``), or ``both`` /
            ``all``: every strategy found (one group per question across strategies).
        part: ``qa`` (default), ``dialogue`` or ``summarization``.
    """
    files = pair_files(root, part)
    p = PARTS[part]
    if not files:
        raise layout_error(f"no HaluEval {part} file (JSON Lines with {p.prompt}, {p.right}, "
                           f"{p.hallucinated}) under this path", Path(root))
    chosen = list(files) if strategy in ("both", "all") else [strategy]
    missing = [s for s in chosen if s not in files]
    if missing:
        raise InputError(f"HaluEval {part} strategy {missing[0]!r} not found; found: {', '.join(files)}",
                         path=root, field="strategy")
    rows: list[dict[str, Any]] = []
    for s in chosen:
        path = files[s]
        for line, obj in iter_jsonl(path):
            for key in (p.prompt, p.right, p.hallucinated):
                require(obj, key, path, line)
            q = str(obj[p.prompt])
            side = gold_side(q)
            gold, fake = str(obj[p.right]), str(obj[p.hallucinated])
            cg, cf = f"{p.gold_source}_gold", f"chatgpt_{s}"
            a, b, ca, cb = (gold, fake, cg, cf) if side == "A" else (fake, gold, cf, cg)
            rows.append({"pair_id": f"halueval/{part}/{s}/{line}", "prompt": q, "response_a": a, "response_b": b,
                         "label": side, "group": q, "source_set": f"halueval_{part}", "subset": s,
                         "condition_a": ca, "condition_b": cb,
                         "meta": {"line": line, "knowledge": obj.get("knowledge")},
                         "label_source": "provenance"})
    return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS) + ["label_source"])

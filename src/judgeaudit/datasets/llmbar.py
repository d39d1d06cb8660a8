"""LLMBar adapter (princeton-nlp/LLMBar): the Natural and Adversarial instruction-following
sets, the repository's Processed MT-Bench and LLMEval² sets (human majority labels), and the
five evaluators' published outputs in every mode shipped.

Quirks handled here:

* ``label`` is 1 or 2 (which output is better; no ties) and becomes ``'A'`` / ``'B'``
  (``output_1`` is ``response_a``).
* In ``result.json`` the final verdict record is ``results[-1]`` (mode ``Swap`` adds a second,
  synthesised round when the first two orders disagree). ``"swap = False"`` showed output_1
  first, ``"swap = True"`` output_2 first, and **both** ``winner`` values are already mapped back
  to the original numbering; no flip is applied here. A null winner is a parse failure.
* Each set becomes its own benchmark (``source_set``): ``llmbar`` (Natural + Adversarial/*),
  ``llmbar_mtbench`` (Processed/MT-Bench) and ``llmbar_llmeval2`` (Processed/LLMEval2).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import (
    UNAVAILABLE,
    CoverageCell,
    family_of,
    finish_pairs,
    read_json_array,
    require,
    two_order_frame,
)
from judgeaudit.errors import InputError

EXTRA_COLUMNS = ("label_source", "human_labels", "base_id")

#: subset name -> (source_set, relative folder under Dataset/)
SETS: dict[str, tuple[str, str]] = {
    "Natural": ("llmbar", "LLMBar/Natural"),
    "Adversarial/Neighbor": ("llmbar", "LLMBar/Adversarial/Neighbor"),
    "Adversarial/GPTInst": ("llmbar", "LLMBar/Adversarial/GPTInst"),
    "Adversarial/GPTOut": ("llmbar", "LLMBar/Adversarial/GPTOut"),
    "Adversarial/Manual": ("llmbar", "LLMBar/Adversarial/Manual"),
    "MT-Bench": ("llmbar_mtbench", "Processed/MT-Bench"),
    "LLMEval2": ("llmbar_llmeval2", "Processed/LLMEval2"),
}
ADVERSARIAL = ("Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut", "Adversarial/Manual")

#: Labels are author gold labels on LLMBar, not objective task correctness, and pairs do not share
#: a source model: augmentation is not admissible (§3.2); C5 is measured by the native subsets.
AUGMENTATION_ADMISSIBLE = False

#: Coverage declaration per source_set (Table 2 column "LLMBar", operators from Appendix D).
COVERAGE: dict[str, dict[str, CoverageCell]] = {
    "llmbar": {
        "C1": UNAVAILABLE, "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
        "C5": CoverageCell("direct", "Natural vs. adversarial-surface subsets (GPTInst, GPTOut, Manual, "
                           "Neighbor): BC on adversarial-surface items, Natural BC beside", ADVERSARIAL),
        "C6": UNAVAILABLE,
        "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC"),
        "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
    },
    "llmbar_mtbench": {
        "C1": UNAVAILABLE, "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
        "C5": UNAVAILABLE, "C6": UNAVAILABLE,
        "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC (human majority labels)"),
        "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
    },
    "llmbar_llmeval2": {
        "C1": UNAVAILABLE, "C2": UNAVAILABLE, "C3": UNAVAILABLE, "C4": UNAVAILABLE,
        "C5": UNAVAILABLE, "C6": UNAVAILABLE,
        "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC (human majority labels)"),
        "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
    },
}

_LABEL = {1: "A", 2: "B", "1": "A", "2": "B"}


def _dataset_root(root: Path) -> Path:
    return root / "Dataset" if (root / "Dataset").is_dir() else root


def _available(root: Path, sets: list[str] | None) -> list[str]:
    base = _dataset_root(root)
    names = list(SETS) if sets is None else sets
    for s in names:
        if s not in SETS:
            raise InputError(f"unknown LLMBar set {s!r}; known: {', '.join(SETS)}", field="sets")
    found = [s for s in names if (base / SETS[s][1] / "dataset.json").is_file()]
    if not found:
        raise InputError("no LLMBar dataset.json found (expected Dataset/LLMBar/Natural/dataset.json ...)",
                         path=root)
    if sets is not None and len(found) < len(names):
        missing = sorted(set(names) - set(found))
        raise InputError(f"LLMBar set(s) not found: {', '.join(missing)}", path=root)
    return found


def pair_id(subset: str, index: int) -> str:
    """Stable id of the ``index``-th pair (0-based) of an LLMBar ``subset``."""
    return f"llmbar/{subset}/{index}"


def load_pairs(root: str | Path, *, sets: list[str] | None = None) -> pd.DataFrame:
    """Load LLMBar (and its Processed MT-Bench / LLMEval² sets) as a pairwise table.

    Args:
        root: the folder holding ``Dataset/`` (or ``Dataset`` itself).
        sets: subset names from ``SETS`` (default: every one present).

    The Processed sets carry human majority labels (the repository keeps no per-annotator
    labels): ``label_source`` says ``human_majority`` there and ``author_gold`` on LLMBar, and
    ``human_labels`` holds the list of labels available per pair.
    """
    root = Path(root)
    base = _dataset_root(root)
    rows: list[dict[str, Any]] = []
    for subset in _available(root, sets):
        source_set, rel = SETS[subset]
        path = base / rel / "dataset.json"
        for i, obj in enumerate(read_json_array(path)):
            label = require(obj, "label", path, None)
            if label not in _LABEL:
                raise InputError(f"item {i}: label must be 1 or 2, got {label!r}", path=path, field="label")
            human = source_set != "llmbar"
            pid = pair_id(subset, i)
            rows.append({
                "pair_id": pid,
                "prompt": str(require(obj, "input", path, None)),
                "response_a": str(require(obj, "output_1", path, None)),
                "response_b": str(require(obj, "output_2", path, None)),
                "label": _LABEL[label],
                "group": str(obj["input"]),
                "source_set": source_set,
                "subset": subset,
                "condition_a": None,
                "condition_b": None,
                "meta": {"index": i, "file": str(Path(rel) / "dataset.json")},
                "label_source": "human_majority" if human else "author_gold",
                "human_labels": [_LABEL[label]] if human else None,
                "base_id": pid,
            })
    return finish_pairs(rows, EXTRA_COLUMNS, root)


def result_files(root: str | Path) -> dict[tuple[str, str], Path]:
    """(subset, ``Evaluator/Mode``) -> result.json, for every evaluator output shipped."""
    base = _dataset_root(Path(root))
    out = {}
    for subset, (_, rel) in SETS.items():
        ev = base / rel / "evaluators"
        for f in sorted(ev.glob("*/*/result.json")):
            out[(subset, f"{f.parent.parent.name}/{f.parent.name}")] = f
    return out


def _winner(side: Any) -> tuple[str | None, str | None, str | None]:
    if not isinstance(side, dict):
        return None, None, "api"
    w = side.get("winner")
    comp = side.get("completion")
    text = comp[0] if isinstance(comp, list) and comp else (comp if isinstance(comp, str) else None)
    if w in _LABEL:
        return _LABEL[w], text, None
    return None, text, "parse"


def load_result(path: str | Path, subset: str, judge_id: str) -> pd.DataFrame:
    """One ``result.json`` as a two-order table (final verdict record ``results[-1]``)."""
    path = Path(path)
    evaluator = judge_id.split("/")[0]
    rows = []
    for i, obj in enumerate(read_json_array(path)):
        res = require(obj, "results", path, None)
        if not isinstance(res, list) or not res:
            raise InputError(f"item {i}: results must be a non-empty list", path=path, field="results")
        final = res[-1]
        c_ab, r_ab, f_ab = _winner(final.get("swap = False"))
        c_ba, r_ba, f_ba = _winner(final.get("swap = True"))
        rows.append({
            "pair_id": pair_id(subset, i), "judge_id": judge_id, "family": family_of(evaluator),
            "choice_ab": c_ab, "choice_ba": c_ba, "rationale_ab": r_ab, "rationale_ba": r_ba,
            "failure_ab": f_ab, "failure_ba": f_ba, "model": evaluator,
        })
    return two_order_frame(rows)


def published_judges(root: str | Path) -> dict[str, pd.DataFrame]:
    """Every evaluator/mode shipped, as one replay judge (``GPT-4/Vanilla_NoRules``) whose table
    spans all sets it was run on."""
    parts: dict[str, list[pd.DataFrame]] = {}
    for (subset, jid), f in result_files(root).items():
        parts.setdefault(jid, []).append(load_result(f, subset, jid))
    return {jid: pd.concat(frames, ignore_index=True) for jid, frames in sorted(parts.items())}


_FRAC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)")


def published_statistics(path: str | Path) -> dict[str, tuple[int, int]]:
    """The ``k / n`` counts of a ``statistics.json`` (correct_False, correct_True, correct_both,
    equal)."""
    st = json.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for key in ("correct_False", "correct_True", "correct_both", "equal"):
        m = _FRAC.match(str(st.get(key, "")))
        if m:
            out[key] = (int(m[1]), int(m[2]))
    return out


def llmbar_statistics(table: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """LLMBar's own per-file statistics from a two-order table: per-order accuracy
    (``correct_False``/``correct_True``, a null winner counts as wrong), both-correct
    (``correct_both``) and positional agreement (``equal``, the two winners identical, a pair of
    nulls included), each as ``(k, n)``."""
    df = table.merge(pairs[["pair_id", "label"]], on="pair_id", how="inner")
    n = len(df)
    ab = df["choice_ab"] == df["label"]
    ba = df["choice_ba"] == df["label"]
    same = (df["choice_ab"] == df["choice_ba"]) | (df["choice_ab"].isna() & df["choice_ba"].isna())
    return {"correct_False": (int(ab.sum()), n), "correct_True": (int(ba.sum()), n),
            "correct_both": (int((ab & ba).sum()), n), "equal": (int(same.sum()), n)}

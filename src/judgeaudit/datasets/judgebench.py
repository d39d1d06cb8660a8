"""JudgeBench adapter (ScalerLab/JudgeBench): objectively labelled response pairs and the
official judges' two-order outputs.

Quirks handled here:

* ``label`` is ``"A>B"`` / ``"B>A"`` (no ties) and becomes ``'A'`` / ``'B'``.
* Each output file's ``judgments`` holds two games: ``[0]`` on (response_A, response_B) as
  given, ``[1]`` with the responses **swapped**; the decision of ``[1]`` is in the swapped frame
  and is flipped back here (``A>B`` <-> ``B>A``), as the repository's ``utils/metrics.py`` does.
* ``A=B`` is a tie; ``null`` decisions, the malformed ``"A>A"``/``"B>B"`` and a ``null`` game
  (failed call) are failures, never dropped silently.
* Both responses of a pair come from one source model (``response_model``), so controlled
  style/length augmentation is admissible (conditional-accuracy-profiles.txt §3.2, §3.3).

Categories follow the JudgeBench paper: Knowledge (MMLU-Pro), Reasoning (LiveBench
reasoning), Math (LiveBench math), Coding (LiveCodeBench).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import (
    SWAPPED_CHOICE,
    UNAVAILABLE,
    CoverageCell,
    family_of,
    files_under,
    finish_pairs,
    first_record,
    layout_error,
    require,
    two_order_frame,
)
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl

SOURCE_SET = "judgebench"
EXTRA_COLUMNS = ("category", "source", "response_model", "base_id")

#: Pairs share a source model and labels are objective: augmentation is admissible (§3.3).
AUGMENTATION_ADMISSIBLE = True

#: Coverage declaration (Table 2 column "JudgeBench", operators from Appendix D).
COVERAGE: dict[str, CoverageCell] = {
    "C1": CoverageCell("approx", "Knowledge subset (MMLU-Pro); PA", ("knowledge",)),
    "C2": CoverageCell("approx", "Reasoning subset (LiveBench reasoning); PA", ("reasoning",)),
    "C3": UNAVAILABLE,
    "C4": UNAVAILABLE,
    "C5": CoverageCell("augmented", "polished rewrite of both responses by a generator; BC vs. original",
                       variants=("original", "polished")),
    "C6": CoverageCell("augmented", "~1.5x pad of the rejected response by a generator; BC vs. original",
                       variants=("original", "padded")),
    "C7": CoverageCell("direct", "A/B and B/A orderings of every pair; BC"),
    "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form B (external)"),
}

_LABELS = {"A>B": "A", "B>A": "B"}
_DECISIONS = {"A>B": "A", "B>A": "B", "A=B": "tie"}


def category_of(source: str) -> str:
    """JudgeBench category of a ``source`` value (knowledge/reasoning/math/coding)."""
    if source.startswith("mmlu-pro"):
        return "knowledge"
    if source == "livebench-reasoning":
        return "reasoning"
    if source == "livebench-math":
        return "math"
    if source == "livecodebench":
        return "coding"
    return "other"


#: Fields every JudgeBench pair record carries; an output file's records add ``judgments``.
PAIR_FIELDS = ("pair_id", "question", "response_A", "response_B", "label")


def _jsonl_files(root: Path) -> list[Path]:
    if not root.exists():
        raise InputError("JudgeBench folder not found", path=root)
    return files_under(root, (".jsonl",))


def _is_output(rec: dict[str, Any] | None) -> bool:
    return rec is not None and "judgments" in rec


def _is_pairs(rec: dict[str, Any] | None) -> bool:
    return rec is not None and "judgments" not in rec and all(k in rec for k in PAIR_FIELDS)


def _data_files(root: Path) -> list[Path]:
    """Every JSON Lines file of pairs under ``root`` (any name, any depth; recognised by its
    first record's fields), or ``root`` itself when it is such a file."""
    files = [f for f in _jsonl_files(root) if _is_pairs(first_record(f))]
    if not files:
        raise layout_error("no JudgeBench pair file (JSON Lines records with " + ", ".join(PAIR_FIELDS)
                           + ") under this path", root)
    return files


def is_judgebench(root: str | Path) -> bool:
    """Whether ``root`` holds JudgeBench pair or output files (recognised by their fields)."""
    root = Path(root)
    if not root.exists():
        return False
    return any(_is_output(r) or _is_pairs(r) for r in map(first_record, _jsonl_files(root)))


def _pair_row(obj: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    label = require(obj, "label", path, line)
    if label not in _LABELS:
        raise InputError(f"label must be 'A>B' or 'B>A', got {label!r}", path=path, line=line,
                         field="label")
    source = str(require(obj, "source", path, line))
    model = str(require(obj, "response_model", path, line))
    pid = str(require(obj, "pair_id", path, line))
    return {
        "pair_id": pid,
        "prompt": str(require(obj, "question", path, line)),
        "response_a": str(require(obj, "response_A", path, line)),
        "response_b": str(require(obj, "response_B", path, line)),
        "label": _LABELS[label],
        "group": str(obj["question"]),
        "source_set": SOURCE_SET,
        "subset": category_of(source),
        "condition_a": model,
        "condition_b": model,
        "meta": {"original_id": obj.get("original_id"), "source": source, "response_model": model},
        "category": category_of(source),
        "source": source,
        "response_model": model,
        "base_id": pid,
    }


def load_pairs(root: str | Path, *, response_model: str | None = None) -> pd.DataFrame:
    """Load JudgeBench pairs as a pairwise table (``PAIRWISE_COLUMNS`` + ``EXTRA_COLUMNS``).

    Args:
        root: the repository root, its ``data/`` folder, or one pair file: every JSON Lines
            file of pairs found (whatever its name) is read; output files (records with
            ``judgments``) are not pairs.
        response_model: keep only pairs whose responses came from this model
            (``gpt-4o-2024-05-13`` or ``claude-3-5-sonnet-20240620``); None keeps all.
    """
    root = Path(root)
    rows = []
    models: set[str] = set()
    for f in _data_files(root):
        for n, obj in iter_jsonl(f):
            row = _pair_row(obj, f, n)
            models.add(row["response_model"])
            if response_model is None or row["response_model"] == response_model:
                rows.append(row)
    if not rows and response_model is not None:
        raise InputError(f"no pairs with response_model {response_model!r}; found: {', '.join(sorted(models))}",
                         path=root, field="response_model")
    return finish_pairs(rows, EXTRA_COLUMNS, root)


_NAME = re.compile(r"dataset=judgebench,response_model=(?P<rm>[^,]+),judge_name=(?P<jn>[^,]+),"
                   r"judge_model=(?P<jm>.+)\.jsonl$")


def _judge_of(path: Path, rec: dict[str, Any]) -> tuple[str, str, str]:
    """(judge id, judge model, response model) of an output file: from the repository's file
    name (``…response_model=R,judge_name=N,judge_model=M.jsonl``), else from the record's
    ``judge_name``/``judge_model`` fields, else the file name."""
    m = _NAME.search(path.name)
    if m:
        return f"{m['jn']}/{m['jm']}", m["jm"], m["rm"]
    model = str(rec.get("judge_model") or path.stem)
    name = rec.get("judge_name")
    jid = f"{name}/{model}" if name and rec.get("judge_model") else (f"{name}/{path.stem}" if name else path.stem)
    return jid, model, str(rec.get("response_model", ""))


def output_files(root: str | Path) -> dict[str, Path]:
    """Judge id (``judge_name/judge_model``, plus ``@response_model`` when one judge has outputs
    for several response models) -> output file, for every output file found under ``root``
    (any name, any depth: JSON Lines records carrying ``judgments``)."""
    root = Path(root)
    found: list[tuple[str, str, Path]] = []
    if not root.exists():
        return {}
    for f in _jsonl_files(root):
        rec = first_record(f)
        if _is_output(rec):
            jid, _, rm = _judge_of(f, rec)  # type: ignore[arg-type]
            found.append((jid, rm, f))
    out: dict[str, Path] = {}
    counts: dict[str, int] = {}
    for jid, _, _ in found:
        counts[jid] = counts.get(jid, 0) + 1
    for jid, rm, f in found:
        out[jid if counts[jid] == 1 else f"{jid}@{rm}"] = f
    return out


def _decision(game: Any, path: Path, line: int) -> tuple[str | None, str | None, str | None]:
    """(choice in the game's own frame, rationale, failure kind) of one game entry."""
    if game is None:
        return None, None, "api"
    if not isinstance(game, dict):
        raise InputError("each judgments entry must be an object or null", path=path, line=line,
                         field="judgments")
    dec = game.get("decision")
    judgment = game.get("judgment") or {}
    rationale = judgment.get("response") or None
    if dec in _DECISIONS:
        return _DECISIONS[dec], rationale, None
    return None, rationale, "parse"


def raw_outputs(path: str | Path) -> list[dict[str, Any]]:
    """The output file's records as they are (for the repository's own scoring rule)."""
    return [obj for _, obj in iter_jsonl(path)]


def load_judge_outputs(path: str | Path, judge_id: str | None = None) -> pd.DataFrame:
    """One output file as a two-order table (``TWO_ORDER_COLUMNS``), game 2 flipped back to the
    original frame."""
    path = Path(path)
    own_id, model, _ = _judge_of(path, first_record(path) or {})
    judge_id = judge_id or own_id
    rows = []
    for n, obj in iter_jsonl(path):
        games = require(obj, "judgments", path, n)
        if not isinstance(games, list) or len(games) != 2:
            raise InputError("judgments must be a list of two games", path=path, line=n,
                             field="judgments")
        c_ab, r_ab, f_ab = _decision(games[0], path, n)
        c_sw, r_ba, f_ba = _decision(games[1], path, n)
        rows.append({
            "pair_id": str(require(obj, "pair_id", path, n)),
            "judge_id": judge_id,
            "family": family_of(model),
            "model": model,
            "choice_ab": c_ab,
            "choice_ba": SWAPPED_CHOICE[c_sw] if c_sw is not None else None,
            "rationale_ab": r_ab,
            "rationale_ba": r_ba,
            "failure_ab": f_ab,
            "failure_ba": f_ba,
        })
    return two_order_frame(rows)


def published_judges(root: str | Path) -> dict[str, pd.DataFrame]:
    """Every judge output file found under ``root`` as a replay judge table."""
    return {jid: load_judge_outputs(p, jid) for jid, p in output_files(root).items()}


def _flip_decision(decision: str | None) -> str | None:
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision) if decision is not None else None


def official_score(records: list[dict[str, Any]]) -> float:
    """JudgeBench's own pair-level score (repository ``utils/metrics.py``, reverse order on).

    For each pair, game 2's decision is flipped to the original frame; each of the two decisions
    adds +1 when it equals the label and -1 when it equals the flipped label (ties, nulls and
    malformed decisions add 0); the pair counts as correct when the sum is > 0. The score is
    ``100 * n_correct / n_pairs`` (every pair, including those with null games, in the
    denominator).
    """
    n_correct = 0
    for pair in records:
        label = pair["label"]
        g1, g2 = pair["judgments"]
        d1 = g1["decision"] if g1 is not None else None
        d2 = _flip_decision(g2["decision"] if g2 is not None else None)
        counter = 0
        for d in (d1, d2):
            if d == label:
                counter += 1
            elif d == _flip_decision(label):
                counter -= 1
        n_correct += counter > 0
    return 100.0 * n_correct / len(records) if records else float("nan")


def official_score_from_table(table: pd.DataFrame, pairs: pd.DataFrame) -> float:
    """The same rule computed from a two-order table (original frame) and the pair labels:
    a pair is correct when (#orders choosing the label) - (#orders choosing the other side) > 0."""
    df = table.merge(pairs[["pair_id", "label"]], on="pair_id", how="inner")
    other = df["label"].map({"A": "B", "B": "A"})
    score = ((df["choice_ab"] == df["label"]).astype(int) + (df["choice_ba"] == df["label"]).astype(int)
             - (df["choice_ab"] == other).astype(int) - (df["choice_ba"] == other).astype(int))
    return 100.0 * float((score > 0).mean()) if len(df) else float("nan")

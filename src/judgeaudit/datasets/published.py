"""Published judge outputs shipped with a data set, as replay judges (two-order tables).

``published_judges(root)`` recognises a JudgeBench folder (output files with ``judgments``)
or an LLMBar folder (``<set>/evaluators/<Evaluator>/<Mode>/result.json`` beside every
``dataset.json`` found) and returns
judge id -> per-item table with ``TWO_ORDER_COLUMNS`` (``choice_ba`` in the original frame).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.datasets import judgebench, llmbar
from judgeaudit.datasets._common import TWO_ORDER_COLUMNS

__all__ = ["TWO_ORDER_COLUMNS", "published_judges", "kind_of"]


def kind_of(root: str | Path) -> str | None:
    """'judgebench', 'llmbar' or None, from the folder layout."""
    if judgebench.is_judgebench(root):
        return "judgebench"
    if llmbar.is_llmbar(root):
        return "llmbar"
    return None


def published_judges(root: str | Path) -> dict[str, pd.DataFrame]:
    """Every judge output found with the set at ``root`` (empty dict when none are shipped)."""
    kind = kind_of(root)
    if kind == "judgebench":
        return judgebench.published_judges(root)
    if kind == "llmbar":
        return llmbar.published_judges(root)
    return {}

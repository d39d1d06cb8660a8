"""Coverage (conditional-accuracy-profiles.txt §3.2, Table 2): which rows of a benchmark a declared
coverage cell selects, and the coverage matrix of a set.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgeaudit.analyses.cap.conditions import CONDITION_CODES
from judgeaudit.datasets._common import CoverageCell


def _rows_for(rows: pd.DataFrame, cell: CoverageCell) -> pd.Series:
    m = ~rows["augmented"]
    if cell.subsets is not None:
        m &= rows["subset"].isin(cell.subsets)
    if cell.variants is not None:
        m &= rows["variant"].isin(cell.variants)
    return m


def coverage_rows(set_name: str, cov: dict[str, CoverageCell]) -> list[dict[str, Any]]:
    """The coverage matrix rows of one set: every condition's status and operator (``unavailable``
    where the set declares none)."""
    rows = []
    for code in CONDITION_CODES:
        c = cov.get(code)
        rows.append({"set": set_name, "condition": code, "status": c.status if c else "unavailable",
                     "operator": c.operator if c else ""})
    return rows

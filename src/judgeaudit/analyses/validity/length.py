"""The §5.2 length checks (construct-validity.txt §5.2, Table 6): how much the edits change a text's
length per slot and axis, and whether a judge's grades or its axis gap follow length.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity.design import SLOT_ORDER, _Design
from judgeaudit.analyses.validity.rates import _num
from judgeaudit.probes.taxonomy import AXES


def _median(x: np.ndarray) -> float:
    """``np.median`` of a non-empty array without NaN: the middle order statistic, or the mean of the two
    (their sum halved, as ``np.mean`` takes it), read from one sort."""
    xs = np.sort(x)
    h = len(xs) // 2
    return float(xs[h]) if len(xs) % 2 else float((xs[h - 1] + xs[h]) / 2)


def _length_table(d: _Design) -> dict[str, Any]:
    """Median |Δlength| (fraction of the original's length) per slot and axis over the probes that
    enter the arms (§5.2, Table 6), with the signed median and the share lengthened."""
    measured = d.in_arm & ~np.isnan(d.d_len)

    def summary(m: np.ndarray) -> dict[str, Any]:
        x = d.d_len[m & measured]
        if not len(x):
            return {"n": 0, "median_abs_dlen": None, "median_dlen": None, "share_longer": None}
        return {"n": int(len(x)), "median_abs_dlen": _median(np.abs(x)), "median_dlen": _median(x),
                "share_longer": int(np.count_nonzero(x > 0)) / len(x)}

    code, names = pd.factorize(d.slot)
    of_slot = {s: code == k for k, s in enumerate(names)}
    none = np.zeros(len(code), dtype=bool)
    return {"unit": "characters, as a fraction of the original's length",
            "per_slot": {s: summary(of_slot.get(s, none)) for s in SLOT_ORDER},
            "per_axis": {a: summary(d.axis == a) for a in AXES}}


def length_checks(lengths: np.ndarray, grades: np.ndarray, est: Mapping[str, float],
                  subsets: Mapping[str, np.ndarray], gap_ok: bool) -> dict[str, Any]:
    """One judge's §5.2 length checks from the graded texts' lengths (in characters) and its grades, one entry per
    graded text: the Spearman correlation of grade with length, and the scope − strength gap on lengthening and on
    shortening edits."""
    rho = None
    if len(grades) >= 3:
        from scipy.stats import spearmanr

        x, y = np.column_stack([lengths, grades]).T
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            rho = _num(spearmanr(x, y).statistic)
    return {
        "spearman_grade_length": rho, "n_graded": len(grades), "length_unit": "characters",
        "gap_lengthened": _num(est["scope_longer"] - est["strength_longer"]) if gap_ok else None,
        "n_lengthened": int((subsets["scope_longer"] | subsets["strength_longer"]).sum()),
        "gap_shortened": _num(est["scope_shorter"] - est["strength_shorter"]) if gap_ok else None,
        "n_shortened": int((subsets["scope_shorter"] | subsets["strength_shorter"]).sum()),
    }

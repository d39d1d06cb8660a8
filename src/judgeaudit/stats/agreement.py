"""Agreement statistics (construct-validity.txt Appendix A.3, Appendix C).

Raw pairwise agreement is what the measurability bar is applied to; Fleiss' κ is reported beside
it. A degenerate case (one category only, so chance agreement is 1) is reported as κ = 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import numpy as np


def category_counts(labels: Sequence[Sequence[str]], categories: Sequence[str]) -> np.ndarray:
    """``(n_items, n_categories)`` counts of each category among each item's labels."""
    index = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(labels), len(categories)), dtype=float)
    for r, item in enumerate(labels):
        for lab in item:
            out[r, index[lab]] += 1
    return out


def raw_pairwise_agreement(labels: Sequence[Sequence[str]]) -> float:
    """Share of agreeing annotator pairs, pooled over items (items with < 2 labels are skipped).

    For each item with m labels there are m(m-1)/2 pairs; the statistic is
    (agreeing pairs) / (all pairs), summed over items.
    """
    agree = total = 0
    for item in labels:
        if len(item) < 2:
            continue
        for a, b in combinations(item, 2):
            agree += a == b
            total += 1
    return float(agree / total) if total else float("nan")


def fleiss_kappa(labels: Sequence[Sequence[str]], categories: Sequence[str] | None = None) -> float:
    """Fleiss' κ for items rated by the same number of annotators (0.0 when chance agreement is 1)."""
    labels = [list(x) for x in labels if len(x) >= 2]
    if not labels:
        return float("nan")
    m = {len(x) for x in labels}
    if len(m) != 1:
        raise ValueError("Fleiss' kappa needs the same number of labels on every item")
    categories = list(categories) if categories is not None else sorted({c for x in labels for c in x})
    counts = category_counts(labels, categories)
    n = counts.sum(axis=1)[0]
    p_j = counts.sum(axis=0) / counts.sum()
    p_i = (np.sum(counts * counts, axis=1) - n) / (n * (n - 1))
    p_bar = p_i.mean()
    p_e = float(np.sum(p_j**2))
    if np.isclose(p_e, 1.0):
        return 0.0
    return float((p_bar - p_e) / (1 - p_e))


def majority_label(item: Sequence[str]) -> str | None:
    """Strict majority (more than half) of an item's labels; None when there is none (no tie-break)."""
    if not item:
        return None
    (label, count), = Counter(item).most_common(1)
    return label if count * 2 > len(item) else None


def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's κ between two raters (0.0 in the degenerate constant case, per App. A.3).

    The arithmetic of ``sklearn.metrics.cohen_kappa_score`` (unweighted), step for step, on a
    confusion matrix counted with ``bincount`` — the same value to the last bit
    (tests/stats/test_cohen_kappa_fast.py) without the metric's input validation, which
    dominated the thousands of κs of a validation-power audit."""
    a = np.asarray(a)
    b = np.asarray(b)
    labels, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    n = len(labels)
    if n < 2:
        return 0.0
    inv = inv.ravel()
    confusion = np.bincount(inv[:len(a)] * n + inv[len(a):], minlength=n * n).reshape(n, n).astype(np.float64)
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    total = np.sum(sum0)
    if total == 0:
        return 0.0
    expected = np.outer(sum0, sum1) / total
    w_mat = np.ones((n, n), dtype=np.float64)
    np.fill_diagonal(w_mat, 0)
    denominator = np.sum(w_mat * expected)
    if denominator == 0:
        return 0.0
    k = float(1 - np.sum(w_mat * confusion) / denominator)
    return 0.0 if np.isnan(k) else k


def rater_pair_agreement(labels: Sequence[Sequence[str | None]]) -> np.ndarray:
    """``(m, m)`` matrix of raw agreement between each pair of raters (construct-validity.txt §4.2).

    ``labels[i][r]`` is rater ``r``'s label on item ``i`` in a fixed rater order (``None``: missing).
    Entry ``(r, s)`` is the share of items both labelled on which they agree; the diagonal is 1 and
    a pair with no shared item is NaN. The paper reports "the three pairwise rates" of three raters
    as the off-diagonal entries.
    """
    rows = [list(x) for x in labels]
    m = max((len(x) for x in rows), default=0)
    if m == 0:
        return np.zeros((0, 0))
    codes: dict[str, int] = {}
    mat = np.full((len(rows), m), -1, dtype=np.int64)
    for i, row in enumerate(rows):
        for r, lab in enumerate(row):
            if lab is not None:
                mat[i, r] = codes.setdefault(lab, len(codes))
    present = mat >= 0
    both = present[:, :, None] & present[:, None, :]
    same = (mat[:, :, None] == mat[:, None, :]) & both
    n_both = both.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n_both > 0, same.sum(axis=0) / np.maximum(n_both, 1), np.nan)
    return out

"""What the fits of the frozen classifier cost on each form of a sparse training design, and the
form to fit on (``cheapest_form``).

The same fitted model — ``LogisticRegression(max_iter=2000, class_weight="balanced")`` by scikit-learn's
L-BFGS-B steps (``logistic.fit_logistic_many``) — can be computed on three forms of an n-gram design:

* ``row_space``: its row space (``rowspace.row_space``), when it has more columns than distinct rows.
  A setup of a Gram matrix of the distinct rows and its pivoted Cholesky factorisation (``d²`` memory,
  ``d³ / 3`` work), then dense products with the ``d × r`` trapezoid and ``r + 1`` coefficients per fit;
* ``dense``: the design as a dense matrix, when it has no more columns than distinct rows
  (``n × p`` memory, dense products with it);
* ``sparse``: the design as it is (CSR, never densified): sparse products with its non-zeros and
  ``p + 1`` coefficients per fit.

All three run the iterates of one fit (the row space's stopping test is taken in the design's
columns), so they differ only in cost: the row space wins when distinct rows are few against the
non-zeros (repeated or long responses), the sparse design when they are many (many short
distinct responses, where the row space's ``d²`` Gram matrix and the dense ``n × p`` design grow
faster than the data). Costs are in seconds of one core, per the constants below (measured
single-threaded, as the audit runs, on the n-gram folds of the halueval demo slice with its responses
respelled per copy up to 9,600 training rows). The estimates are within a factor of about two of the
measured times, and on the shared sets' folds they order the forms as the measured times do (RM-Bench,
FRANK, GSM8K pairs, HaluEval general; 4 and 31 fits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgeaudit.analyses.validation_power.rowspace import cross_work

FORMS: tuple[str, ...] = ("row_space", "dense", "sparse")

EVALUATIONS = 15
"""Objective evaluations assumed per fit (the n-gram member's fits take 8–30 on the measured folds;
it weighs the row space's one-off factorisation against the per-evaluation products)."""

SPARSE_MADD = 1.0e-9
"""Seconds per multiply-add of a CSR product with a dense block (``x @ W``, ``xᵀ @ G``), per
non-zero and per column of the block (1.0–1.7 ns at 1–32 columns)."""

DENSE_READ = 1.0e-9
"""Seconds per stored entry of a dense (or triangular) factor per product (a lone fit's
matrix–vector product is bound by reading it: ~1 ns per entry)."""

DENSE_MADD = 0.05e-9
"""Seconds per further multiply-add of a dense product of many columns (BLAS level 3)."""

GRAM_MADD = 0.2e-9
"""Seconds per unit of ``rowspace.cross_work`` (0.14–0.25 ns on Gram matrices of the measured folds)."""

FACTOR_FLOP = 0.03e-9
"""Seconds per ``d³ / 3`` of LAPACK's pivoted Cholesky factorisation (0.02–0.04 ns)."""

LBFGS_COEF = 60e-9
"""Seconds of L-BFGS-B's own work (``setulb``: its two-loop and Cauchy-point steps on ten
correction pairs) per coefficient per evaluation of one fit."""

KEEP_BELOW = 0.05
"""A fit whose own form (the row space when columns outnumber distinct rows, else the dense
design) is estimated under this many seconds keeps it: at that size the forms' costs are within
Python's own overheads, and small sets keep the row-space results the shared-set tests compare."""


def fit_costs(x_train: Any, distinct: np.ndarray, *, x_test: Any = None, n_fits: int = 1) -> dict[str, float]:
    """Estimated seconds of ``n_fits`` lockstep fits on each form the sparse ``x_train`` can take,
    and of mapping ``x_test`` (if any) for their scores: ``row_space`` when it has more columns
    than ``distinct`` rows (the first row of each, ``rowspace.distinct_rows``), else ``dense``;
    ``sparse`` always."""
    n, p = x_train.shape
    d = len(distinct)
    k = max(int(n_fits), 1)
    n_test = 0 if x_test is None else x_test.shape[0]
    nnz = float(x_train.nnz)
    per_eval = 2.0 * nnz * k * SPARSE_MADD + k * (p + 1) * LBFGS_COEF
    out = {"sparse": EVALUATIONS * per_eval}
    if p > d:
        r = float(d)                                  # the rank: at most the distinct rows
        entries = d * r - r * r / 2.0                 # the trapezoid [L; L₂₁]
        per_eval = 2.0 * entries * (DENSE_READ + k * DENSE_MADD) + k * (r + 1) * LBFGS_COEF
        u = x_train[distinct]
        setup = cross_work(u, u) * GRAM_MADD + d ** 3 / 3.0 * FACTOR_FLOP
        if n_test:                                    # the test rows in the basis (``RowSpace.project``)
            setup += cross_work(u, x_test) * GRAM_MADD + r * r * n_test * DENSE_MADD
        out["row_space"] = setup + EVALUATIONS * per_eval
    else:
        per_eval = 2.0 * n * p * (DENSE_READ + k * DENSE_MADD) + k * (p + 1) * LBFGS_COEF
        out["dense"] = (n + n_test) * p * DENSE_READ + EVALUATIONS * per_eval
    return out


def cheapest_form(x_train: Any, distinct: np.ndarray, *, x_test: Any = None, n_fits: int = 1) -> str:
    """The form to fit ``x_train`` on (``FORMS``): its own form (``row_space`` or ``dense``,
    ``fit_costs``) when that is estimated under ``KEEP_BELOW`` seconds or no dearer than the
    sparse design, else ``sparse``."""
    costs: Mapping[str, float] = fit_costs(x_train, distinct, x_test=x_test, n_fits=n_fits)
    own = "row_space" if "row_space" in costs else "dense"
    if costs[own] < KEEP_BELOW or costs[own] <= costs["sparse"]:
        return own
    return "sparse"

"""The frozen family's classifier, ``LogisticRegression(max_iter=2000, class_weight="balanced")``,
fit by scikit-learn's own lbfgs steps without the estimator's bookkeeping, and many label vectors
of one design at once.

scikit-learn's lbfgs route (``_logistic_regression_path``) turns balanced class weights into
sample weights, averages the half binomial (two classes) or half multinomial loss over their sum,
adds ``‖W‖² / (2 C Σw)`` (intercepts unpenalised) and runs ``scipy.optimize.minimize(L-BFGS-B)``
from zero. ``fit_logistic_many`` runs scipy's own L-BFGS-B for each label vector — its
reverse-communication routine ``setulb``, driven as ``_minimize_lbfgsb`` drives it — in lockstep:
the binary fits that ask for a function value in the same round get it from one ``x @ W`` and one
``xᵀ @ G`` (``x`` dense, or sparse CSR as it is: never densified). With a ``RowSpace`` the design is the row-space one and the gradient stopping test is
taken in the original columns (``RowSpace.exceeds``), so each fit runs the iterates of the fit
on the original design."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from judgeaudit.analyses.validation_power.rowspace import RowSpace

MAX_ITER = 2000
"""App. E's ``max_iter`` (``family.CLASSIFIER_PARAMS`` reads it from here)."""

LBFGS_OPTIONS: Mapping[str, Any] = {"maxiter": MAX_ITER, "maxls": 50, "gtol": 1e-4,
                                    "ftol": 64 * np.finfo(float).eps, "maxcor": 10, "maxfun": 15000}
"""scikit-learn's options for ``scipy.optimize.minimize(method="L-BFGS-B")`` in the lbfgs route
with the family's ``max_iter`` (``maxcor`` and ``maxfun`` at scipy's defaults, which scikit-learn
leaves in place)."""


@dataclass(frozen=True, eq=False)
class LogisticFit:
    """A fitted logistic regression predicting as scikit-learn's ``LogisticRegression``: scores
    ``x @ coef + intercept`` (``coef``: features × scores, one score column for two classes, one
    per class otherwise)."""

    classes: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int

    def decision_function(self, x: Any) -> np.ndarray:
        x = x if hasattr(x, "tocsr") else np.ascontiguousarray(x, dtype=np.float64)
        return np.asarray(x @ self.coef) + self.intercept

    def predict(self, x: Any) -> np.ndarray:
        scores = self.decision_function(x)
        index = (scores[:, 0] > 0).astype(int) if scores.shape[1] == 1 else scores.argmax(axis=1)
        return self.classes[index]

    def predict_proba(self, x: Any) -> np.ndarray:
        from scipy.special import expit, softmax

        scores = self.decision_function(x)
        if scores.shape[1] == 1:
            p = expit(scores[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    def on_columns(self, basis: RowSpace) -> LogisticFit:
        """The same model of the design's own columns: coefficients ``Qᵀ v``."""
        return LogisticFit(self.classes, basis.to_columns(self.coef), self.intercept, self.n_iter)


def _problems(codes: Sequence[np.ndarray], n_classes: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """``(target, sample weights, l2 strength)`` of each label vector (class codes), as
    ``_logistic_regression_path`` forms them: the target as floats, ``class_weight="balanced"`` as sample
    weights (``n / (n_classes · count(class))``, the formula of scikit-learn's ``compute_class_weight``,
    which a test holds it to; its input checks cost more than the fits at thousands of label vectors), and
    ``1 / (C Σw)`` with C = 1."""
    out = []
    for c in codes:
        counts = np.bincount(c, minlength=n_classes)
        if (counts == 0).any() or len(counts) > n_classes:
            raise ValueError("classes should have valid labels that are in y")
        sw = (len(c) / (n_classes * counts.astype(np.float64)))[c]
        out.append((c.astype(np.float64), sw, 1.0 / float(np.sum(sw))))
    return out


class _Binary:
    """The binary objectives of label vectors sharing one design, evaluated together.
    Coefficients ``[w…, b]``; a lone fit on a dense or sparse design takes the matrix–vector
    products scikit-learn takes. On a ``RowSpace`` the rows are taken in pivot order (``times``,
    ``times_t``); a row's order only changes the order of the loss's sums."""

    def __init__(self, design: Any, codes: Sequence[np.ndarray]):
        from sklearn._loss.loss import HalfBinomialLoss

        self.design = design
        rows = design.order if isinstance(design, RowSpace) else None
        self.p = design.rank if rows is not None else design.shape[1]
        self.dim = self.p + 1
        self.base = HalfBinomialLoss()
        self.problems = _problems([c if rows is None else c[rows] for c in codes], 2)

    def _products(self, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        d = self.design
        if isinstance(d, RowSpace):
            return d.times(w.T) + b[None, :], d.times_t
        if len(w) == 1:
            return (d @ w[0] + np.asarray(b[0]))[:, None], lambda g: (d.T @ g[:, 0])[:, None]
        return d @ w.T + b[None, :], lambda g: d.T @ g

    def evaluate(self, idx: list[int], coefs: np.ndarray) -> list[tuple[float, np.ndarray]]:
        p = self.p
        w, b = coefs[:, :p], coefs[:, p]
        raw, transpose_times = self._products(w, b)
        pointwise = np.empty_like(raw)
        values = []
        for j, i in enumerate(idx):
            target, sw, l2 = self.problems[i]
            loss, gp = self.base.loss_gradient(y_true=target, raw_prediction=np.ascontiguousarray(raw[:, j]),
                                               sample_weight=sw, n_threads=1)
            total = np.sum(sw)
            values.append(float(np.sum(loss) / total) + float(0.5 * l2 * (w[j] @ w[j])))
            pointwise[:, j] = gp / total
        grads = transpose_times(pointwise)
        out = []
        for j, i in enumerate(idx):
            g = np.empty(self.dim)
            g[:p] = grads[:, j] + self.problems[i][2] * w[j]
            g[-1] = np.sum(pointwise[:, j])
            out.append((values[j], g))
        return out

    def split(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the gradient on the design's columns, ``p × 1``; on the intercept)."""
        return g[:self.p, None], g[self.p:]

    def fit(self, classes: np.ndarray, coef: np.ndarray, n_iter: int) -> LogisticFit:
        return LogisticFit(classes, coef[:self.p, None].copy(), coef[self.p:].copy(), n_iter)


class _Multinomial:
    """The multinomial objectives of label vectors with ``n_classes`` classes sharing one design,
    by scikit-learn's ``LinearModelLoss`` (coefficients ``(n_classes, p + 1)`` ravelled in
    Fortran order, as ``_logistic_regression_path`` passes them)."""

    def __init__(self, design: Any, codes: Sequence[np.ndarray], n_classes: int):
        from sklearn._loss.loss import HalfMultinomialLoss
        from sklearn.linear_model._linear_loss import LinearModelLoss

        x = design.z if isinstance(design, RowSpace) else design
        self.x, self.p, self.k = x, x.shape[1], n_classes
        self.dim = n_classes * (self.p + 1)
        self.loss = LinearModelLoss(base_loss=HalfMultinomialLoss(n_classes=n_classes), fit_intercept=True)
        self.problems = _problems(codes, n_classes)

    def evaluate(self, idx: list[int], coefs: np.ndarray) -> list[tuple[float, np.ndarray]]:
        out = []
        for j, i in enumerate(idx):
            target, sw, l2 = self.problems[i]
            f, g = self.loss.loss_gradient(coefs[j], self.x, target, sw, l2_reg_strength=l2, n_threads=1)
            out.append((float(f), g))
        return out

    def _matrix(self, v: np.ndarray) -> np.ndarray:
        return v.reshape((self.k, self.p + 1), order="F")

    def split(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = self._matrix(g)
        return m[:, :self.p].T, m[:, self.p]

    def fit(self, classes: np.ndarray, coef: np.ndarray, n_iter: int) -> LogisticFit:
        m = self._matrix(coef)
        return LogisticFit(classes, m[:, :self.p].T.copy(), m[:, self.p].copy(), n_iter)


def _lbfgsb_lockstep(objective: Any, k_fits: int,
                     converged: Callable[[list[np.ndarray]], np.ndarray] | None = None) -> list[tuple[np.ndarray, int]]:
    """``(x, n_iter)`` of scipy's L-BFGS-B from zero for each of ``k_fits`` objectives, the loop of
    ``scipy.optimize._lbfgsb_py._minimize_lbfgsb`` over scipy's ``setulb``, one round for all the
    fits at a time: ``objective.evaluate`` gets every point asked for in a round together (a point
    equal to the last one evaluated is served from that memo, as ``ScalarFunction`` does).

    ``converged`` (each gradient's stopping test, taken in other coordinates) replaces L-BFGS-B's
    own gradient stopping test, taken where ``setulb`` takes it: at the starting point and at each
    new iterate that the iteration and evaluation limits let through."""
    from scipy.optimize import _lbfgsb

    opts = LBFGS_OPTIONS
    m, dim = opts["maxcor"], objective.dim
    factr = opts["ftol"] / np.finfo(float).eps
    pgtol = opts["gtol"] if converged is None else 0.0
    state = []
    for _ in range(k_fits):
        state.append({"x": np.zeros(dim), "f": np.array(0.0), "g": np.zeros(dim),
                      "wa": np.zeros(2 * m * dim + 5 * dim + 11 * m * m + 8 * m),
                      "iwa": np.zeros(3 * dim, dtype=np.int32), "task": np.zeros(2, dtype=np.int32),
                      "ln_task": np.zeros(2, dtype=np.int32), "lsave": np.zeros(4, dtype=np.int32),
                      "isave": np.zeros(44, dtype=np.int32), "dsave": np.zeros(29), "nit": 0, "nfev": 1})
    # ScalarFunction evaluates at the starting point when it is built
    first = objective.evaluate(list(range(k_fits)), np.zeros((k_fits, dim)))
    memo = [(np.zeros(dim), f, g) for f, g in first]
    lo, hi, nbd = np.zeros(dim), np.zeros(dim), np.zeros(dim, dtype=np.int32)
    done: set[int] = set()
    if converged is not None:
        done = set(np.flatnonzero(converged([g for _, g in first])).tolist())
    active = [i for i in range(k_fits) if i not in done]
    while active:
        asks, new_x = [], []
        for i in active:
            st = state[i]
            st["g"] = st["g"].astype(np.float64)
            _lbfgsb.setulb(m, st["x"], lo, hi, nbd, st["f"], st["g"], factr, pgtol, st["wa"], st["iwa"],
                           st["task"], st["lsave"], st["isave"], st["dsave"], opts["maxls"], st["ln_task"])
            task = st["task"]
            if task[0] == 3:
                asks.append(i)
            elif task[0] == 1:
                st["nit"] += 1
                if st["nit"] >= opts["maxiter"]:
                    task[0], task[1] = 5, 504
                elif st["nfev"] > opts["maxfun"]:
                    task[0], task[1] = 5, 502
                else:
                    new_x.append(i)
            else:
                done.add(i)
        if converged is not None and new_x:
            done.update(i for i, c in zip(new_x, converged([state[i]["g"] for i in new_x]), strict=True) if c)
        new = [i for i in asks if not np.array_equal(state[i]["x"], memo[i][0])]
        if new:
            for i, (f, g) in zip(new, objective.evaluate(new, np.vstack([state[i]["x"] for i in new])), strict=True):
                memo[i] = (state[i]["x"].copy(), f, g)
                state[i]["nfev"] += 1
        for i in asks:
            state[i]["f"], state[i]["g"] = memo[i][1], memo[i][2]
        active = [i for i in active if i not in done]
    return [(st["x"], st["nit"]) for st in state]


def _gradient_test(objective: Any, basis: RowSpace) -> Callable[[list[np.ndarray]], np.ndarray]:
    """L-BFGS-B's gradient stopping test (largest component ≤ ``gtol``) of the fit on the original
    columns, from row-space gradients: the intercepts' components as they are, the coefficients'
    mapped by ``Qᵀ`` (``RowSpace.exceeds``, every gradient of a round in one product)."""
    tol = LBFGS_OPTIONS["gtol"]

    def test(grads: list[np.ndarray]) -> np.ndarray:
        parts = [objective.split(g) for g in grads]
        out = np.array([np.abs(rest).max(initial=0.0) <= tol for _, rest in parts])
        open_ = np.flatnonzero(out)
        if len(open_):
            blocks = [parts[i][0] for i in open_]
            over = basis.exceeds(np.hstack(blocks), tol)
            ends = np.cumsum([b.shape[1] for b in blocks])
            for i, chunk in zip(open_, np.split(over, ends[:-1]), strict=True):
                out[i] = not chunk.any()
        return out

    return test


def fit_logistic_many(x: Any, ys: Sequence[np.ndarray]) -> list[LogisticFit]:
    """``LogisticRegression(max_iter=2000, class_weight="balanced").fit(x, y)`` for each ``y`` in
    ``ys`` (each with at least two classes) on one design — dense, sparse (fit as CSR, never
    densified) or a ``RowSpace`` — the fits with the same number of classes in lockstep. On a
    ``RowSpace`` the fit is the one on the row-space design, stopped as the fit on the original
    design is (``on_columns`` maps the model back to its columns). On a dense design a lone fit's
    coefficients are bit-identical to the estimator's."""
    if sparse.issparse(x):
        x = sparse.csr_matrix(x, dtype=np.float64)
    elif not isinstance(x, RowSpace):
        x = np.ascontiguousarray(x, dtype=np.float64)
    fits: list[LogisticFit | None] = [None] * len(ys)
    groups: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for i, y in enumerate(ys):
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("a logistic regression needs at least two classes")
        groups.setdefault(len(classes), []).append((i, classes, codes.ravel()))
    for k, group in groups.items():
        codes = [c for _, _, c in group]
        objective = _Binary(x, codes) if k == 2 else _Multinomial(x, codes, k)
        test = _gradient_test(objective, x) if isinstance(x, RowSpace) else None
        for (i, classes, _), (coef, nit) in zip(group, _lbfgsb_lockstep(objective, len(group), test), strict=True):
            fits[i] = objective.fit(classes, coef, nit)
    return fits  # type: ignore[return-value]


def fit_logistic(x: Any, y: np.ndarray) -> LogisticFit:
    """``fit_logistic_many`` for one label vector."""
    return fit_logistic_many(x, [y])[0]

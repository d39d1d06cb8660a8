"""The frozen impoverished family (construct-validity.txt App. E): its constants, the feature
extractors (each takes ONE string), and the fitting engine that scores a member by pooled
out-of-fold predictions under a fold plan (design matrices cached per fold and reused by every
permutation refit), plus the provenance-recoverable predictor of §4.4 item 3."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

if TYPE_CHECKING:
    from judgeaudit.analyses.validation_power.modes import Prepared
    from judgeaudit.analyses.validation_power.nulls import FoldPlan


# ---------------------------------------------------------------------------------------------
# The frozen family (App. E). A test asserts these constants; do not edit them.
# ---------------------------------------------------------------------------------------------

FAMILY: tuple[str, ...] = ("length_only", "numeric_surface", "surface_ngram")
"""The three frozen impoverished predictors of App. E, ordered by how much surface they see."""

PROVENANCE_MEMBER = "provenance_recoverable"
"""§4.4 item 3: a predictor of the generative condition C from the text, mapped to a label by g."""

MEMBERS: tuple[str, ...] = FAMILY + (PROVENANCE_MEMBER,)

HEDGES: tuple[str, ...] = ("may", "might", "could", "appears", "suggests", "possibly", "likely",
                           "generally", "typically", "often", "tends to", "in some cases")
"""App. E closed hedge list, counted case-insensitively as substrings."""

UNIVERSALS: tuple[str, ...] = ("all", "always", "never", "every", "any", "invariably", "universally")
"""App. E closed universal-quantifier list, counted case-insensitively as substrings."""

NUMERIC_SURFACE_FEATURES: tuple[str, ...] = (
    "char_count", "token_count", "punct_count", "paren_count", "newline_count",
    "hedge_rate", "universal_rate", "digit_rate", "upper_rate", "mean_token_length",
)
"""The ten scalars of ``numeric_surface``, in App. E's order (``punct_count`` counts ``.,;:``)."""

NGRAM_PARAMS: Mapping[str, Any] = {
    "analyzer": "char_wb", "ngram_range": (3, 5), "min_df": 3, "max_features": 20000,
    "sublinear_tf": True,
}
"""``surface_ngram``'s vectoriser: word-boundary character n-grams 3–5, min df 3, ≤ 20,000
features, sublinear tf, no scaler (App. E)."""

CLASSIFIER_PARAMS: Mapping[str, Any] = {"max_iter": 2000, "class_weight": "balanced"}
"""Every member ends in ``LogisticRegression(**CLASSIFIER_PARAMS)`` (App. E, "Fitting")."""


# ---------------------------------------------------------------------------------------------
# Feature extractors: each takes ONE string.
# ---------------------------------------------------------------------------------------------

_PUNCT = ".,;:"


def token_count(text: str) -> int:
    """Whitespace token count of one response (``length_only``'s single feature, App. E)."""
    return len(text.split())


def length_only_features(text: str) -> np.ndarray:
    """``length_only``: the whitespace token count of one string, as a length-1 vector."""
    return np.array([float(token_count(text))])


def numeric_surface_features(text: str) -> np.ndarray:
    """``numeric_surface``: App. E's ten scalars of one string (unstandardised).

    Rates are per whitespace token (hedges, universals) or per character (digits, upper case);
    the hedge and universal lists are closed and counted case-insensitively as substrings.
    """
    tokens = text.split()
    n_tok = len(tokens)
    n_chr = len(text)
    low = text.lower()
    denom_tok = max(n_tok, 1)
    denom_chr = max(n_chr, 1)
    return np.array([
        float(n_chr),
        float(n_tok),
        float(sum(text.count(c) for c in _PUNCT)),
        float(text.count("(")),
        float(text.count("\n")),
        sum(low.count(h) for h in HEDGES) / denom_tok,
        sum(low.count(u) for u in UNIVERSALS) / denom_tok,
        sum(map(str.isdigit, text)) / denom_chr,
        sum(map(str.isupper, text)) / denom_chr,
        (sum(len(t) for t in tokens) / n_tok) if n_tok else 0.0,
    ])


def make_ngram_vectorizer():
    """``surface_ngram``'s vectoriser (App. E); fit on training-fold texts only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(**NGRAM_PARAMS)


def make_classifier():
    """The logistic regression every member ends in (App. E)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(**CLASSIFIER_PARAMS)


_DENSE_EXTRACTORS: dict[str, Callable[[str], np.ndarray]] = {
    "length_only": length_only_features,
    "numeric_surface": numeric_surface_features,
}


def _dense_matrix(member: str, texts: Sequence[str]) -> np.ndarray:
    fn = _DENSE_EXTRACTORS[member]
    return np.vstack([fn(t) for t in texts]) if len(texts) else np.zeros((0, 1))


def _moments(resp_a: np.ndarray, resp_b: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Standardiser moments of the training responses (both sides in paired mode); a constant
    feature keeps scale 1."""
    resp = resp_a if resp_b is None else np.vstack([resp_a, resp_b])
    sd = resp.std(axis=0)
    return resp.mean(axis=0), np.where(sd > 0, sd, 1.0)


def _scaled(a: np.ndarray, b: np.ndarray | None, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """A dense member's design: standardised features (item mode) or the antisymmetric scaled
    difference ``(φ(a) − φ(b)) / sd`` (paired mode)."""
    return (a - mu) / sd if b is None else (a - b) / sd


# ---------------------------------------------------------------------------------------------
# The fitting engine: design matrices cached per fold, reused across permutations.
# ---------------------------------------------------------------------------------------------


ROUTES: tuple[str, ...] = ("fast", "reference")
"""Two computations of the same fitted members: ``reference`` analyses every text with
scikit-learn's ``char_wb`` analyser and forms the row-space Gram matrix with a sparse product;
``fast`` composes the n-gram counts from each distinct word's n-grams and forms the Gram matrix
with dense blocks. Both feed the same design to the same solver (tests/analyses/
test_vp_fast_route.py asserts equal out-of-fold predictions on every shared set)."""


def reference_ngram_counts(texts: Sequence[str]) -> sparse.csr_matrix:
    """Character n-gram counts of ``texts`` (word-boundary, 3–5, lower-cased) by scikit-learn's
    analyser, columns in the vectoriser's (alphabetical) vocabulary order."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(analyzer=NGRAM_PARAMS["analyzer"],
                           ngram_range=NGRAM_PARAMS["ngram_range"]).fit_transform(list(texts)).tocsr()


_COUNTS_CACHE: dict[tuple[str, ...], tuple[sparse.csr_matrix, np.ndarray]] = {}


def ngram_counts(texts: Sequence[str]) -> sparse.csr_matrix:
    """See ``named_ngram_counts``; the matrix only."""
    return named_ngram_counts(texts)[0]


def named_ngram_counts(texts: Sequence[str]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The same matrix as ``reference_ngram_counts``, built from words.

    ``char_wb`` n-grams never cross whitespace: scikit-learn lower-cases a text, splits it on
    whitespace and takes each word's n-grams (padded with one space each side). So a text's counts
    are its (lower-cased, whitespace-split) word counts times each distinct word's n-gram counts:
    the n-grams of a word are computed once per set, not once per occurrence. Distinct texts are
    analysed once; the last set's counts are kept, so both input modes of one set (the same
    responses in another order) share one analysis. Returns the counts and the n-gram of each
    column (sorted).
    """
    from sklearn.feature_extraction.text import CountVectorizer

    texts = list(texts)
    uniq, inv = np.unique(np.asarray(texts, dtype=object), return_inverse=True) if texts else ([], np.zeros(0, int))
    key = tuple(uniq)
    if key not in _COUNTS_CACHE:
        _COUNTS_CACHE.clear()
        words = CountVectorizer(analyzer=str.split, lowercase=False)
        doc_word = words.fit_transform([t.lower() for t in key])
        vocab = sorted(words.vocabulary_, key=words.vocabulary_.get)
        word_gram, names = _word_ngrams(vocab)
        _COUNTS_CACHE[key] = ((doc_word @ word_gram).tocsr(), names)
    counts, names = _COUNTS_CACHE[key]
    return counts[np.asarray(inv).ravel()], names


def _word_ngrams(words: Sequence[str]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """``(len(words), n_grams)`` counts of each word's ``char_wb`` n-grams and the n-gram of each
    column, columns in alphabetical order — scikit-learn's ``_char_wb_ngrams`` on a one-word text: the word padded
    with a space each side, every n-gram for n = 3..5, and a padded word no longer than n counted
    once as itself (then no longer n-grams)."""
    lo, hi = NGRAM_PARAMS["ngram_range"]
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for r, word in enumerate(words):
        w = " " + word + " "
        size = len(w)
        for n in range(lo, hi + 1):
            grams = [w] if size <= n else [w[i:i + n] for i in range(size - n + 1)]
            cols.extend(index.setdefault(g, len(index)) for g in grams)
            rows.extend([r] * len(grams))
            if size <= n:
                break
    names = np.array(list(index), dtype=object)
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(len(names))
    out = sparse.csr_matrix((np.ones(len(rows), dtype=np.int64), (np.asarray(rows, dtype=np.int64),
                                                                 rank[np.asarray(cols, dtype=np.int64)])),
                            shape=(len(words), len(names)))
    out.sum_duplicates()
    return out, np.sort(names, kind="stable")


class NgramBank:
    """Character n-gram counts of every response, analysed once; per fold, the exact
    ``TfidfVectorizer(**NGRAM_PARAMS)`` fit on that fold's training texts is reproduced by column
    selection (train document frequency ≥ min_df, then the ``max_features`` most frequent in
    training, ties broken as scikit-learn does), training idf, sublinear tf and l2 norm.

    Text analysis is the cost of ``surface_ngram``; doing it once per set instead of once per fold
    (and never per permutation) is what keeps the audit cheap. Test texts only ever contribute
    columns that also occur in training texts, so nothing leaks across folds.
    """

    def __init__(self, texts: Sequence[str], *, route: str = "fast"):
        self.counts = (reference_ngram_counts(texts) if route == "reference" else ngram_counts(texts)).tocsc()
        self.counts.sort_indices()

    def tfidf(self, train_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(selected columns, idf) of the vectoriser fit on ``train_rows``."""
        sub = self.counts[train_rows]
        dfs = np.bincount(sub.tocoo().col, minlength=sub.shape[1])
        present = dfs > 0
        cols = np.flatnonzero(present)
        dfs_p = dfs[cols]
        mask = dfs_p >= NGRAM_PARAMS["min_df"]
        limit = NGRAM_PARAMS["max_features"]
        if mask.sum() > limit:
            tfs = np.asarray(sub[:, cols].sum(axis=0)).ravel()
            inds = (-tfs[mask]).argsort()[:limit]
            new = np.zeros(len(cols), dtype=bool)
            new[np.flatnonzero(mask)[inds]] = True
            mask = new
        sel = cols[mask]
        n = len(train_rows)
        idf = np.log((1.0 + n) / (1.0 + dfs[sel])) + 1.0
        return sel, idf

    def transform(self, rows: np.ndarray | slice, sel: np.ndarray, idf: np.ndarray) -> sparse.csr_matrix:
        """Tf-idf rows under a fold's vectoriser (sublinear tf, idf, l2-normalised)."""
        x = self.counts[rows][:, sel].tocsr().astype(float)
        x.data = 1.0 + np.log(x.data)
        x = x @ sparse.diags(idf)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ x)


class _Designs:
    """Per-fold design matrices of each member for one prepared set.

    The vectoriser's vocabulary and idf and the standardiser's moments depend only on the
    training texts, never on labels, so each is fit once per fold and reused by the observed
    fit and every permutation refit (App. E nulls use identical folds).
    """

    def __init__(self, prep: Prepared, plan: FoldPlan, *, route: str = "fast"):
        if route not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
        self.prep = prep
        self.plan = plan
        self.route = route
        self._raw: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self._cache: dict[tuple[str, int], tuple[Any, Any]] = {}
        self._ngram_resp: dict[int, Any] = {}
        self._bank: NgramBank | None = None

    def raw(self, member: str) -> tuple[np.ndarray, np.ndarray | None]:
        if member not in self._raw:
            a = _dense_matrix(member, self.prep.texts_a)
            b = None if self.prep.texts_b is None else _dense_matrix(member, self.prep.texts_b)
            self._raw[member] = (a, b)
        return self._raw[member]

    def fold(self, member: str, k: int, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
        key = (member, k)
        if key not in self._cache:
            self._cache[key] = self._build(member, k, train, test)
        return self._cache[key]

    def _build(self, member: str, k: int, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
        paired = self.prep.texts_b is not None
        if member == "surface_ngram":
            va, vb = self.ngram_responses(k, train)
            x = (va - vb).tocsr() if paired else va
            # same fitted model on ≤ n_train columns (L-BFGS cost grows with the column count)
            return rowspace_reduce(x[train], x[test], route=self.route)
        a, b = self.raw(member)
        mu, sd = _moments(a[train], b[train] if paired else None)
        x = _scaled(a, b, mu, sd)
        return x[train], x[test]

    def ngram_responses(self, k: int, train: np.ndarray) -> tuple[Any, Any]:
        """Tf-idf of every response under the vectoriser fit on fold ``k``'s training texts."""
        if k not in self._ngram_resp:
            n = len(self.prep.texts_a)
            if self._bank is None:
                self._bank = NgramBank(self.prep.responses(np.arange(n)), route=self.route)
            paired = self.prep.texts_b is not None
            train_docs = np.concatenate([train, train + n]) if paired else train
            sel, idf = self._bank.tfidf(train_docs)
            va = self._bank.transform(slice(0, n), sel, idf)
            vb = self._bank.transform(slice(n, 2 * n), sel, idf) if paired else None
            self._ngram_resp[k] = (va, vb)
        return self._ngram_resp[k]


_BLOCK_COLUMNS = 4096
"""Columns per dense block of ``_cross`` (a 1,000-row block is ~33 MB)."""


def _cross(a: Any, b: Any, route: str = "fast") -> np.ndarray:
    """``a @ b.T`` as a dense array. ``reference``: one sparse product. ``fast``: the sum over
    column blocks of dense BLAS products (the n-gram designs are a few percent non-zero, where
    the sparse product is several times slower)."""
    if route == "reference" or not (sparse.issparse(a) and sparse.issparse(b)):
        out = a @ b.T
        return out.toarray() if sparse.issparse(out) else np.asarray(out)
    same = a is b
    a, b = a.tocsc(), b.tocsc()
    out = np.zeros((a.shape[0], b.shape[0]))
    for j in range(0, a.shape[1], _BLOCK_COLUMNS):
        ab = a[:, j:j + _BLOCK_COLUMNS].toarray()
        bb = ab if same else b[:, j:j + _BLOCK_COLUMNS].toarray()
        out += ab @ bb.T
    return out


def rowspace_basis(x_train: Any, *, rtol: float = 1e-10, route: str = "fast") -> tuple[np.ndarray, Callable[[Any], np.ndarray]]:
    """Exact reparametrisation of an L2-penalised linear model when features outnumber rows.

    The penalised logistic-regression optimum ``w*`` lies in the row space of ``x_train``
    (representer theorem; the intercept is unpenalised). With ``Q`` an orthonormal basis of that
    row space, ``w = Q v`` preserves both ``x_train @ w`` and ``‖w‖²``, so fitting the same
    ``LogisticRegression`` on ``x_train @ Q`` (≤ n_train dense columns) and predicting from
    ``x @ Q`` yields the same fitted model as fitting on the 20,000 sparse columns (up to the
    solver's tolerance), at a fraction of the cost. ``Q`` depends only on the training texts,
    so it is computed once per fold and shared by every permutation refit.

    Returns ``(x_train @ Q, project)`` where ``project(x) = x @ Q``.
    """
    gram = _cross(x_train, x_train, route)
    evals, evecs = np.linalg.eigh(gram)
    keep = evals > rtol * max(evals.max(initial=0.0), 1e-300)
    s = np.sqrt(evals[keep])
    u = evecs[:, keep]

    def project(x: Any) -> np.ndarray:
        cross = _cross(x, x_train, route)
        return (cross @ u) / s

    return u * s, project                               # x_train @ Q with Q = x_trainᵀ U S⁻¹


def rowspace_reduce(x_train: Any, x_test: Any, *, route: str = "fast") -> tuple[np.ndarray, np.ndarray]:
    """``(x_train @ Q, x_test @ Q)`` for ``Q`` of ``rowspace_basis`` when features outnumber
    rows; otherwise the two matrices unchanged (dense)."""
    if x_train.shape[1] <= x_train.shape[0]:
        return (x_train.toarray() if sparse.issparse(x_train) else np.asarray(x_train),
                x_test.toarray() if sparse.issparse(x_test) else np.asarray(x_test))
    z, project = rowspace_basis(x_train, route=route)
    return z, project(x_test)


def binary_lbfgs_coef(x: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``[coef…, intercept]`` of ``LogisticRegression(**CLASSIFIER_PARAMS).fit(x, y)`` for two
    classes and a dense design, computed by the same steps as scikit-learn's lbfgs route
    (``_logistic_regression_path``): balanced class weights as sample weights, the half binomial
    loss averaged over the summed weights plus ``‖w‖² / (2 C Σw)`` (intercept unpenalised),
    ``scipy.optimize.minimize(L-BFGS-B)`` from zero with scikit-learn's options. The same
    arithmetic in the same order gives the same iterates, so the coefficients are identical
    (tests/analyses/test_vp_fast_route.py compares them bit for bit); what is skipped is the
    estimator's input validation and bookkeeping, which dominates thousands of small fits."""
    from scipy import optimize
    from sklearn._loss.loss import HalfBinomialLoss

    x = np.ascontiguousarray(x, dtype=np.float64)
    n, p = x.shape
    pos = y == classes[1]
    counts = np.bincount(pos.astype(np.intp), weights=np.ones(n), minlength=2)
    recip = np.sum(counts) / (2 * counts)
    sw = np.ones(n) * recip[pos.astype(np.intp)]
    target = np.ones(n)
    target[~pos] = 0.0
    sw_sum = float(np.sum(sw))
    c = 1.0
    l2 = 1.0 / (c * sw_sum)
    base = HalfBinomialLoss()

    def loss_gradient(coef, x, y_true, sample_weight, l2_reg_strength, n_threads):
        weights, intercept = coef[:-1], coef[-1]
        raw = x @ weights + np.asarray(intercept, dtype=x.dtype)
        loss, grad_pointwise = base.loss_gradient(y_true=y_true, raw_prediction=raw,
                                                  sample_weight=sample_weight, n_threads=n_threads)
        total = np.sum(sample_weight)
        value = float(np.sum(loss) / total)
        value += float(0.5 * l2_reg_strength * (weights @ weights))
        grad_pointwise /= total
        grad = np.empty_like(coef, dtype=weights.dtype)
        grad[:p] = x.T @ grad_pointwise + l2_reg_strength * weights
        grad[-1] = np.sum(grad_pointwise)
        return value, grad

    res = optimize.minimize(loss_gradient, np.zeros(p + 1), method="L-BFGS-B", jac=True,
                            args=(x, target, sw, l2, 1),
                            options={"maxiter": CLASSIFIER_PARAMS["max_iter"], "maxls": 50, "gtol": 1e-4,
                                     "ftol": 64 * np.finfo(float).eps})
    return res.x


def _fit_predict(x_tr: Any, y_tr: np.ndarray, x_te: Any, route: str = "reference") -> np.ndarray:
    classes = np.unique(y_tr)
    if len(classes) < 2:
        return np.full(x_te.shape[0], classes[0] if len(classes) else "", dtype=object)
    if route == "fast" and len(classes) == 2 and not sparse.issparse(x_tr) and not sparse.issparse(x_te):
        w = binary_lbfgs_coef(x_tr, y_tr, classes)
        # LinearClassifierMixin.decision_function: X @ coef_.T + intercept_, then > 0 → classes_[1]
        scores = (np.ascontiguousarray(x_te, dtype=np.float64) @ w[None, :-1].T + w[-1:]).ravel()
        return classes[(scores > 0).astype(int)]
    clf = make_classifier()
    clf.fit(x_tr, y_tr)
    return clf.predict(x_te)


def oof_predictions(designs: _Designs, member: str, y: np.ndarray) -> np.ndarray:
    """Pooled out-of-fold predictions of one frozen member for labels ``y`` under the plan."""
    pred = np.empty(len(y), dtype=object)
    for k, (train, test) in enumerate(designs.plan.splits()):
        x_tr, x_te = designs.fold(member, k, train, test)
        pred[test] = _fit_predict(x_tr, y[train], x_te, designs.route)
    return pred.astype(str)


class _Provenance:
    """§4.4 item 3: stage 1 predicts the generative condition C from one response's surface
    (``surface_ngram`` features, the frozen classifier); stage 2 maps it to a label through g,
    estimated on the training fold. Stage 1 never sees labels, so permutation refits only
    re-estimate g."""

    def __init__(self, designs: _Designs):
        self.d = designs
        p = designs.prep
        self.paired = p.texts_b is not None
        # per fold: (train, test, training conditions, condition classes, P(C) of side A, of side B)
        self.stage1: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
        for k, (train, test) in enumerate(designs.plan.splits()):
            va, vb = designs.ngram_responses(k, train)
            if self.paired:
                x_tr = sparse.vstack([va[train], vb[train]]).tocsr()
                c_tr = np.concatenate([p.cond_a[train], p.cond_b[train]])
            else:
                x_tr = va[train]
                c_tr = p.cond_a[train]
            classes = np.unique(c_tr)
            if len(classes) < 2:
                pa = np.ones((len(test), 1))
                pb = None if not self.paired else np.ones((len(test), 1))
            else:
                clf = make_classifier()
                clf.fit(x_tr, c_tr)
                pa = clf.predict_proba(va[test])
                pb = clf.predict_proba(vb[test]) if self.paired else None
            self.stage1.append((train, test, c_tr, classes, pa, pb))

    def predict(self, y: np.ndarray) -> np.ndarray:
        pred = np.empty(len(y), dtype=object)
        for train, test, cond, classes, pa, pb in self.stage1:
            if self.paired:
                won = np.concatenate([y[train] == "A", y[train] == "B"]).astype(float)
                g = np.array([won[cond == c].mean() for c in classes])  # classes: values of cond
                sa, sb = pa @ g, pb @ g
                pred[test] = np.where(sa >= sb, "A", "B")
            else:
                labs = np.unique(y[train])
                tab = np.array([[np.mean(y[train][cond == c] == lab) for lab in labs] for c in classes])
                pred[test] = labs[np.argmax(pa @ tab, axis=1)]
        return pred.astype(str)

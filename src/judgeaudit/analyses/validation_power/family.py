"""The frozen impoverished family (construct-validity.txt App. E): its constants, the feature
extractors (each takes ONE string), and the fitting engine that scores a member by pooled
out-of-fold predictions under a fold plan (design matrices cached per fold and reused by every
permutation refit), plus the provenance-recoverable predictor of §4.4 item 3."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from judgeaudit.analyses.validation_power.fitcost import cheapest_form
from judgeaudit.analyses.validation_power.logistic import MAX_ITER, fit_logistic_many
from judgeaudit.analyses.validation_power.rowspace import RowSpace, distinct_rows, row_space

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

CLASSIFIER_PARAMS: Mapping[str, Any] = {"max_iter": MAX_ITER, "class_weight": "balanced"}
"""Every member ends in ``LogisticRegression(**CLASSIFIER_PARAMS)`` (App. E, "Fitting")."""


# ---------------------------------------------------------------------------------------------
# Feature extractors: each takes ONE string.
# ---------------------------------------------------------------------------------------------

_PUNCT = ".,;:"
_ASCII_DIGITS = "0123456789"
_ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


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
    if text.isascii():      # the only ASCII digits and upper-case letters: counted by ``str.count``
        digits, upper = sum(map(text.count, _ASCII_DIGITS)), sum(map(text.count, _ASCII_UPPER))
    else:
        digits, upper = sum(map(str.isdigit, text)), sum(map(str.isupper, text))
    return np.array([
        float(n_chr),
        float(n_tok),
        float(sum(map(text.count, _PUNCT))),
        float(text.count("(")),
        float(text.count("\n")),
        sum(map(low.count, HEDGES)) / denom_tok,
        sum(map(low.count, UNIVERSALS)) / denom_tok,
        digits / denom_chr,
        upper / denom_chr,
        (sum(map(len, tokens)) / n_tok) if n_tok else 0.0,
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
    """The member's features of each text, a repeated text's extracted once."""
    fn = _DENSE_EXTRACTORS[member]
    seen: dict[str, np.ndarray] = {}
    for t in texts:
        if t not in seen:
            seen[t] = fn(t)
    return np.vstack([seen[t] for t in texts]) if len(texts) else np.zeros((0, 1))


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
scikit-learn's ``char_wb`` analyser and fits scikit-learn's estimator on the sparse n-gram design;
``fast`` composes the n-gram counts from each distinct word's n-grams, fits on the cheapest form of
the design (``fitcost.cheapest_form``): its row space when n-grams outnumber distinct rows
(``rowspace.row_space``: a pivoted Cholesky factorisation of the Gram matrix, formed from dense
blocks of the frequent n-grams and a sparse product of the rest) with the gradient stopping test
taken in the n-gram columns, or the sparse design itself when its distinct rows are many, and runs the fits of one fold
(observed labels and every permutation) in lockstep on shared matrix products
(``logistic.fit_logistic_many``). Both run the same solver's iterates with the same stopping rule
(tests/analyses/test_vp_fast_route.py asserts equal out-of-fold predictions on every shared set)."""


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


_GRAM_IDS: dict[str, int] = {}
"""Every ``char_wb`` n-gram met so far → a process-wide id, its place in the dict's order
(``_word_ngrams``)."""
_WORD_GRAMS: dict[str, np.ndarray] = {}
"""Every word met so far → the ids of its n-grams, one per occurrence (``_word_ngrams``)."""


def clear_caches() -> None:
    """Forget the n-grams of every word and the last set's counts (they only serve one audit)."""
    _COUNTS_CACHE.clear()
    _GRAM_IDS.clear()
    _WORD_GRAMS.clear()


def _grams_of(word: str) -> np.ndarray:
    """Ids of the ``char_wb`` n-grams of one word, one per occurrence: scikit-learn's
    ``_char_wb_ngrams`` on a one-word text — the word padded with a space each side, every n-gram
    for n = 3..5, and a padded word no longer than n counted once as itself (then no longer
    n-grams). Computed once per process for each distinct word."""
    ids = _WORD_GRAMS.get(word)
    if ids is None:
        lo, hi = NGRAM_PARAMS["ngram_range"]
        w = " " + word + " "
        size = len(w)
        grams: list[str] = []
        for n in range(lo, hi + 1):
            if size <= n:
                grams.append(w)
                break
            grams += [w[i:i + n] for i in range(size - n + 1)]
        known = _GRAM_IDS        # a new n-gram's id is the number of n-grams met before it
        ids = _WORD_GRAMS[word] = np.asarray([known.setdefault(g, len(known)) for g in grams], dtype=np.int64)
    return ids


def _word_ngrams(words: Sequence[str]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """``(len(words), n_grams)`` counts of each word's ``char_wb`` n-grams (``_grams_of``) and the
    n-gram of each column, columns in alphabetical order (the vectoriser's)."""
    per_word = [_grams_of(w) for w in words]
    ids = np.concatenate(per_word) if per_word else np.zeros(0, dtype=np.int64)
    rows = np.repeat(np.arange(len(words), dtype=np.int64), [len(g) for g in per_word])
    used, col = np.unique(ids, return_inverse=True)
    known = list(_GRAM_IDS)
    names = [known[i] for i in used]
    # the n-grams in alphabetical order: Python's sort of the strings (numpy's of an object array
    # compares them one Python call at a time)
    order = np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
    names = np.array(names, dtype=object)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    out = sparse.csr_matrix((np.ones(len(ids), dtype=np.int64), (rows, rank[np.asarray(col).ravel()])),
                            shape=(len(words), len(names)))
    out.sum_duplicates()
    return out, names[order]


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
        # the counts by row (a fold's training rows for its vocabulary) and by column (its selection)
        self.rows = (reference_ngram_counts(texts) if route == "reference" else ngram_counts(texts)).tocsr()
        self.counts = self.rows.tocsc()
        self.counts.sort_indices()

    def tfidf(self, train_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(selected columns, idf) of the vectoriser fit on ``train_rows``."""
        sub = self.rows[train_rows]
        dfs = np.bincount(sub.indices, minlength=sub.shape[1])
        present = dfs > 0
        cols = np.flatnonzero(present)
        dfs_p = dfs[cols]
        mask = dfs_p >= NGRAM_PARAMS["min_df"]
        limit = NGRAM_PARAMS["max_features"]
        if mask.sum() > limit:
            # each column's total count, in the counts' integer type (exact: far below 2⁵³)
            tfs = np.bincount(sub.indices, weights=sub.data, minlength=sub.shape[1])[cols].astype(sub.dtype)
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
        self._bases: dict[tuple[str, int], RowSpace | None] = {}
        self._ngram_resp: dict[int, Any] = {}
        self._bank: NgramBank | None = None

    def raw(self, member: str) -> tuple[np.ndarray, np.ndarray | None]:
        if member not in self._raw:
            a = _dense_matrix(member, self.prep.texts_a)
            b = None if self.prep.texts_b is None else _dense_matrix(member, self.prep.texts_b)
            self._raw[member] = (a, b)
        return self._raw[member]

    def fold(self, member: str, k: int, train: np.ndarray, test: np.ndarray, *, n_fits: int = 1) -> tuple[Any, Any]:
        """Fold ``k``'s (training, test) design of ``member``, built for ``n_fits`` lockstep fits
        (the n-gram design's form is chosen for them, ``rowspace_reduce``) the first time."""
        key = (member, k)
        if key not in self._cache:
            self._cache[key] = self._build(member, k, train, test, n_fits)
        return self._cache[key]

    def basis(self, member: str, k: int) -> RowSpace | None:
        """The row-space basis of fold ``k``'s design of ``member`` (after ``fold``), if any."""
        return self._bases.get((member, k))

    def _build(self, member: str, k: int, train: np.ndarray, test: np.ndarray, n_fits: int) -> tuple[Any, Any]:
        paired = self.prep.texts_b is not None
        if member == "surface_ngram":
            va, vb = self.ngram_responses(k, train)
            x = (va - vb).tocsr() if paired else va
            # the same fitted model on the design's cheapest form (row space, dense or sparse)
            x_tr, x_te, self._bases[(member, k)] = rowspace_reduce(x[train], x[test], route=self.route,
                                                                   n_fits=n_fits)
            return x_tr, x_te
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


def rowspace_reduce(x_train: Any, x_test: Any, *, route: str = "fast",
                    n_fits: int = 1) -> tuple[Any, Any, RowSpace | None]:
    """The fast route's form of a fold's design for ``n_fits`` lockstep fits: ``(x_train @ Qᵀ,
    x_test @ Qᵀ, basis)`` for the ``row_space`` basis ``Q`` (a repeated response is one row of the
    basis), the two matrices dense, or the two sparse matrices as they are (CSR), with no basis.
    A sparse design takes the form ``fitcost.cheapest_form`` names for it (the row space only when
    features outnumber distinct rows); a dense one its row space when features outnumber distinct
    rows, else itself. The reference route keeps the sparse n-gram design: scikit-learn's
    estimator on the family's own columns."""
    if route == "reference":
        return x_train, x_test, None
    distinct = distinct_rows(x_train)
    if sparse.issparse(x_train):
        form = cheapest_form(x_train, distinct[0], x_test=x_test, n_fits=n_fits)
    else:
        form = "row_space" if x_train.shape[1] > len(distinct[0]) else "dense"
    if form == "sparse":
        return sparse.csr_matrix(x_train), sparse.csr_matrix(x_test), None
    if form == "dense":
        return (x_train.toarray() if sparse.issparse(x_train) else np.asarray(x_train),
                x_test.toarray() if sparse.issparse(x_test) else np.asarray(x_test), None)
    basis = row_space(x_train, distinct=distinct)
    return basis.z, basis.project(x_test), basis


def _constant(classes: np.ndarray, n: int) -> np.ndarray:
    return np.full(n, classes[0] if len(classes) else "", dtype=object)


def _fit_predict(x_tr: Any, y_tr: np.ndarray, x_te: Any) -> np.ndarray:
    """Predictions of scikit-learn's estimator fit on one fold (the reference route; the fast
    route's fits are ``oof_predictions_many``'s)."""
    classes = np.unique(y_tr)
    if len(classes) < 2:
        return _constant(classes, x_te.shape[0])
    return make_classifier().fit(x_tr, y_tr).predict(x_te)


def oof_predictions(designs: _Designs, member: str, y: np.ndarray) -> np.ndarray:
    """Pooled out-of-fold predictions of one frozen member for labels ``y`` under the plan."""
    return oof_predictions_many(designs, member, [y])[0]


def oof_predictions_many(designs: _Designs, member: str, ys: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``oof_predictions`` for every label vector in ``ys`` (the observed labels and their
    permutations): per fold, on the fast route, every fit in one ``fit_logistic_many`` call
    (lockstep fits sharing the design's products); on the reference route, one estimator each."""
    preds = [np.empty(len(y), dtype=object) for y in ys]
    # each label vector as codes of its sorted labels, once: a fold's classes are the codes present
    # in its training rows, and the fits see the codes (the same classes in the same order)
    coded = [(labels, codes.ravel()) for labels, codes in (np.unique(y, return_inverse=True) for y in ys)]
    for k, (train, test) in enumerate(designs.plan.splits()):
        x_tr, x_te = designs.fold(member, k, train, test, n_fits=len(ys))
        fitted = []
        for i, (y, (labels, codes)) in enumerate(zip(ys, coded, strict=True)):
            classes = labels[np.flatnonzero(np.bincount(codes[train], minlength=len(labels)))]
            if len(classes) < 2:
                preds[i][test] = _constant(classes, len(test))
            elif designs.route == "fast":
                fitted.append(i)
            else:
                preds[i][test] = _fit_predict(x_tr, y[train], x_te)
        if fitted:
            basis = designs.basis(member, k)
            fits = fit_logistic_many(x_tr if basis is None else basis, [coded[i][1][train] for i in fitted])
            for i, fit in zip(fitted, fits, strict=True):
                preds[i][test] = coded[i][0][fit.predict(x_te)]
    return [p.astype(str) for p in preds]


class _Provenance:
    """§4.4 item 3: stage 1 predicts the generative condition C from one response's surface
    (``surface_ngram`` features, the frozen classifier); stage 2 maps it to a label through g,
    estimated on the training fold. Stage 1 sees the texts and the conditions the adapters record,
    never the labels: a condition is how a response was produced (its source, model or style),
    never the pair role itself (``chosen``/``rejected`` is the label under another name, and
    would make stage 1 a label classifier); so permutation refits only re-estimate g."""

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

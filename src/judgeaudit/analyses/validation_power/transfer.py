"""Transfer (construct-validity.txt App. E, last sentence; §5.4 [48]): each frozen member fit on one
label set and scored on another in the same mode, where the two label spaces share ≥ 2 categories.

A category of a label space is a label value *under its origin* (§5.4: "label spaces that do not
share two categories, so a predictor fitted on one cannot be scored on the other even in
principle"): in paired mode every set's labels are the sides ``A``/``B``, but "A is the side the
pair was built to prefer", "A is the side human annotators voted for" and "A is the objectively
correct response" are different categories, so sets of different label origins share none.
Admission therefore needs the same declared label origin and ≥ 2 shared label values; a set with
no declared origin (a bare table) is compared by its label values alone. Every refusal says why
(``admission``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from judgeaudit.analyses.validation_power.family import (
    FAMILY,
    NGRAM_PARAMS,
    _dense_matrix,
    _moments,
    _scaled,
    make_classifier,
    make_ngram_vectorizer,
    named_ngram_counts,
)
from judgeaudit.analyses.validation_power.fitcost import cheapest_form
from judgeaudit.analyses.validation_power.logistic import fit_logistic
from judgeaudit.analyses.validation_power.rowspace import distinct_rows, row_space
from judgeaudit.analyses.validation_power.modes import Prepared
from judgeaudit.analyses.validation_power.scoring import _accuracy, pooled_kappa


@dataclass(frozen=True)
class TransferScore:
    """One ordered (source → target) transfer in one mode (App. E, last sentence)."""

    source: str
    target: str
    mode: str
    admitted: bool
    shared_labels: tuple[str, ...]
    reason: str | None = None
    n: int = 0
    members: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "mode": self.mode,
                "admitted": self.admitted, "shared_labels": list(self.shared_labels),
                "reason": self.reason, "n": self.n, "members": self.members}


class TargetFeatures:
    """One target's features, computed once and shared by every source scored on it (fast
    route): each dense member's raw features, and the character n-gram counts of every response
    with the n-gram of each column. A source's fitted vectoriser then transforms the target by
    column selection — the same count matrix its own ``transform`` builds, handed to the same
    tf-idf step — instead of analysing the target's texts again for every source."""

    def __init__(self, target: Prepared):
        self.target = target
        self._dense: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self._grams: tuple[sparse.csr_matrix, np.ndarray] | None = None

    def dense(self, member: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        t = self.target
        if member not in self._dense:
            self._dense[member] = (_dense_matrix(member, t.texts_a),
                                   None if t.texts_b is None else _dense_matrix(member, t.texts_b))
        a, b = self._dense[member]
        return a[rows], None if b is None else b[rows]

    def tfidf(self, vec: Any, rows: np.ndarray, side: str) -> sparse.csr_matrix:
        """``vec.transform`` of side ``a``/``b`` of ``rows``."""
        t = self.target
        if self._grams is None:
            self._grams = named_ngram_counts(t.texts_a + (t.texts_b or []))
        counts, names = self._grams
        offset = 0 if side == "a" else len(t.texts_a)
        vocab = vec.vocabulary_
        terms = np.array(sorted(vocab, key=vocab.get), dtype=object)
        pos = np.searchsorted(names, terms)
        pos_c = np.minimum(pos, len(names) - 1)
        hit = (pos < len(names)) & (names[pos_c] == terms) if len(names) else np.zeros(len(terms), bool)
        select = sparse.csr_matrix((np.ones(int(hit.sum()), dtype=np.int64), (pos_c[hit], np.flatnonzero(hit))),
                                   shape=(len(names), len(terms)))
        x = (counts[rows + offset] @ select).tocsr().astype(np.float64)
        x.sort_indices()
        return vec._tfidf.transform(x, copy=False)


class CountsTfidf:
    """``TfidfVectorizer(**NGRAM_PARAMS).fit(texts)`` built from the texts' n-gram counts (fast
    route): the same document-frequency and ``max_features`` selection as scikit-learn's
    ``_limit_features`` on the same (alphabetically ordered, float) count matrix, and its own
    ``TfidfTransformer`` fit on the selected counts. Exposes what ``TargetFeatures.tfidf`` uses
    (``vocabulary_``, ``_tfidf``) and the fitted texts' tf-idf rows."""

    def __init__(self, texts: list[str]):
        from sklearn.feature_extraction.text import TfidfTransformer

        counts, names = named_ngram_counts(texts)
        x = counts.astype(np.float64).tocsr()
        x.sort_indices()
        dfs = np.bincount(x.indices, minlength=x.shape[1])
        mask = dfs >= NGRAM_PARAMS["min_df"]
        limit = NGRAM_PARAMS["max_features"]
        if mask.sum() > limit:
            tfs = np.asarray(x.sum(axis=0)).ravel()
            inds = (-tfs[mask]).argsort()[:limit]
            new = np.zeros(len(dfs), dtype=bool)
            new[np.where(mask)[0][inds]] = True
            mask = new
        keep = np.flatnonzero(mask)
        self.vocabulary_ = {str(t): i for i, t in enumerate(names[keep])}
        selected = x[:, keep]
        self._tfidf = TfidfTransformer(norm="l2", use_idf=True, smooth_idf=True,
                                       sublinear_tf=NGRAM_PARAMS["sublinear_tf"]).fit(selected)
        self.rows = self._tfidf.transform(selected, copy=True)


def _fit_member(x: Any, y: np.ndarray, route: str) -> Any:
    """The frozen classifier fit on a source's design: scikit-learn's estimator on the design as
    it is (reference route); on the fast route ``fit_logistic`` on the cheapest form of an n-gram
    design (``fitcost.cheapest_form``; a model fit on its row space is mapped back to its columns),
    so a target is scored by one sparse product with the n-gram coefficients."""
    if route == "reference":
        return make_classifier().fit(x, y)
    if not sparse.issparse(x):
        return fit_logistic(x, y)
    distinct = distinct_rows(x)
    form = cheapest_form(x, distinct[0], n_fits=1)
    if form == "row_space":
        basis = row_space(x, distinct=distinct)
        return fit_logistic(basis, y).on_columns(basis)
    return fit_logistic(x if form == "sparse" else x.toarray(), y)


def _fit_on_source(source: Prepared, shared: tuple[str, ...],
                   route: str = "fast") -> dict[str, Callable[[Prepared], np.ndarray]]:
    """Each frozen member fit on all rows of ``source`` whose label is in ``shared``; returns
    member → predictor of a prepared target (same mode), given the target's rows and (fast
    route) its ``TargetFeatures``."""
    keep = np.isin(source.y, shared)
    ys = source.y[keep]
    paired = source.texts_b is not None
    sa = [t for t, k in zip(source.texts_a, keep, strict=True) if k]
    sb = [t for t, k in zip(source.texts_b, keep, strict=True) if k] if paired else None
    out: dict[str, Callable[[Prepared], np.ndarray]] = {}
    for m in FAMILY:
        if m == "surface_ngram":
            if route == "fast":
                vec = CountsTfidf(sa + (sb or []))
                xs = vec.rows[:len(sa)]
                if paired:
                    xs = (xs - vec.rows[len(sa):]).tocsr()
            else:
                vec = make_ngram_vectorizer()
                vec.fit(sa + (sb or []))
                xs = vec.transform(sa)
                if paired:
                    xs = (xs - vec.transform(sb)).tocsr()

            def design(t: Prepared, rows: np.ndarray, feats: TargetFeatures | None, _vec=vec) -> Any:
                if feats is None:
                    xa = _vec.transform([t.texts_a[i] for i in rows])
                    xb = _vec.transform([t.texts_b[i] for i in rows]) if paired else None
                else:
                    xa = feats.tfidf(_vec, rows, "a")
                    xb = feats.tfidf(_vec, rows, "b") if paired else None
                return (xa - xb).tocsr() if paired else xa
        else:
            rsa = _dense_matrix(m, sa)
            rsb = _dense_matrix(m, sb) if paired else None
            mu, sd = _moments(rsa, rsb)
            xs = _scaled(rsa, rsb, mu, sd)

            def design(t: Prepared, rows: np.ndarray, feats: TargetFeatures | None, _m=m, _mu=mu,
                       _sd=sd) -> Any:
                if feats is None:
                    ra = _dense_matrix(_m, [t.texts_a[i] for i in rows])
                    rb = _dense_matrix(_m, [t.texts_b[i] for i in rows]) if paired else None
                else:
                    ra, rb = feats.dense(_m, rows)
                return _scaled(ra, rb, _mu, _sd)
        classes = np.unique(ys)
        clf = _fit_member(xs, ys, route) if len(classes) >= 2 else None

        def predict(t: Prepared, rows: np.ndarray, feats: TargetFeatures | None = None, _clf=clf,
                    _design=design, _c=classes) -> np.ndarray:
            if _clf is None:
                return np.full(len(rows), _c[0] if len(_c) else "", dtype=object).astype(str)
            return _clf.predict(_design(t, rows, feats)).astype(str)

        out[m] = predict
    return out


def _origin(origin: str | None) -> str | None:
    """A declared label origin in one spelling (case, ``_`` vs space); None when undeclared (the
    table adapters' ``user``)."""
    if origin is None or not str(origin).strip() or str(origin).strip().lower() == "user":
        return None
    return " ".join(str(origin).replace("_", " ").lower().split())


def admission(source: Prepared, target: Prepared, source_origin: str | None = None,
              target_origin: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """``(shared label values, reason for refusal or None)`` of a transfer from ``source`` to
    ``target`` (module docstring: same declared label origin, ≥ 2 shared label values)."""
    ls, lt = set(np.unique(source.y)), set(np.unique(target.y))
    shared = tuple(sorted(ls & lt))
    so, to = _origin(source_origin), _origin(target_origin)
    if so is not None and to is not None and so != to:
        return (), (f"label origins differ ({so} vs {to}): their {'/'.join(shared) or 'labels'} are different "
                    "categories, so a predictor fitted on one cannot be scored on the other")
    if (so is None) != (to is None):
        return (), f"label origin declared for one set only ({so or to}): the categories cannot be matched"
    if len(shared) < 2:
        return shared, (f"label spaces share fewer than two categories ({', '.join(map(str, sorted(ls)))} vs "
                        f"{', '.join(map(str, sorted(lt)))})")
    return shared, None


def transfer_scores(source: Prepared, target: Prepared, *, source_name: str, target_name: str,
                    cache: dict[Any, Any] | None = None, route: str = "fast", source_origin: str | None = None,
                    target_origin: str | None = None) -> TransferScore:
    """Fit each frozen member on all of ``source`` and score it on ``target`` (same mode;
    App. E's last sentence). Admitted only where the two label spaces share at least two
    categories (``admission``: the same declared label origin and two shared label values);
    scored on the target rows whose label is shared. ``cache`` reuses a source's fitted members
    across targets and (fast route) the last target's features across sources."""
    shared, refused = admission(source, target, source_origin, target_origin)
    if refused is not None:
        return TransferScore(source_name, target_name, source.mode, False, shared, reason=refused)
    key = (source_name, source.mode, shared)
    if cache is not None and key in cache:
        fitted = cache[key]
    else:
        fitted = _fit_on_source(source, shared, route)
        if cache is not None:
            cache[key] = fitted
    feats = None
    if route == "fast":
        feats = cache.get("__target__") if cache is not None else None
        if feats is None or feats.target is not target:
            feats = TargetFeatures(target)
            if cache is not None:
                cache["__target__"] = feats
    rows = np.flatnonzero(np.isin(target.y, shared))
    yt = target.y[rows]
    out: dict[str, dict[str, float]] = {}
    for m, predict in fitted.items():
        pred = predict(target, rows, feats)
        out[m] = {"kappa": pooled_kappa(yt, pred), "accuracy": _accuracy(yt, pred)}
    return TransferScore(source_name, target_name, source.mode, True, shared, n=len(rows), members=out)

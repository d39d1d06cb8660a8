"""The fast route of the validation-power audit computes the same fitted members as the reference
route, scikit-learn's estimator on each member's own features (issue 15): the same n-gram counts,
bit-identical lbfgs coefficients on a dense design, on an n-gram design's row space the iterates
and stopping iteration of the fit on the sparse columns, and — on every shared labelled set, both
modes, every member, observed and permuted labels — the same pooled out-of-fold predictions.

The shared sets are trimmed to ``MAX_ROWS`` rows (whole groups, the registry's deterministic
``max_rows``) and one permutation, and the observed labels' fold fits serve both the predictions
and the probabilities: well under half a minute of CPU. The routes differ in arithmetic only, never
in which rows they see, so the trim does not weaken the comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.analyses.validation_power import rowspace
from judgeaudit.analyses.validation_power.family import (
    MEMBERS,
    PROVENANCE_MEMBER,
    _Designs,
    _Provenance,
    make_classifier,
    ngram_counts,
    oof_predictions,
    oof_predictions_many,
    reference_ngram_counts,
    rowspace_reduce,
)
from judgeaudit.analyses.validation_power.logistic import fit_logistic, fit_logistic_many
from judgeaudit.analyses.validation_power.modes import has_condition, is_paired_table, prepare_item, prepare_paired
from judgeaudit.analyses.validation_power.nulls import label_permutations, make_folds
from shared_sets import labelled_set_specs, trimmed
from judgeaudit.datasets.registry import load_set

pytestmark = pytest.mark.usefixtures("one_blas_thread")   # BLAS on one thread, as the audit runs it

MAX_ROWS = 100
PROBA_ATOL = 1e-6
"""Largest difference allowed between the two routes' predicted probabilities: the designs differ
by floating-point rounding (a dense-block vs a sparse Gram product), ~1e-14."""


def test_word_composed_counts_equal_sklearns_char_wb_analyser():
    texts = ["Hello  World!", "a b", "an\tI\u00a0x", "İstanbul ÉTÉ", "", "aa aaa aaaa aaaaa aaaaaa",
             "x\u2003y\nz  zz", "Hello world", "hello"]
    a, b = reference_ngram_counts(texts), ngram_counts(texts)
    assert a.shape == b.shape and (a != b).nnz == 0
    # the same texts in another order (a set's other input mode) give the permuted rows
    order = [3, 0, 8, 1, 2, 7, 5, 4, 6]
    assert (ngram_counts([texts[i] for i in order]) != a[order]).nnz == 0


@pytest.mark.parametrize("p, n_classes", [(1, 2), (10, 2), (120, 2), (10, 3), (40, 4)])
def test_lone_fit_is_bit_identical_to_logistic_regression(p, n_classes):
    """``fit_logistic`` on a dense design takes scikit-learn's lbfgs steps: the coefficients,
    intercepts and iteration count of ``LogisticRegression(**CLASSIFIER_PARAMS)``, bit for bit,
    binary and multinomial."""
    rng = np.random.default_rng(p + n_classes)
    x = rng.normal(size=(200, p))
    score = x[:, :1] * np.arange(1, n_classes + 1) + rng.normal(size=(200, n_classes))
    y = np.array(["c0", "c1", "c2", "c3"][:n_classes])[score.argmax(axis=1)]
    clf = make_classifier().fit(x, y)
    fit = fit_logistic(x, y)
    assert np.array_equal(fit.coef.T, clf.coef_) and np.array_equal(fit.intercept, clf.intercept_)
    assert fit.n_iter == clf.n_iter_[0]
    xt = rng.normal(size=(50, p))
    assert np.array_equal(fit.predict(xt), clf.predict(xt))
    np.testing.assert_allclose(fit.predict_proba(xt), clf.predict_proba(xt), rtol=0, atol=1e-15)


def test_cross_product_splits_columns_between_dense_and_sparse_products():
    """``cross`` puts each column in the cheaper of a dense BLAS block and the sparse product:
    with a few dense columns and many rare ones both parts are used, and the result equals the
    sparse product ``a @ bᵀ`` to rounding, for a Gram matrix (``a is b``) and a cross product."""
    from scipy import sparse

    rng = np.random.default_rng(7)
    common = sparse.random(500, 40, density=0.7, random_state=1, format="csr")
    rare = sparse.random(500, 3000, density=0.003, random_state=2, format="csr")
    x = sparse.hstack([common, rare]).tocsr()
    a, b = x[:350], x[350:]
    nnz = np.diff(a.tocsc().indptr).astype(float)
    dense = rowspace._SPARSE_PRODUCT_COST * nnz * nnz > a.shape[0] ** 2
    assert 0 < dense.sum() < len(dense)
    np.testing.assert_allclose(rowspace.cross(a, a), (a @ a.T).toarray(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rowspace.cross(b, a), (b @ a.T).toarray(), rtol=0, atol=1e-12)
    dense_b = rng.normal(size=(5, x.shape[1]))
    np.testing.assert_allclose(rowspace.cross(dense_b, a), dense_b @ a.T.toarray(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n, p", [(300, 1), (400, 10), (600, 600)])
def test_lockstep_fits_are_each_fit_alone(n, p):
    """``fit_logistic_many`` runs scipy's L-BFGS-B for many label vectors in lockstep, sharing the
    matrix products: every fit's coefficients equal the lone fit's (itself bit-identical to
    LogisticRegression) to rounding, and so do its iteration count and predictions — including a
    label vector with one class very rare, a perfectly separable one (large coefficients, many
    iterations) and three-class vectors fit beside the binary ones."""
    rng = np.random.default_rng(n + p)
    x = rng.normal(size=(n, p)) / np.sqrt(p)
    y0 = np.where(x[:, 0] + rng.normal(0, 0.5, n) > 0, "A", "B")
    y3 = np.array(["A", "B", "C"])[np.digitize(x[:, 0] + rng.normal(0, 0.5, n), [-0.3, 0.3])]
    ys = [y0, *[rng.permutation(y0) for _ in range(6)], np.where(np.arange(n) < 5, "A", "B"),
          np.where(x[:, 0] > 0, "A", "B"), y3, rng.permutation(y3)]
    xt = rng.normal(size=(100, p)) / np.sqrt(p)
    together = fit_logistic_many(x, ys)
    for y, fit in zip(ys, together):
        alone = fit_logistic(x, y)
        np.testing.assert_allclose(fit.coef, alone.coef, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(fit.intercept, alone.intercept, rtol=1e-9, atol=1e-9)
        assert fit.n_iter == alone.n_iter
        assert np.array_equal(fit.predict(xt), alone.predict(xt))
    assert fit_logistic_many(x, []) == []


def _sparse_design(n_classes, seed, n=240, p=4000):
    """A tf-idf-like design with more columns than rows, duplicate rows and empty rows (a Gram
    matrix of deficient rank), and labels of ``n_classes`` classes."""
    from scipy import sparse
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(seed)
    x = normalize(sparse.random(n, p, density=0.02, random_state=seed, format="csr"))
    x = sparse.vstack([x, x[:15], sparse.csr_matrix((3, p))]).tocsr()
    score = x @ rng.normal(size=(p, n_classes)) + rng.normal(0, 0.05, (x.shape[0], n_classes))
    return x, np.array(["c0", "c1", "c2"][:n_classes])[score.argmax(axis=1)]


SPARSE_DESIGNS = [(2, 1), (2, 8), (2, 10), (2, 27), (3, 1), (3, 2)]
"""(classes, seed) of ``_sparse_design``; on seeds 8, 10 and 27 the binary fit's stopping test
gives another iteration in row-space coordinates than in the original columns."""


@pytest.mark.parametrize("n_classes, seed", SPARSE_DESIGNS)
def test_row_space_fit_runs_the_iterates_of_the_fit_on_the_ngram_columns(n_classes, seed):
    """On the row space of a design with more columns than rows (``row_space``: duplicate and
    empty rows are never pivots), ``fit_logistic`` with the basis takes its gradient stopping test
    on the original columns, so it stops at scikit-learn's iteration on the original sparse design
    and, mapped back (``on_columns``), has its coefficients, predictions and probabilities. The
    same fit stopped by L-BFGS-B's own test in row-space coordinates (scikit-learn's estimator on
    the row-space design) stops elsewhere on some of these designs."""
    x, y = _sparse_design(n_classes, seed)
    basis = rowspace.row_space(x)
    assert basis.rank == 240
    np.testing.assert_allclose(basis.z @ basis.z.T, (x @ x.T).toarray(), rtol=0, atol=1e-12)
    w, g = np.random.default_rng(seed).normal(size=(240, 3)), np.random.default_rng(seed).normal(size=(x.shape[0], 3))
    np.testing.assert_allclose(basis.times(w), basis.z[basis.order] @ w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(basis.times_t(g), basis.z[basis.order].T @ g, rtol=0, atol=1e-12)
    clf = make_classifier().fit(x, y)
    fit = fit_logistic(basis, y)
    assert fit.n_iter == clf.n_iter_[0]
    cols = fit.on_columns(basis)
    np.testing.assert_allclose(cols.coef.T, clf.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(cols.intercept, clf.intercept_, rtol=0, atol=1e-9)
    xt, _ = _sparse_design(n_classes, seed + 100)
    assert np.array_equal(cols.predict(xt), clf.predict(xt))
    assert np.array_equal(fit.predict(basis.project(xt)), clf.predict(xt))
    np.testing.assert_allclose(cols.predict_proba(xt), clf.predict_proba(xt), rtol=0, atol=1e-9)


def test_row_space_exceeds_is_the_whole_maps_answer():
    """``RowSpace.exceeds`` looks at the most populated columns first and maps the rest only for
    the vectors they leave undecided: its answer is the whole map's, at thresholds on either side
    of each vector's largest entry (both paths taken)."""
    from scipy import sparse

    x = sparse.vstack([_sparse_design(2, 4, p=600)[0], sparse.random(100, 600, density=0.3, random_state=0)]).tocsr()
    basis = rowspace.row_space(x)
    assert basis.pivot_rows.shape[1] > rowspace.PROBE_COLUMNS
    v = np.random.default_rng(0).normal(size=(basis.rank, 40))
    whole = np.abs(basis.to_columns(v)).max(axis=0)
    probe = np.abs(basis._frequent @ v).max(axis=0)
    assert (probe < whole - 1e-9).any() and (probe <= whole + 1e-12).all()
    for tol in (whole * (1 - 1e-9), whole * (1 + 1e-9), np.median(whole)):
        for t in np.atleast_1d(tol):
            assert np.array_equal(basis.exceeds(v, float(t)), whole > t)


def test_row_space_stopping_test_differs_on_some_design():
    """Guards the test above against designs on which the stopping test's coordinates never
    matter: on some of them the row-space test (scikit-learn's estimator on ``basis.z``) stops at
    another iteration than the test on the original columns."""
    differ = []
    for n_classes, seed in SPARSE_DESIGNS:
        x, y = _sparse_design(n_classes, seed)
        on_rows = make_classifier().fit(rowspace.row_space(x).z, y)
        differ.append(on_rows.n_iter_[0] != make_classifier().fit(x, y).n_iter_[0])
    assert sum(differ) >= 3


def _specs(d) -> dict[str, str]:
    return {k: trimmed(v, MAX_ROWS) for k, v in labelled_set_specs(d).items()}


@pytest.mark.data
def test_fast_route_gives_the_reference_oof_predictions_on_every_shared_set(data_dir):
    specs = _specs(data_dir)
    assert len(specs) >= 12
    compared = row_space_folds = 0
    for name, spec in specs.items():
        df = load_set(spec)
        preps = [prepare_item(df)] + ([prepare_paired(df)] if is_paired_table(df) else [])
        for prep in preps:
            if len(np.unique(prep.y)) < 2:
                continue
            plan = make_folds(prep.groups)
            fast, ref = _Designs(prep, plan, route="fast"), _Designs(prep, plan, route="reference")
            labels = [prep.y, *label_permutations(prep, 1, 1)]
            for member in MEMBERS:
                if member == PROVENANCE_MEMBER:
                    if has_condition(prep):
                        pf, pr = _Provenance(fast), _Provenance(ref)
                        for y in labels:
                            assert np.array_equal(pf.predict(y), pr.predict(y)), (name, prep.mode, member)
                            compared += 1
                    continue
                # the audit's call: every label vector's fits in lockstep (fit_logistic_many)
                together = oof_predictions_many(fast, member, labels)
                row_space_folds += sum(fast.basis(member, k) is not None for k in range(plan.n_splits))
                # the observed labels fold by fold: one estimator per route and fold gives the
                # out-of-fold predictions and the probabilities (the reference route's own
                # call, ``oof_predictions``, is compared on the permuted labels below)
                want, lone = np.empty(prep.n, dtype=object), np.empty(prep.n, dtype=object)
                for k, (train, test) in enumerate(plan.splits()):
                    if len(np.unique(prep.y[train])) < 2:
                        want[test] = lone[test] = np.unique(prep.y[train])[0]   # a constant prediction
                        continue
                    (ftr, fte), (rtr, rte) = fast.fold(member, k, train, test), ref.fold(member, k, train, test)
                    f = fit_logistic(ftr if fast.basis(member, k) is None else fast.basis(member, k), prep.y[train])
                    r = make_classifier().fit(rtr, prep.y[train])
                    want[test], lone[test] = r.predict(rte), f.predict(fte)
                    np.testing.assert_allclose(f.predict_proba(fte), r.predict_proba(rte), rtol=0, atol=PROBA_ATOL,
                                               err_msg=f"{name} {prep.mode} {member} fold {k}")
                wants = [want.astype(str), *(oof_predictions(ref, member, y) for y in labels[1:])]
                lones = [lone.astype(str), *(oof_predictions(fast, member, y) for y in labels[1:])]
                for pred, want_y, lone_y in zip(together, wants, lones, strict=True):
                    assert np.array_equal(pred, want_y), (name, prep.mode, member)
                    assert np.array_equal(lone_y, want_y), (name, prep.mode, member)
                    compared += 1
    # 12+ sets, ~20 (set, mode) pairs, 3 members (+ provenance), observed labels + 1 permutation
    assert compared >= 150 and row_space_folds >= 40   # the n-gram member fit on its row space


def test_sets_audited_in_parallel_give_the_sequential_result():
    """``n_jobs`` only spreads (set, mode) audits and chunks of transfer sources over worker
    processes: the result (set order, every κ, null, interval and transfer score, in order) is the
    sequential one."""
    from judgeaudit.commands.vp import run_audit
    from judgeaudit.datasets.demo import vp_demo_sets

    kw = {"mode": "both", "permutations": 2, "n_boot": 50}
    one, two = run_audit(vp_demo_sets(), jobs=1, **kw), run_audit(vp_demo_sets(), jobs=2, **kw)
    assert len(one.sets) >= 4 and len(one.transfer) >= 6 and one.to_dict() == two.to_dict()


def test_transfer_sources_are_dealt_into_balanced_chunks_per_mode():
    """Each mode's sources go into ``n_chunks`` chunks, the largest first to the lightest chunk:
    every source in exactly one chunk of its mode, every chunk scored on all of the mode's sets."""
    from types import SimpleNamespace

    from judgeaudit.analyses.validation_power.audit import _transfer_chunks

    sizes = {"a": 900, "b": 500, "c": 400, "d": 300, "e": 100}
    prepared = {(k, m): SimpleNamespace(n=v if m == "item" else v // 2) for k, v in sizes.items()
                for m in ("item", "paired")}
    chunks = _transfer_chunks(prepared, n_chunks=2)
    assert len(chunks) == 4
    for mode, (first, second) in (("item", chunks[:2]), ("paired", chunks[2:])):
        names = [[n for n, _ in c[0]] for c in (first, second)]
        assert names == [["a", "d"], ["b", "c", "e"]]   # 900+300 and 500+400+100
        assert all(len(c[1]) == 5 and all(prepared[(n, mode)] is p for n, p in c[1]) for c in (first, second))
    assert len(_transfer_chunks(prepared, n_chunks=1)) == 2
    assert [len(c[0]) for c in _transfer_chunks({("x", "item"): SimpleNamespace(n=3)}, n_chunks=4)] == [1]


@pytest.mark.data
def test_transfer_scores_equal_between_routes(data_dir):
    """Transfer on the fast route reuses each target's n-gram counts across sources (column
    selection instead of re-analysis): every transfer κ and accuracy equals the reference route's,
    on trimmed shared sets of both modes and label spaces."""
    from judgeaudit.analyses.validation_power import audit_validation_power

    names = ["llmbar:Natural", "judgebench:gpt-4o-2024-05-13", "halueval:qa", "gsm8k:pairs", "frank", "halueval:general"]
    specs = _specs(data_dir)
    tables = {n: load_set(specs[n]) for n in names}
    kw = {"modes": ("item", "paired"), "n_permutations": 0, "n_boot": 10, "members": ["length_only"]}
    fast = audit_validation_power(tables, route="fast", **kw).to_dict()["transfer"]
    ref = audit_validation_power(tables, route="reference", **kw).to_dict()["transfer"]
    assert fast == ref
    admitted = [t for t in fast if t["admitted"]]
    assert len(admitted) >= 10 and all(set(t["members"]) == {"length_only", "numeric_surface", "surface_ngram"}
                                       for t in admitted)


@pytest.mark.parametrize("n_classes, seed", [(2, 27), (3, 2)])
def test_transfer_model_on_the_ngram_columns_is_the_estimators(n_classes, seed):
    """The fast route fits a transfer source's n-gram member on its row space and maps the model
    back to the n-gram columns, so a target is scored by one sparse product: the coefficients,
    decisions and predictions of scikit-learn's estimator fit on the sparse columns, binary and
    multinomial."""
    from judgeaudit.analyses.validation_power.transfer import _fit_member

    x, y = _sparse_design(n_classes, seed)
    xt, _ = _sparse_design(n_classes, seed + 100)
    fast, ref = _fit_member(x, y, "fast"), _fit_member(x, y, "reference")
    assert fast.coef.shape == (x.shape[1], 1 if n_classes == 2 else n_classes)
    assert np.array_equal(fast.predict(xt), ref.predict(xt))
    np.testing.assert_allclose(fast.decision_function(xt), ref.decision_function(xt).reshape(xt.shape[0], -1),
                               rtol=0, atol=1e-9)


def _repeated(x, times, seed):
    """The rows of ``x`` each ``times`` times, shuffled: a design whose distinct rows are ``x``'s."""
    from scipy import sparse

    order = np.random.default_rng(seed).permutation(np.repeat(np.arange(x.shape[0]), times))
    return sparse.csr_matrix(x[order]), order


def test_repeated_rows_are_factored_once():
    """``row_space`` factors each distinct row once and gives its copies their first copy's
    coordinates: the same factor as the distinct rows' own basis, every copy's coordinates those
    of its first copy, and the design's Gram matrix."""
    x, _ = _sparse_design(2, 1)
    xr, order = _repeated(x, 4, 0)
    first, of = rowspace.distinct_rows(xr)
    assert len(first) == 241                     # 240 rows of n-grams and the empty row
    assert np.array_equal(of[first], np.arange(241)) and np.array_equal(first, np.sort(first))
    basis, alone = rowspace.row_space(xr), rowspace.row_space(xr[first])
    assert basis.rank == alone.rank == 240
    assert np.array_equal(basis.chol, alone.chol)
    np.testing.assert_allclose(basis.z, basis.z[first][of], rtol=0, atol=0)
    np.testing.assert_allclose(basis.z @ basis.z.T, (xr @ xr.T).toarray(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_classes, seed", [(2, 3), (3, 4)])
def test_design_of_repeated_rows_is_fit_on_its_row_space(n_classes, seed):
    """A design with fewer columns than rows but more than distinct rows (each response repeated)
    is fit on its row space, to the estimator's model on its own sparse columns."""
    from scipy import sparse
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(seed)
    base = normalize(sparse.random(60, 150, density=0.1, random_state=seed, format="csr"))
    x, _ = _repeated(base, 4, seed)
    y = np.array(["c0", "c1", "c2"][:n_classes])[rng.integers(0, n_classes, x.shape[0])]
    tr, te = np.arange(200), np.arange(200, 240)
    ztr, zte, basis = rowspace_reduce(x[tr], x[te])
    assert basis is not None and ztr.shape[1] == basis.rank <= 60
    clf = make_classifier().fit(x[tr], y[tr])
    fit = fit_logistic(basis, y[tr])
    assert fit.n_iter == clf.n_iter_[0]
    assert np.array_equal(fit.predict(zte), clf.predict(x[te]))
    np.testing.assert_allclose(fit.predict_proba(zte), clf.predict_proba(x[te]), rtol=0, atol=1e-9)


def test_audit_of_repeated_responses_is_unchanged():
    """The halueval demo slice with its groups copied twelve times under new ids (every response
    twelve times: the n-gram member's folds have 3,840 training rows, 387 of them distinct),
    audited in item mode: every member's κ, accuracy and null mean and a_imp with its interval and
    null, as the audit gave them when it factored every row of a fold (values recorded from that
    computation, seed 0)."""
    import pandas as pd

    from judgeaudit.analyses.validation_power import audit_validation_power
    from judgeaudit.datasets.demo import vp_demo_sets

    base = load_set(next(s for s in vp_demo_sets() if s.startswith("halueval")))
    parts = []
    for c in range(12):
        part = base.copy()
        for col in ("group", "item_id", "id", "pair_id"):
            if col in part:
                part[col] = part[col].astype(str) + f"~{c}"
        parts.append(part)
    df = pd.concat(parts, ignore_index=True)
    m = audit_validation_power({"halueval": df}, modes=("item",), n_permutations=4, seed=0, n_boot=50).sets[0]
    assert m.n == 4800 and m.a_imp_member == "surface_ngram"
    assert m.a_imp == pytest.approx(1.0, abs=1e-12) and m.a_imp_ci == pytest.approx((1.0, 1.0), abs=1e-12)
    assert m.a_imp_null_mean == pytest.approx(0.011354166666666665, abs=1e-12)
    want = {"length_only": (0.8200000000000001, 0.91, 0.0016666666666666774),
            "numeric_surface": (0.8320833333333333, 0.9160416666666666, -0.004895833333333349),
            "surface_ngram": (1.0, 1.0, -0.016041666666666704),
            "provenance_recoverable": (1.0, 1.0, -0.022083333333333344)}
    assert {s.name: (s.kappa, s.accuracy, s.null_mean) for s in m.members} == {
        k: pytest.approx(v, abs=1e-12) for k, v in want.items()}


def test_row_space_products_repeat_a_copys_original():
    """A copy's row of ``times`` is its original's, and ``times_t`` adds a copy's weight to its
    original's: both equal the products with the design's coordinates ``z`` (rows in pivot order)."""
    x, _ = _sparse_design(3, 2)
    xr, _ = _repeated(x, 3, 1)
    basis = rowspace.row_space(xr)
    assert len(basis.copies) == xr.shape[0] - 241
    rng = np.random.default_rng(5)
    w, g = rng.normal(size=(basis.rank, 4)), rng.normal(size=(xr.shape[0], 4))
    np.testing.assert_allclose(basis.times(w), basis.z[basis.order] @ w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(basis.times_t(g), basis.z[basis.order].T @ g, rtol=0, atol=1e-12)

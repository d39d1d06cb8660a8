"""The fast route of the validation-power audit computes the same fitted members as the reference
route (issue 15): the same n-gram counts, designs equal to rounding, bit-identical lbfgs
coefficients on equal designs, and — on every shared labelled set, both modes, every member,
observed and permuted labels — the same pooled out-of-fold predictions.

The shared sets are trimmed to ``MAX_ROWS`` rows (whole groups, the registry's deterministic
``max_rows``) and one permutation: ~30 s of CPU (measured), so the test stays near a minute; the
routes differ in arithmetic only, never in which rows they see, so the trim does not weaken the
comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgeaudit.analyses.validation_power import family
from judgeaudit.analyses.validation_power.family import (
    MEMBERS,
    PROVENANCE_MEMBER,
    _Designs,
    _Provenance,
    binary_lbfgs_coef,
    make_classifier,
    ngram_counts,
    oof_predictions,
    oof_predictions_many,
    reference_ngram_counts,
)
from judgeaudit.analyses.validation_power.modes import has_condition, is_paired_table, prepare_item, prepare_paired
from judgeaudit.analyses.validation_power.nulls import label_permutations, make_folds
from shared_sets import labelled_set_specs, trimmed
from judgeaudit.datasets.registry import load_set

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


@pytest.mark.parametrize("p, share", [(1, 0.5), (10, 0.2), (120, 0.35)])
def test_lean_lbfgs_is_bit_identical_to_logistic_regression(p, share):
    rng = np.random.default_rng(p)
    x = rng.normal(size=(200, p))
    y = np.where(rng.random(200) + 0.3 * x[:, 0] < share, "preferred", "rejected")
    clf = make_classifier().fit(x, y)
    w = binary_lbfgs_coef(x, y, np.unique(y))
    assert np.array_equal(w[:-1], clf.coef_[0]) and w[-1] == clf.intercept_[0]
    xt = rng.normal(size=(50, p))
    assert np.array_equal(family._fit_predict(x, y, xt, "fast"), clf.predict(xt))


def test_cross_product_splits_columns_between_dense_and_sparse_products():
    """``_cross`` puts each column in the cheaper of a dense BLAS block and the sparse product:
    with a few dense columns and many rare ones both parts are used, and the result equals the
    sparse product ``a @ bᵀ`` to rounding, for a Gram matrix (``a is b``) and a cross product."""
    from scipy import sparse

    rng = np.random.default_rng(7)
    common = sparse.random(500, 40, density=0.7, random_state=1, format="csr")
    rare = sparse.random(500, 3000, density=0.003, random_state=2, format="csr")
    x = sparse.hstack([common, rare]).tocsr()
    a, b = x[:350], x[350:]
    nnz = np.diff(a.tocsc().indptr).astype(float)
    dense = family._SPARSE_PRODUCT_COST * nnz * nnz > a.shape[0] ** 2
    assert 0 < dense.sum() < len(dense)
    np.testing.assert_allclose(family._cross(a, a), (a @ a.T).toarray(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(family._cross(b, a), (b @ a.T).toarray(), rtol=0, atol=1e-12)
    dense_b = rng.normal(size=(5, x.shape[1]))
    np.testing.assert_allclose(family._cross(dense_b, a), dense_b @ a.T.toarray(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n, p", [(300, 1), (400, 10), (600, 600)])
def test_lockstep_fits_are_each_fit_alone(n, p):
    """``binary_lbfgs_coefs`` runs scipy's L-BFGS-B for many label vectors in lockstep, sharing the
    matrix products: every fit's coefficients equal the lone fit's (``binary_lbfgs_coef``, itself
    bit-identical to LogisticRegression) to rounding, and so do its predictions — including a
    label vector with one class very rare and a perfectly separable one (large coefficients, many
    iterations)."""
    rng = np.random.default_rng(n + p)
    x = rng.normal(size=(n, p)) / np.sqrt(p)
    y0 = np.where(x[:, 0] + rng.normal(0, 0.5, n) > 0, "A", "B")
    ys = [y0, *[rng.permutation(y0) for _ in range(6)], np.where(np.arange(n) < 5, "A", "B"),
          np.where(x[:, 0] > 0, "A", "B")]
    classes = [np.unique(y) for y in ys]
    xt = rng.normal(size=(100, p)) / np.sqrt(p)
    together = family.binary_lbfgs_coefs(x, ys, classes)
    for y, c, w in zip(ys, classes, together):
        alone = binary_lbfgs_coef(x, y, c)
        np.testing.assert_allclose(w, alone, rtol=1e-9, atol=1e-9)
        assert np.array_equal(family._decision(xt, w) > 0, family._decision(xt, alone) > 0)
    assert family.binary_lbfgs_coefs(x, [], []) == []


def _specs(d) -> dict[str, str]:
    return {k: trimmed(v, MAX_ROWS) for k, v in labelled_set_specs(d).items()}


def _probabilities(x_tr, y_tr, x_te, route):
    classes = np.unique(y_tr)
    if route == "reference":
        return make_classifier().fit(x_tr, y_tr).predict_proba(x_te)[:, 1]
    w = binary_lbfgs_coef(x_tr, y_tr, classes)
    return 1.0 / (1.0 + np.exp(-(x_te @ w[:-1] + w[-1])))


@pytest.mark.data
def test_fast_route_gives_the_reference_oof_predictions_on_every_shared_set(data_dir):
    from threadpoolctl import threadpool_limits

    specs = _specs(data_dir)
    assert len(specs) >= 12
    compared = 0
    with threadpool_limits(limits=1, user_api="blas"):
        for name, spec in specs.items():
            df = load_set(spec)
            preps = [prepare_item(df)] + ([prepare_paired(df)] if is_paired_table(df) else [])
            for prep in preps:
                if len(np.unique(prep.y)) < 2:
                    continue
                plan = make_folds(prep.groups)
                fast, ref = _Designs(prep, plan, route="fast"), _Designs(prep, plan, route="reference")
                labels = [prep.y, *label_permutations(prep, 2, 1)]
                for member in MEMBERS:
                    if member == PROVENANCE_MEMBER:
                        if has_condition(prep):
                            pf, pr = _Provenance(fast), _Provenance(ref)
                            for y in labels:
                                assert np.array_equal(pf.predict(y), pr.predict(y)), (name, prep.mode, member)
                                compared += 1
                        continue
                    # the audit's call: every label vector's fits in lockstep (binary_lbfgs_coefs)
                    together = oof_predictions_many(fast, member, labels)
                    for y, pred in zip(labels, together):
                        want = oof_predictions(ref, member, y)
                        assert np.array_equal(pred, want), (name, prep.mode, member)
                        assert np.array_equal(oof_predictions(fast, member, y), want), (name, prep.mode, member)
                        compared += 1
                    # probabilities of the observed-label fit, fold by fold
                    for k, (train, test) in enumerate(plan.splits()):
                        if len(np.unique(prep.y[train])) < 2:
                            continue
                        (ftr, fte), (rtr, rte) = fast.fold(member, k, train, test), ref.fold(member, k, train, test)
                        np.testing.assert_allclose(
                            _probabilities(ftr, prep.y[train], fte, "fast"),
                            _probabilities(rtr, prep.y[train], rte, "reference"), rtol=0, atol=PROBA_ATOL,
                            err_msg=f"{name} {prep.mode} {member} fold {k}")
    # 12+ sets, ~20 (set, mode) pairs, 3 members (+ provenance), observed + 2 permutations
    assert compared >= 150


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

    names = ["llmbar:Natural", "judgebench", "halueval:qa", "gsm8k:pairs", "frank", "halueval:general"]
    specs = _specs(data_dir)
    tables = {n: load_set(specs[n]) for n in names}
    kw = {"modes": ("item", "paired"), "n_permutations": 0, "n_boot": 10, "members": ["length_only"]}
    fast = audit_validation_power(tables, route="fast", **kw).to_dict()["transfer"]
    ref = audit_validation_power(tables, route="reference", **kw).to_dict()["transfer"]
    assert fast == ref
    admitted = [t for t in fast if t["admitted"]]
    assert len(admitted) >= 10 and all(set(t["members"]) == {"length_only", "numeric_surface", "surface_ngram"}
                                       for t in admitted)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_transfer_model_mapped_to_the_ngram_columns_predicts_as_the_projected_one(n_classes):
    """The fast route scores a transfer target with the source's row-space model mapped back to
    the n-gram columns (``Q v``), not by projecting the target onto the source's basis: the same
    predictions as scikit-learn's estimator on the projected target, binary and multinomial."""
    from scipy import sparse
    from sklearn.preprocessing import normalize

    from judgeaudit.analyses.validation_power.family import rowspace_basis, rowspace_eigen
    from judgeaudit.analyses.validation_power.transfer import _on_columns

    rng = np.random.default_rng(n_classes)
    x = normalize(sparse.random(260, 3000, density=0.02, random_state=n_classes, format="csr"))
    y = np.array(["c0", "c1", "c2"][:n_classes])[(x @ rng.normal(size=(3000, n_classes))).argmax(axis=1)]
    xs, xt = x[:200], x[200:]
    z, project = rowspace_basis(xs)
    clf = make_classifier().fit(z, y[:200])
    s, u = rowspace_eigen(xs)
    mapped = _on_columns(clf, xs, s, u)
    assert len(clf.classes_) == n_classes
    assert np.array_equal(mapped.predict(xt), clf.predict(project(xt)))
    np.testing.assert_allclose(np.asarray(xt @ mapped.coef) + mapped.intercept, clf.decision_function(project(xt))
                               .reshape(len(y) - 200, -1), rtol=0, atol=1e-9)

"""The form an n-gram design is fit on (``fitcost.cheapest_form``): its row space while distinct rows
are few against its non-zeros, the sparse design itself when they are many — the same fitted model
either way.

The data: the halueval demo slice and copies of it whose responses are respelled (each copy's
letters through its own permutation of the alphabet), so every copy's responses are new distinct
rows with new n-grams, as in a set of many distinct responses; and copies that repeat every
response, whose distinct rows stay 387 however many copies there are."""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from judgeaudit.analyses.validation_power import fitcost, rowspace
from judgeaudit.analyses.validation_power.audit import audit_validation_power
from judgeaudit.analyses.validation_power.family import _Designs, make_classifier
from judgeaudit.analyses.validation_power.logistic import fit_logistic, fit_logistic_many
from judgeaudit.analyses.validation_power.modes import prepare_item
from judgeaudit.analyses.validation_power.nulls import label_permutations, make_folds
from judgeaudit.datasets.demo import vp_demo_sets
from judgeaudit.datasets.registry import load_set

pytestmark = pytest.mark.usefixtures("one_blas_thread")   # BLAS on one thread, as the audit runs it

PROBA_ATOL = 1e-9
"""Largest difference allowed between the probabilities of the fits on the row space and on the
sparse design. Both run the iterates of one L-BFGS-B fit (the row space's stopping test is taken in
the n-gram columns) and stop at the same iteration (asserted), so they differ by the rounding of
their products (dense triangular against sparse, ~1e-16 relative) carried through a few dozen
iterations: ~1e-13 on these folds. 1e-9 is the tolerance the row-space fit is held to against
scikit-learn's estimator on the sparse design (test_vp_fast_route.py)."""


def _copies(k: int, respell: bool) -> pd.DataFrame:
    """The halueval demo slice ``k`` times under new groups; with ``respell``, copy c ≥ 1's
    responses through the letter permutation drawn with seed c."""
    base = load_set(next(s for s in vp_demo_sets() if s.startswith("halueval")))
    parts = []
    for c in range(k):
        part = base.copy()
        for col in ("group", "pair_id"):
            part[col] = part[col].astype(str) + f"~{c}"
        if respell and c:
            low = string.ascii_lowercase
            perm = "".join(np.random.default_rng(c).permutation(list(low)))
            table = str.maketrans(low + low.upper(), perm + perm.upper())
            for col in ("response_a", "response_b"):
                part[col] = part[col].str.translate(table)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _ngram_fold(df: pd.DataFrame, k: int = 0):
    """(prepared set, fold plan, training rows, test rows, the n-gram member's training and test
    tf-idf rows) of fold ``k`` in item mode."""
    prep = prepare_item(df)
    plan = make_folds(prep.groups, seed=0)
    train, test = list(plan.splits())[k]
    va, _ = _Designs(prep, plan).ngram_responses(k, train)
    return prep, plan, train, test, va[train], va[test]


@pytest.fixture(scope="module")
def distinct10():
    """The slice respelled ×10: 4,000 responses, 3,870 distinct; fold 0 has 3,200 training rows,
    2,969 of them distinct, on the 18,348 n-grams of its vocabulary."""
    return _copies(10, respell=True)


def test_rule_keeps_the_row_space_for_few_distinct_rows_and_takes_the_sparse_design_for_many(distinct10):
    """Lockstep fits of the observed labels and 30 permutations: the slice itself (308 distinct
    training rows) and ten copies repeating its responses (387 distinct rows of 3,200) are fit on
    their row space; ten respelled copies (2,969 distinct rows of 3,200) on the sparse design, and
    so is a lone fit there. A design with no more columns than distinct rows keeps its dense form
    while small and is fit sparse once large."""
    for df, want in ((_copies(1, respell=False), "row_space"), (_copies(10, respell=False), "row_space"),
                     (distinct10, "sparse")):
        *_, x, xt = _ngram_fold(df)
        first, _ = rowspace.distinct_rows(x)
        costs = fitcost.fit_costs(x, first, x_test=xt, n_fits=31)
        assert fitcost.cheapest_form(x, first, x_test=xt, n_fits=31) == want, costs
    assert fitcost.cheapest_form(x, first, n_fits=1) == "sparse"
    assert x.shape[1] > len(first) == 2969                      # the row space was the form it had

    # few columns: 600 rows on 150 of them (dense), and 20,000 rows on 2,000 (sparse)
    small = sparse.random(600, 150, density=0.05, random_state=0, format="csr")
    big = sparse.random(20000, 2000, density=0.01, random_state=1, format="csr")
    for x, want in ((small, "dense"), (big, "sparse")):
        first, _ = rowspace.distinct_rows(x)
        assert x.shape[1] <= len(first)
        assert fitcost.cheapest_form(x, first, n_fits=31) == want


def test_fold_design_takes_the_chosen_form(distinct10):
    """``_Designs.fold`` builds the n-gram member's design in the chosen form: the row space (a
    basis, dense coordinates) on the slice, the sparse design as it is (CSR, no basis) on ten
    respelled copies."""
    for df, on_rows in ((_copies(1, respell=False), True), (distinct10, False)):
        prep, plan, train, test, x, _ = _ngram_fold(df)
        designs = _Designs(prep, plan)
        x_tr, x_te = designs.fold("surface_ngram", 0, train, test, n_fits=31)
        assert (designs.basis("surface_ngram", 0) is not None) is on_rows
        assert sparse.issparse(x_tr) is (not on_rows) and sparse.issparse(x_te) is (not on_rows)
        if not on_rows:
            assert x_tr.format == "csr" and (x_tr != x).nnz == 0


def test_sparse_fits_give_the_row_space_fits_probabilities(distinct10):
    """On each fold of ten respelled copies, the observed labels and two permutations fit in
    lockstep on the sparse design and on the row space: the same iteration counts and predictions,
    probabilities within ``PROBA_ATOL``; and a lone sparse fit is scikit-learn's estimator on the
    sparse design bit for bit."""
    prep, plan, *_ = _ngram_fold(distinct10)
    perms = label_permutations(prep, 2, 1)
    designs = _Designs(prep, plan)
    for k, (train, test) in enumerate(plan.splits()):
        va, _ = designs.ngram_responses(k, train)
        x, xt = va[train], va[test]
        ys = [prep.y[train], *(p[train] for p in perms)]
        basis = rowspace.row_space(x)
        on_rows, on_cols = fit_logistic_many(basis, ys), fit_logistic_many(x, ys)
        zt = basis.project(xt)
        for a, b in zip(on_rows, on_cols, strict=True):
            assert a.n_iter == b.n_iter
            assert np.array_equal(a.predict(zt), b.predict(xt))
            np.testing.assert_allclose(a.predict_proba(zt), b.predict_proba(xt), rtol=0, atol=PROBA_ATOL)
        if k == 0:
            clf, lone = make_classifier().fit(x, ys[0]), fit_logistic(x, ys[0])
            assert np.array_equal(lone.coef.T, clf.coef_) and np.array_equal(lone.intercept, clf.intercept_)
            assert lone.n_iter == clf.n_iter_[0]


def test_audit_headline_is_the_row_space_audits(distinct10, monkeypatch):
    """The audit of ten respelled copies (item mode, 4 permutations) with its n-gram folds fit on
    the sparse design gives the audit fit on the row space — every form kept, the floor raised over
    every cost — to the precision ``judgeaudit vp`` prints (three decimals): each member's κ,
    accuracy and null, a_imp with its interval, null and p-value; and the n-gram member's
    out-of-fold predictions are the same."""
    kw = {"modes": ("item",), "n_permutations": 4, "seed": 0, "n_boot": 50}
    sparse_run = audit_validation_power({"halueval": distinct10}, **kw).sets[0]
    monkeypatch.setattr(fitcost, "KEEP_BELOW", float("inf"))
    rows_run = audit_validation_power({"halueval": distinct10}, **kw).sets[0]

    def headline(m):
        values = [m.a_imp, *m.a_imp_ci, m.a_imp_null_mean, m.a_imp_null_p95, m.a_imp_p_value]
        for s in m.members:
            values += [s.kappa, s.accuracy, s.null_mean, s.null_p95, s.p_value]
        return [m.a_imp_member] + [f"{v:.3f}" for v in values]

    assert headline(sparse_run) == headline(rows_run)
    assert sparse_run.predictions["surface_ngram"].tolist() == rows_run.predictions["surface_ngram"].tolist()

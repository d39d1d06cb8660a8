"""Rogan–Gladen at its edges: exactly 2 labels, one negative, the bootstrap of the counts against a
bootstrap of the rows, the batch form against the single one, and what ``to_dict`` reports."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgeaudit.analyses.calibrate.rogan_gladen import counts, rogan_gladen, rogan_gladen_batch


def _labelled(tp, fn, tn, fp):
    y = np.array([1] * tp + [1] * fn + [0] * tn + [0] * fp, dtype=bool)
    yh = np.array([1] * tp + [0] * fn + [0] * tn + [1] * fp, dtype=bool)
    return y, yh


def test_counts_of_a_two_by_two_table():
    y, yh = _labelled(3, 2, 5, 1)
    assert counts(y, yh) == (3, 2, 5, 1)


def test_exactly_two_labels_give_the_raw_rate_and_no_interval():
    y, yh = _labelled(1, 0, 1, 0)
    r = rogan_gladen(y, yh, np.array([1, 0, 0, 0, 1] * 4, dtype=bool), n_boot=200)
    assert (r.tpr, r.tnr, r.q) == (1.0, 1.0, 0.4) and r.estimate == pytest.approx(0.4, abs=1e-12)
    assert r.ci is None and "no false negative and no false positive among 2 labels" in r.note
    assert r.n_labelled == 2 and r.n_unlabelled == 20


def test_one_negative_among_the_labels():
    y, yh = _labelled(6, 3, 1, 0)
    r = rogan_gladen(y, yh, np.array([1] * 3 + [0] * 7, dtype=bool), n_boot=200)
    assert r.tnr == 1.0 and r.tpr == pytest.approx(6 / 9)
    assert r.tnr_ci == pytest.approx(proportion_confint(1, 1, alpha=0.05, method="beta"))
    assert r.tpr_ci == pytest.approx(proportion_confint(6, 9, alpha=0.05, method="beta"))
    assert r.estimate == pytest.approx(0.3 / (6 / 9))
    assert r.ci is None and "no false positive among 10 labels" in r.note
    assert rogan_gladen(*_labelled(6, 3, 0, 0), np.ones(10, bool), n_boot=50).tnr_ci is None


def test_the_count_bootstrap_is_the_row_bootstrap():
    """The interval resamples the four cells and the unlabelled positives; a bootstrap of the rows (labelled
    and unlabelled, independently) gives the same distribution, so the same interval up to Monte Carlo error."""
    y, yh = _labelled(30, 10, 45, 15)
    yu = np.array([1] * 90 + [0] * 110, dtype=bool)
    r = rogan_gladen(y, yh, yu, n_boot=6000, seed=3)
    rng = np.random.default_rng(9)
    i = rng.integers(0, len(y), (6000, len(y)))
    j = rng.integers(0, len(yu), (6000, len(yu)))
    yb, hb = y[i], yh[i]
    tpr = (yb & hb).sum(1) / yb.sum(1)
    tnr = (~yb & ~hb).sum(1) / (~yb).sum(1)
    q = yu[j].mean(1)
    p = np.clip((q + tnr - 1) / (tpr + tnr - 1), 0, 1)
    want = np.percentile(p, [2.5, 97.5])
    assert r.estimate == pytest.approx((0.45 + 0.75 - 1) / (0.75 + 0.75 - 1))
    assert r.ci == pytest.approx(tuple(want), abs=0.02)
    assert r.undefined_resamples == 0 and r.note is None
    narrower = rogan_gladen(y, yh, yu, n_boot=6000, seed=3, level=0.8)
    assert narrower.ci[0] > r.ci[0] and narrower.ci[1] < r.ci[1]
    d = r.to_dict()
    assert d["width"] == pytest.approx(r.ci[1] - r.ci[0]) and d["ci"] == list(r.ci)
    assert d["table"] == {"tp": 30, "fn": 10, "tn": 45, "fp": 15} and d["n_labelled"] == 100
    assert d["tnr_ci"] == pytest.approx(list(proportion_confint(45, 60, alpha=0.05, method="beta")))


def test_too_many_undefined_resamples_are_counted_and_named():
    y, yh = _labelled(1, 1, 2, 1)
    r = rogan_gladen(y, yh, np.array([1, 0] * 10, dtype=bool), n_boot=400)
    assert r.ci is None and r.undefined_resamples > 10
    assert r.note.startswith(f"no interval: {r.undefined_resamples} of 400 resamples have TPR + TNR ≤ 1")


def test_the_batch_form_is_the_single_one():
    cells = [(30, 10, 45, 15), (3, 0, 6, 1), (10, 10, 10, 10), (40, 5, 50, 5)]
    tp, fn, tn, fp = (np.array(c) for c in zip(*cells, strict=True))
    k = np.array([90, 80, 100, 60])
    est, lo, hi = rogan_gladen_batch(tp, fn, tn, fp, k, 200, n_boot=3000, seed=2)
    for i, c in enumerate(cells):
        y, yh = _labelled(*c)
        r = rogan_gladen(y, yh, np.array([1] * k[i] + [0] * (200 - k[i]), dtype=bool), n_boot=3000, seed=5)
        if r.estimate is None:
            assert np.isnan(est[i]) and np.isnan(lo[i])
            continue
        assert est[i] == pytest.approx(r.estimate, abs=1e-12)
        if r.ci is None:
            assert np.isnan(lo[i]) and np.isnan(hi[i])
        else:
            assert (lo[i], hi[i]) == pytest.approx(r.ci, abs=0.03)
    _, lo2, _ = rogan_gladen_batch(tp, fn, tn, fp, k, 200, n_boot=300, seed=2, refuse=False)
    assert not np.isnan(lo2[1]) and np.isnan(lo2[2])          # kept with an empty cell; none where undefined


def test_the_interval_is_printed_while_at_most_the_tail_share_of_resamples_is_undefined():
    """The rule: an interval only when at most (1 − level)/2 of the resamples have no estimate."""
    yu = np.array([1, 0, 0, 0] * 50, dtype=bool)
    r = rogan_gladen(*_labelled(4, 1, 9, 3), yu, n_boot=4000, seed=0)     # about 2.2% undefined: printed
    assert 0.0167 * 4000 < r.undefined_resamples <= 0.025 * 4000 and r.ci is not None
    r = rogan_gladen(*_labelled(3, 1, 6, 1), yu, n_boot=4000, seed=0)     # about 4.3%: refused
    assert 0.025 * 4000 < r.undefined_resamples < 0.1 * 4000 and r.ci is None
    r = rogan_gladen(*_labelled(4, 1, 9, 2), yu, n_boot=400, seed=59)     # exactly 2.5% (10 of 400): printed
    assert r.undefined_resamples == 10 and r.ci is not None


def test_the_batch_refuses_an_interval_as_the_single_form_does():
    """More than (1 − level)/2 of the resamples undefined (labels 3/1/6/1: about 4% have TPR + TNR ≤ 1) gives
    no interval in the batch form too; a well-separated table in the same batch keeps its interval, and
    ``refuse=False`` keeps both."""
    tp, fn, tn, fp = np.array([3, 40]), np.array([1, 5]), np.array([6, 50]), np.array([1, 5])
    k = np.array([50, 50])
    single = rogan_gladen(*_labelled(3, 1, 6, 1), np.array([1, 0, 0, 0] * 50, dtype=bool), n_boot=4000, seed=0)
    assert single.ci is None and single.undefined_resamples > 0.025 * 4000
    est, lo, hi = rogan_gladen_batch(tp, fn, tn, fp, k, 200, n_boot=4000, seed=0)
    assert est[0] == pytest.approx(single.estimate, abs=1e-12)
    assert np.isnan(lo[0]) and np.isnan(hi[0])
    assert np.isfinite(lo[1]) and np.isfinite(hi[1]) and lo[1] < est[1] < hi[1]
    _, lo2, hi2 = rogan_gladen_batch(tp, fn, tn, fp, k, 200, n_boot=4000, seed=0, refuse=False)
    assert np.isfinite(lo2).all() and np.isfinite(hi2).all() and (lo2[1], hi2[1]) == (lo[1], hi[1])


def test_a_result_without_labels_has_an_empty_table():
    """The default table is all zeros (tp, fn, tn, fp); a table of other than four cells is refused."""
    from judgeaudit.analyses.calibrate.rogan_gladen import RoganGladen

    r = RoganGladen(None, None, 0.5, None, None, 0, 10, 0, 0)
    assert r.to_dict()["table"] == {"tp": 0, "fn": 0, "tn": 0, "fp": 0}
    with pytest.raises(ValueError):
        RoganGladen(None, None, 0.5, None, None, 3, 10, 0, 0, cells=(1, 1, 1)).to_dict()


def test_exactly_the_tail_share_undefined_at_a_level_whose_share_is_exact():
    """At level 0.75 the tail share (1 − level)/2 = 0.125 is exact in floating point: 50 of 400 undefined
    resamples is at most that share, so the interval is printed."""
    r = rogan_gladen(*_labelled(3, 1, 3, 1), np.array([1, 0, 0, 0] * 50, dtype=bool), n_boot=400, seed=22,
                     level=0.75)
    assert r.undefined_resamples == 50 and r.ci is not None and r.note is None


def test_exactly_the_tail_share_undefined_where_the_share_rounds_below_it():
    """At level 0.9, (1 − 0.9)/2 · 400 is 19.999999999999996 in floating point: 20 of 400 undefined resamples
    (exactly 5%) is at most the tail share, so both forms print the interval."""
    yu = np.array([1, 0, 0, 0] * 50, dtype=bool)
    r = rogan_gladen(*_labelled(3, 1, 6, 1), yu, n_boot=400, seed=4, level=0.9)
    assert r.undefined_resamples == 20 and r.ci is not None and r.note is None
    est, lo, hi = rogan_gladen_batch(np.array([3]), np.array([1]), np.array([6]), np.array([1]), np.array([50]), 200,
                                     n_boot=400, seed=4, level=0.9)
    assert est[0] == pytest.approx(r.estimate, abs=1e-12)
    assert (lo[0], hi[0]) == pytest.approx(r.ci, abs=1e-12)


def test_one_undefined_resample_past_the_tail_share_is_refused():
    """10 of 400 undefined at level 0.95 is the tail share (printed: seed 59 above); 11 is one past it."""
    r = rogan_gladen(*_labelled(4, 1, 9, 2), np.array([1, 0, 0, 0] * 50, dtype=bool), n_boot=400, seed=66)
    assert r.undefined_resamples == 11 and r.ci is None and r.note.startswith("no interval: 11 of 400")


def test_tnr_has_its_exact_interval_when_negatives_are_half_flagged():
    """TN = FP (2 and 2): TNR 0.5 with its Clopper–Pearson interval, as statsmodels' 'beta' method gives it."""
    r = rogan_gladen(*_labelled(3, 1, 2, 2), np.array([1, 0, 0, 0] * 50, dtype=bool), n_boot=200, seed=0)
    assert r.tnr == 0.5
    assert r.tnr_ci == pytest.approx(proportion_confint(2, 4, alpha=0.05, method="beta"), abs=1e-12)
    assert r.tpr_ci == pytest.approx(proportion_confint(3, 4, alpha=0.05, method="beta"), abs=1e-12)

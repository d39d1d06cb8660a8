"""Judge migration (analyses.migrate): the paired statistics against scikit-learn/scipy, the equivalence tests'
size and power on planted judges, the link, and the verdicts EQUIVALENT / LINKABLE / NOT_COMPARABLE / BLIND."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from judgeaudit.analyses.migrate import Link, MigrateResult, migrate
from judgeaudit.analyses.migrate import equivalence as eq
from judgeaudit.analyses.migrate import simulate as sm
from judgeaudit.analyses.migrate import statistics as st
from judgeaudit.analyses.migrate.link import cross_fit, fit_link

NINE = {"kind": "integer", "min": 1, "max": 9, "higher": "better"}
TEN = {"kind": "integer", "min": 1, "max": 10, "higher": "better"}


def _mc_bound(rate: float, reps: int) -> float:
    """The largest observed rate consistent (one-sided 99%) with a true rate of ``rate`` over ``reps`` runs."""
    return rate + 2.33 * np.sqrt(rate * (1 - rate) / reps)


# ---- the statistics ---------------------------------------------------------------------------------------

def test_quadratic_kappa_is_sklearns_on_every_scale_point():
    rng = np.random.default_rng(0)
    x, y = rng.integers(1, 10, 300).astype(float), rng.integers(1, 10, 300).astype(float)
    y[:150] = x[:150]
    s = st.cluster_sums(np.arange(300), st.quadratic_kappa_columns(x, y), 300).sum(axis=0, keepdims=True)
    ours = float(st.quadratic_kappa_from(s)[0])
    assert ours == pytest.approx(cohen_kappa_score(x, y, weights="quadratic", labels=list(range(1, 10))), abs=1e-12)


def test_cohen_kappa_and_raw_agreement_are_sklearns():
    rng = np.random.default_rng(1)
    cats = np.array([0.0, 0.5, 1.0])
    x, y = rng.choice(cats, 200), rng.choice(cats, 200)
    y[:100] = x[:100]
    s = st.cluster_sums(np.arange(200), st.category_columns(x, y, cats), 200).sum(axis=0, keepdims=True)
    k, a = st.cohen_kappa_from(s, 3)
    assert float(k[0]) == pytest.approx(cohen_kappa_score(x.astype(str), y.astype(str)), abs=1e-12)
    assert float(a[0]) == pytest.approx(np.mean(x == y))


def test_kendall_tau_b_is_scipys_with_ties():
    a = np.array([[1.0, 2.0, 2.0, 4.0, 3.0], [5.0, 1.0, 3.0, 3.0, 2.0]])
    b = np.array([[2.0, 1.0, 3.0, 4.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    ours = st.kendall_tau_b(a, b)
    for row in range(2):
        assert ours[row] == pytest.approx(kendalltau(a[row], b[row]).statistic, abs=1e-12)


def test_a_resample_row_is_the_statistic_on_the_resampled_anchors():
    t = sm.same_judge(120, 3)
    r = migrate(t, old_scale=NINE, new_scale=NINE, n_boot=5, seed=4, link=False)
    from judgeaudit.stats.resample import bootstrap_counts

    w = bootstrap_counts(120, 5, 4)[2]
    idx = np.repeat(np.arange(120), w)
    d = (t["new"] - t["old"]).to_numpy()[idx]
    # row 2 of the resamples: the mean difference of the anchors drawn, and the BA upper limit
    from judgeaudit.analyses.migrate.migration import _Design

    design = _Design(t, 5, 4)
    both = np.ones(120, bool)
    rows = st.mean_from(design.sums(st.mean_columns((t["new"] - t["old"]).to_numpy(float), both)))
    assert rows[3] == pytest.approx(d.mean())
    assert r.quantity("mean_diff").estimate == pytest.approx((t["new"] - t["old"]).mean())


def test_bland_altman_limits_are_the_textbook_formula():
    t = sm.transformed(300, 2)
    r = migrate(t, old_scale=NINE, new_scale=TEN, n_boot=50, link=False)
    d = (t["new"] - t["old"]).to_numpy()
    ba = r.quantity("bland_altman")
    assert ba.extra["lower"] == pytest.approx(d.mean() - 1.959963984540054 * d.std(ddof=1))
    assert ba.extra["upper"] == pytest.approx(d.mean() + 1.959963984540054 * d.std(ddof=1))


# ---- the tests of equivalence -----------------------------------------------------------------------------

def test_tost_size_at_the_margin_is_at_most_alpha():
    """A true mean difference exactly at the margin is declared equivalent in at most 5% of designs (the TOST's
    size), at 200 and 2,000 anchors: the paired t TOST, vectorised over designs and checked against statsmodels'
    ``ttost_paired`` on the first few."""
    from scipy import stats
    from statsmodels.stats.weightstats import ttost_paired

    reps, m = 4000, 0.4
    rng = np.random.default_rng(11)
    for n in (200, 2000):
        d = (rng.random((reps, n)) < m).astype(float)    # one grade higher on 40% of anchors: mean diff = margin
        mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / np.sqrt(n)
        p = np.maximum(stats.t.sf((mean + m) / se, n - 1), stats.t.cdf((mean - m) / se, n - 1))
        for r in range(3):
            assert p[r] == pytest.approx(ttost_paired(d[r], np.zeros(n), -m, m)[0], rel=1e-9)
            assert (eq.two_sided(mean[r], mean[r:r + 1], m, n=n, paired=(d[r], np.zeros(n)))["status"]
                    == "equivalent") == (p[r] < 0.05)
        assert np.mean(p < 0.05) <= _mc_bound(0.05, reps), (n, np.mean(p < 0.05))


def test_zero_width_differences_are_widened_to_what_the_anchors_support():
    """Thirty anchors graded identically by both judges do not prove a difference below the margin: the
    interval is widened to the share of anchors that could differ unseen, and the quantity is blind."""
    out = eq.two_sided(0.0, np.zeros(200), 0.4, n=30, floor=8 * eq.unseen_share(30))
    assert out["tost_interval"][1] - out["tost_interval"][0] > 0
    assert out["status"] == "blind" and out["anchors_needed"] > 30
    out = eq.two_sided(0.0, np.zeros(200), 0.4, n=5000, floor=8 * eq.unseen_share(5000))
    assert out["status"] == "equivalent"


def test_anchors_needed_scale_with_the_square_of_the_distance():
    assert eq.anchors_needed(100, 0.2, 0.1) == pytest.approx(
        100 * (2 * (1.6448536 + 0.8416212) / 1.6448536) ** 2, abs=1)


# ---- verdicts on planted judges ---------------------------------------------------------------------------

def _verdicts(gen, n: int, reps: int, new_scale=NINE, n_boot: int = 100) -> dict[str, float]:
    out: dict[str, int] = {}
    for s in range(reps):
        v = migrate(gen(n, s), old_scale=NINE, new_scale=new_scale, n_boot=n_boot, seed=s).verdict
        out[v] = out.get(v, 0) + 1
    return {k: v / reps for k, v in out.items()}


def test_the_same_judge_twice_is_equivalent():
    """Power: the same judge graded twice is EQUIVALENT in ≥ 80% of designs at 500 anchors and ≥ 95% at 2,000."""
    assert _verdicts(sm.same_judge, 500, 25).get("EQUIVALENT", 0) >= 0.8
    assert _verdicts(sm.same_judge, 2000, 12).get("EQUIVALENT", 0) >= 0.95


def test_a_judge_at_the_margin_is_rarely_equivalent():
    """A judge one grade higher on 40% of anchors (a true mean difference of exactly the 0.4 margin) is
    EQUIVALENT in at most 5% of designs (Monte Carlo bound); the link absorbs the shift: LINKABLE."""
    reps = 40
    v = _verdicts(lambda n, s: sm.shifted_at(n, s, 0.4), 1000, reps)
    assert v.get("EQUIVALENT", 0) <= _mc_bound(0.05, reps)
    assert v.get("LINKABLE", 0) >= 0.8


def test_a_monotone_transform_is_linkable_and_the_link_error_shrinks():
    v = _verdicts(sm.transformed, 1000, 12, new_scale=TEN)
    assert v.get("LINKABLE", 0) >= 0.9
    err = []
    grid = np.arange(2.0, 10.0)   # the interior of the new scale, where anchors are
    truth = _true_link()
    for n in (200, 800, 3200):
        e = []
        for s in range(6):
            t = sm.transformed(n, 100 + s)
            link = fit_link(t["new"].to_numpy(float), t["old"].to_numpy(float), np.arange(n),
                            np.ones((1, n)), increasing=True, level=0.95, old_judge="o", new_judge="n",
                            old_scale=NINE, new_scale=TEN)
            e.append(np.mean(np.abs(link.apply(grid) - truth)))
        err.append(np.mean(e))
    assert err[0] > err[1] > err[2]


def _true_link() -> np.ndarray:
    """The equipercentile link of the planted populations on the grid, from one very large draw."""
    big = sm.transformed(200_000, 999)
    n = len(big)
    return fit_link(big["new"].to_numpy(float), big["old"].to_numpy(float), np.arange(n), np.ones((1, n)),
                    increasing=True, level=0.95, old_judge="o", new_judge="n", old_scale=NINE,
                    new_scale=TEN).apply(np.arange(2.0, 10.0))


def test_a_judge_of_another_construct_is_not_comparable():
    assert _verdicts(sm.unrelated, 500, 6).get("NOT_COMPARABLE", 0) == 1.0


def test_thirty_anchors_are_blind_and_say_how_many_are_needed():
    """At 30 anchors the same judge twice is mostly BLIND (a few designs still pass), and each BLIND verdict
    names the anchors needed."""
    results = [migrate(sm.same_judge(30, s), old_scale=NINE, new_scale=NINE, n_boot=200, seed=s) for s in range(20)]
    blind = [r for r in results if r.verdict == "BLIND"]
    assert len(blind) >= 10
    assert sum(r.verdict == "NOT_COMPARABLE" for r in results) <= 1
    for r in blind:
        m = re.search(r"about (\d+) would be needed", r.reasons[0])
        deciding = r.linked or r.raw
        assert m and int(m[1]) > 30 and int(m[1]) == max(q.anchors_needed or 0 for q in deciding)


def test_identical_verdicts_on_many_anchors_are_equivalent():
    t = sm.same_judge(2000, 1)
    t["new"] = t["old"]
    r = migrate(t.drop(columns="old_regrade"), old_scale=NINE, new_scale=NINE, n_boot=200)
    assert r.verdict == "EQUIVALENT"
    assert r.quantity("mean_diff").tost_interval[1] > 0   # widened, never a zero-width interval
    for q in r.raw:
        assert q.ci[1] > q.ci[0], q.name                      # no printed interval has zero width
    share = r.quantity("raw_agreement")
    assert share.estimate == 1.0 and share.ci[1] == 1.0 and share.ci[0] < 1.0   # inside [0, 1]


def test_clusters_are_resampled_whole():
    t = sm.same_judge(400, 2)
    t["cluster"] = np.repeat(np.arange(40), 10).astype(str)
    r = migrate(t, old_scale=NINE, new_scale=NINE, n_boot=200)
    assert r.unit == "cluster" and r.n_clusters == 40 and r.quantity("mean_diff").n_units == 40
    assert "bootstrap" in r.quantity("mean_diff").method


def test_an_audit_worse_beyond_its_margin_is_not_comparable():
    from judgeaudit.analyses.migrate import audit_quantity

    def audit(diff, ci90, ci95):
        return audit_quantity("validity.R", "R, new − old", diff, ci90, ci95, margin=0.1, n=48, unit="base item",
                              definition="planted")

    worse = audit(-0.3, (-0.38, -0.22), (-0.4, -0.2))
    assert worse.decisive and worse.status == "not_equivalent"
    r = migrate(sm.same_judge(2000, 1), old_scale=NINE, new_scale=NINE, n_boot=200, audits=[worse])
    assert r.verdict == "NOT_COMPARABLE" and "audit" in r.reasons[-1]
    unclear = audit(-0.1, (-0.2, 0.0), (-0.22, 0.02))               # straddles the margin: the runs cannot tell
    assert unclear.status == "blind"
    r = migrate(sm.same_judge(2000, 1), old_scale=NINE, new_scale=NINE, n_boot=200, audits=[unclear])
    assert r.verdict == "BLIND" and "audits cannot tell" in r.reasons[-1]
    fine = audit(0.0, (-0.05, 0.05), (-0.06, 0.06))
    r = migrate(sm.same_judge(2000, 1), old_scale=NINE, new_scale=NINE, n_boot=200, audits=[fine])
    assert fine.status == "equivalent" and r.verdict == "EQUIVALENT"


def test_pairwise_choices_and_labels():
    rng = np.random.default_rng(5)
    n = 800
    truth = rng.random(n) < 0.5
    def judge(acc):
        right = rng.random(n) < acc
        return np.where(right == truth, 1.0, 0.0)
    t = pd.DataFrame({"anchor_id": np.arange(n).astype(str), "old": judge(0.8), "new": judge(0.8),
                      "old_regrade": judge(0.8), "label": np.where(rng.random(n) < 0.5, truth.astype(float), np.nan)})
    r = migrate(t, form="pairwise", n_boot=300)
    assert {q.name for q in r.raw} >= {"mean_diff", "agreement", "human_agreement"}
    assert r.linked == [] and any("no scale to link" in n for n in r.notes)
    h = r.quantity("human_agreement")
    lab = t["label"].notna()
    assert h.extra["old"] == pytest.approx(float((t.loc[lab, "old"] == t.loc[lab, "label"]).mean()))


def test_the_result_round_trips_through_result_json(tmp_path):
    r = migrate(sm.transformed(300, 1), old_scale=NINE, new_scale=TEN, n_boot=100)
    r.write(tmp_path / "result.json")
    back = MigrateResult.read(tmp_path / "result.json")
    assert back == r


def test_a_link_refuses_an_edited_copy():
    t = sm.transformed(300, 1)
    link = fit_link(t["new"].to_numpy(float), t["old"].to_numpy(float), np.arange(300), np.ones((3, 300)),
                    increasing=True, level=0.95, old_judge="o", new_judge="n", old_scale=NINE, new_scale=TEN)
    d = link.to_dict()
    assert Link.from_dict(d).apply(np.array([5.0])) == pytest.approx(link.apply(np.array([5.0])))
    d["y"][0] += 1
    with pytest.raises(ValueError, match="hash"):
        Link.from_dict(d)


def test_the_equipercentile_link_keeps_the_old_mean_and_cross_fits():
    t = sm.transformed(1000, 7)
    x, y = t["new"].to_numpy(float), t["old"].to_numpy(float)
    link = fit_link(x, y, np.arange(1000), np.ones((1, 1000)), increasing=True, level=0.95, old_judge="o",
                    new_judge="n", old_scale=NINE, new_scale=TEN)
    assert link.apply(x).mean() == pytest.approx(y.mean(), abs=1e-9)
    assert np.all(np.diff(link.y) >= 0)
    held = cross_fit(x, y, np.arange(1000), seed=0)
    assert np.isfinite(held).all() and not np.allclose(held, link.apply(x))


# ---- published judges, replayed ----------------------------------------------------------------------------

@pytest.mark.data
def test_published_judges_against_themselves_and_each_other(data_dir):
    """JudgeBench's judges on the same GPT-4o pairs: each against itself is EQUIVALENT; o1-mini → the 2B reward
    model is NOT_COMPARABLE (its agreement with o1-mini is far below o1-mini's own across orders, and its accuracy
    0.16 lower)."""
    from judgeaudit.analyses.migrate.anchors import two_order_anchors
    from judgeaudit.datasets import judgebench

    judges = judgebench.published_judges(data_dir / "judgebench")
    labels = judgebench.load_pairs(data_dir / "judgebench").set_index("pair_id")["label"]
    old, small = "arena_hard/o1-mini-2024-09-12", "reward_model/Ray2333_GRM-Gemma-2B-rewardmodel-ft"
    for j in (old, small):
        assert migrate(two_order_anchors(judges[j], judges[j], labels), form="pairwise", n_boot=300).verdict == \
            "EQUIVALENT"
    r = migrate(two_order_anchors(judges[old], judges[small], labels), form="pairwise", n_boot=300)
    assert r.verdict == "NOT_COMPARABLE" and r.n_clusters == 350
    assert r.quantity("human_agreement").estimate == pytest.approx(-0.164, abs=0.005)


# ---- the audits: validity runs of both judges ---------------------------------------------------------------

def test_a_judge_insensitive_to_construct_edits_is_not_comparable():
    """The new judge grades the anchors like the old one, but does not move on construct-changing edits (its
    own R differs): its validity audit is worse beyond the margin, so the migration is NOT_COMPARABLE; a judge
    one grade harsher everywhere (a monotone re-scaling) keeps S and R, so its audits pass."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "card"))
    from test_card_diff_tau import _design, _graded, _latents

    from judgeaudit.card.paired import design_frontier
    from judgeaudit.commands.migrate import validity_audits

    rng = np.random.default_rng(8)
    base, edits = _latents(rng, 3.0)                    # a sensitive old judge
    fa = _graded(rng, base, edits)
    base0, edits0 = _latents(rng, 0.0)                  # no step on construct edits: R near 0
    fb = _graded(rng, base0, edits0)
    audits = validity_audits(fa, fb, margin=0.10, n_boot=300, seed=1)
    r = next(q for q in audits if q.name == "validity.R")
    assert r.decisive and r.status == "not_equivalent"
    res = migrate(sm.same_judge(2000, 1), old_scale=NINE, new_scale=NINE, n_boot=200, audits=audits)
    assert res.verdict == "NOT_COMPARABLE" and "validity.R" in res.reasons[-1]
    d = _design()
    g_base = np.clip(np.round(base + rng.normal(0, 0.7, len(base))), 2, 10)[d.base_index]
    g_edit = np.clip(np.round(edits + rng.normal(0, 0.7, len(edits))), 2, 10)
    same = validity_audits(design_frontier(d, g_base, g_edit, 0.9), design_frontier(d, g_base - 1, g_edit - 1, 0.9),
                           margin=0.10, n_boot=300, seed=1)
    assert {q.name: q.status for q in same if q.test != "descriptive"} == {"validity.S": "equivalent",
                                                                           "validity.R": "equivalent"}

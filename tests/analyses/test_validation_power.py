"""Validation power (construct-validity.txt Def. 5–6, §5.4, App. E): planted effects on synthetic
label sets, hand-computed statistics, the frozen family, and the real LLMBar / JudgeBench rates."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses import validation_power as vp
from judgeaudit.stats.agreement import fleiss_kappa, majority_label

pytestmark = pytest.mark.usefixtures("one_blas_thread")   # BLAS on one thread, as the audit runs it

WORDS = ("alpha beta gamma delta epsilon zeta theta iota kappa lambda sigma omega river stone cloud "
         "field light paper window garden table").split()


def _sentence(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(rng.choice(WORDS, size=n_words))


def _items(n: int = 160, n_groups: int = 40, seed: int = 0, label_fn=None, text_fn=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        n_words = int(rng.integers(5, 60))
        lab = label_fn(i, n_words, rng) if label_fn else str(rng.integers(0, 2))
        text = text_fn(i, n_words, lab, rng) if text_fn else _sentence(rng, n_words)
        rows.append({"item_id": f"i{i}", "text": text, "label": lab, "group": f"g{i % n_groups}",
                     "condition": None})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the frozen family

def test_member_set_is_frozen():
    assert vp.FAMILY == ("length_only", "numeric_surface", "surface_ngram")
    assert vp.PROVENANCE_MEMBER == "provenance_recoverable"
    assert vp.MEMBERS == vp.FAMILY + ("provenance_recoverable",)
    assert vp.HEDGES == ("may", "might", "could", "appears", "suggests", "possibly", "likely", "generally",
                         "typically", "often", "tends to", "in some cases")
    assert vp.UNIVERSALS == ("all", "always", "never", "every", "any", "invariably", "universally")
    assert len(vp.NUMERIC_SURFACE_FEATURES) == 10
    assert dict(vp.NGRAM_PARAMS) == {"analyzer": "char_wb", "ngram_range": (3, 5), "min_df": 3,
                                     "max_features": 20000, "sublinear_tf": True}
    assert dict(vp.CLASSIFIER_PARAMS) == {"max_iter": 2000, "class_weight": "balanced"}
    clf = vp.make_classifier().get_params()
    assert clf["max_iter"] == 2000 and clf["class_weight"] == "balanced" and clf["C"] == 1.0
    vec = vp.make_ngram_vectorizer().get_params()
    assert (vec["analyzer"], vec["ngram_range"], vec["min_df"], vec["max_features"], vec["sublinear_tf"]) == \
        ("char_wb", (3, 5), 3, 20000, True)
    assert vp.N_FOLDS == 5


def test_extractors_take_one_string_only():
    for fn in (vp.length_only_features, vp.numeric_surface_features, vp.token_count):
        params = list(inspect.signature(fn).parameters)
        assert params == ["text"], fn.__name__


def test_numeric_surface_hand_computed():
    text = "It may Always rain (2024).\nAll of it; any."
    f = vp.numeric_surface_features(text)
    n_chr = len(text)
    # tokens: It may Always rain (2024). All of it; any.  → 9, total token length 34
    expected = [n_chr, 9, 3, 1, 1,
                1 / 9,          # hedges: "may"
                3 / 9,          # universals: "always", "all", "any"
                4 / n_chr,      # digits 2024
                3 / n_chr,      # I, A, A
                34 / 9]
    np.testing.assert_allclose(f, expected)
    assert vp.length_only_features("a b  c\n d").tolist() == [4.0]


# --------------------------------------------------------------------------- planted effects

def test_length_labels_are_recovered_by_length_only():
    # groups of two, one long and one short response each (the design of a pairwise set split
    # into items): the within-group null is then exactly at chance
    rng = np.random.default_rng(0)
    rows = []
    for g in range(80):
        for lab, (lo, hi) in (("long", (33, 60)), ("short", (5, 31))):
            rows.append({"item_id": f"{g}{lab}", "text": _sentence(rng, int(rng.integers(lo, hi))), "label": lab,
                         "group": f"g{g}", "condition": None})
    df = pd.DataFrame(rows)
    prep = vp.prepare_item(df)
    r = vp.audit_prepared(prep, n_permutations=10, members=["length_only"])
    m = r.member("length_only")
    assert m.kappa > 0.9
    assert abs(m.null_mean) < 0.15 and m.null_p95 < 0.3
    assert r.folds["scheme"] == "GroupKFold"


def test_independent_labels_sit_inside_the_null():
    df = _items(seed=3)
    r = vp.audit_prepared(vp.prepare_item(df), n_permutations=20)
    for m in r.members:
        assert abs(m.kappa) < 0.2, m
        assert m.p_value > 0.05, m
        assert not m.broken_null
    assert not r.broken_harness


def test_lexical_idiom_is_found_by_surface_ngram_not_length_only():
    def text(i, n, lab, rng):
        words = list(rng.choice(WORDS, size=n))
        if lab == "1":
            words[int(rng.integers(0, n))] = "notwithstanding"
        else:
            words[int(rng.integers(0, n))] = "meanwhile"
        return " ".join(words)

    df = _items(label_fn=lambda i, n, rng: str(i % 2), text_fn=text, seed=5)
    r = vp.audit_prepared(vp.prepare_item(df), n_permutations=5, members=["length_only", "surface_ngram"])
    assert r.member("surface_ngram").kappa > 0.8
    assert abs(r.member("length_only").kappa) < 0.25
    assert r.a_imp_member == "surface_ngram"


# --------------------------------------------------------------------------- folds and scoring

def test_grouped_folds_never_split_a_group():
    groups = np.array([f"g{i % 13}" for i in range(100)])
    plan = vp.make_folds(groups, seed=1)
    assert plan.scheme == "GroupKFold"
    for g in np.unique(groups):
        assert len(np.unique(plan.fold_of[groups == g])) == 1
    seen = np.concatenate([test for _, test in plan.splits()])
    assert sorted(seen.tolist()) == list(range(100))


def test_fewer_than_five_groups_use_seeded_kfold_and_record_it():
    groups = np.array(["a", "b", "c", "d"] * 10)
    p1, p2 = vp.make_folds(groups, seed=7), vp.make_folds(groups, seed=7)
    assert p1.scheme == "KFold" and p1.seed == 7 and p1.to_dict()["group_aware"] is False
    assert (p1.fold_of == p2.fold_of).all()


def test_pooled_kappa_equals_hand_computation_on_pooled_predictions():
    df = _items(label_fn=lambda i, n, rng: "long" if n + rng.normal(0, 12) > 32 else "short", seed=11)
    prep = vp.prepare_item(df)
    r = vp.audit_prepared(prep, n_permutations=0, members=["length_only"])
    plan = vp.make_folds(prep.groups, seed=0)
    pred = vp.oof_predictions(vp._Designs(prep, plan), "length_only", prep.y)
    y = prep.y
    po = np.mean(pred == y)
    pe = sum(np.mean(y == c) * np.mean(pred == c) for c in np.unique(y))
    by_hand = (po - pe) / (1 - pe)
    assert r.member("length_only").kappa == pytest.approx(by_hand, abs=1e-12)
    per_fold = []
    for _, test in plan.splits():
        yt, pt = y[test], pred[test]
        po_f = np.mean(yt == pt)
        pe_f = sum(np.mean(yt == c) * np.mean(pt == c) for c in np.unique(y))
        per_fold.append((po_f - pe_f) / (1 - pe_f))
    assert by_hand != pytest.approx(np.mean(per_fold), abs=1e-9)  # the mean of fold κs is a different number


def test_kappa_from_confusions_matches_cohen():
    from judgeaudit.stats.agreement import cohen_kappa

    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 3, 200).astype(str), rng.integers(0, 3, 200).astype(str)
    conf = np.zeros((3, 3))
    for a, b in zip(y, p, strict=True):
        conf[int(a), int(b)] += 1
    assert vp.kappa_from_confusions(conf[None])[0] == pytest.approx(cohen_kappa(y, p))


def test_permutation_null_above_chance_is_reported_as_broken():
    # Every group holds a single label, so a within-group permutation leaves the labels as they
    # are: the "null" recovers the labels as well as the fit does — the harness leaks.
    df = _items(n=150, n_groups=30, label_fn=None, seed=2)
    df["label"] = [("long" if len(t.split()) >= 32 else "short") for t in df["text"]]
    df["group"] = df["label"] + "-" + (df.index % 15).astype(str)
    r = vp.audit_prepared(vp.prepare_item(df), n_permutations=5, members=["length_only"])
    m = r.member("length_only")
    assert m.null_mean > 0.5 and m.broken_null
    assert r.broken_harness == ("length_only",)
    assert r.to_dict()["broken_harness"] is True


def test_singleton_groups_are_pooled_for_the_permutation():
    strata = vp.permutation_strata(np.array(["a", "a", "b", "c", "d"]))
    assert strata[0] == strata[1] == "a"
    assert len(set(strata[2:])) == 1 and strata[2] != "a"


# --------------------------------------------------------------------------- paired mode

def _pairs(n: int = 120, seed: int = 0, prefer_longer: float = 1.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        la, lb = rng.choice(np.arange(5, 80), size=2, replace=False)
        a, b = _sentence(rng, int(la)), _sentence(rng, int(lb))
        longer = "A" if la > lb else "B"
        lab = longer if rng.random() < prefer_longer else ("B" if longer == "A" else "A")
        rows.append({"pair_id": f"p{i}", "prompt": f"q{i // 2}", "response_a": a, "response_b": b, "label": lab,
                     "group": f"q{i // 2}", "source_set": "syn", "subset": None, "condition_a": None,
                     "condition_b": None, "meta": {}})
    return pd.DataFrame(rows)


def test_paired_mode_length_preference_and_rules():
    df = _pairs(prefer_longer=0.8, seed=4)
    prep = vp.prepare_paired(df, seed=0)
    r = vp.audit_prepared(prep, n_permutations=10, members=["length_only"])
    la = df["response_a"].str.len().to_numpy()
    lb = df["response_b"].str.len().to_numpy()
    pref = np.where(df["label"] == "A", la, lb)
    oth = np.where(df["label"] == "A", lb, la)
    keep = pref != oth
    rate = np.mean(pref[keep] > oth[keep])
    assert r.preferred_longer_rate == pytest.approx(rate)
    assert r.prefer_shorter_accuracy == pytest.approx(1 - rate)
    assert r.member("length_only").accuracy > 0.7
    assert r.member("length_only").null_mean < 0.15


def test_side_randomisation_is_seeded_and_consistent():
    df = _pairs(seed=1)
    p1, p2, p3 = vp.prepare_paired(df, seed=0), vp.prepare_paired(df, seed=0), vp.prepare_paired(df, seed=9)
    assert (p1.y == p2.y).all() and p1.texts_a == p2.texts_a
    assert not (p1.y == p3.y).all()
    assert 0.3 < np.mean(p1.y == "A") < 0.7
    for i in range(len(df)):  # the preferred text is still the preferred text
        orig = df.iloc[i]
        pref_text = orig.response_a if orig.label == "A" else orig.response_b
        assert (p1.texts_a[i] if p1.y[i] == "A" else p1.texts_b[i]) == pref_text


def test_paired_features_are_antisymmetric():
    df = _pairs(seed=2, prefer_longer=0.7)
    prep = vp.prepare_paired(df, seed=0)
    swapped = vp.Prepared("paired", prep.texts_b, prep.texts_a, np.where(prep.y == "A", "B", "A"), prep.groups,
                          None, None, None)
    plan = vp.make_folds(prep.groups)
    d1, d2 = vp._Designs(prep, plan), vp._Designs(swapped, plan)
    tr, te = next(plan.splits())
    for m in ("length_only", "numeric_surface"):
        x1, t1 = d1.fold(m, 0, tr, te)
        x2, t2 = d2.fold(m, 0, tr, te)
        np.testing.assert_allclose(x1, -x2, atol=1e-12)
        np.testing.assert_allclose(t1, -t2, atol=1e-12)
    va, vb = d1.ngram_responses(0, tr)
    wa, wb = d2.ngram_responses(0, tr)
    np.testing.assert_allclose((va - vb).toarray(), -(wa - wb).toarray(), atol=1e-12)
    for m in vp.FAMILY:  # swapping both sides and labels swaps every prediction
        p1 = vp.oof_predictions(d1, m, prep.y)
        p2 = vp.oof_predictions(d2, m, swapped.y)
        assert np.mean(p1 == np.where(p2 == "A", "B", "A")) > 0.97, m


def test_paired_null_swaps_sides_and_item_null_stays_within_group():
    prep = vp.prepare_paired(_pairs(n=80, seed=3), seed=0)
    perms = vp.label_permutations(prep, 200, seed=1)
    changed = perms != prep.y[None, :]
    assert 0.45 < changed.mean() < 0.55
    item = vp.prepare_item(_pairs(n=80, seed=3))
    ip = vp.label_permutations(item, 50, seed=1)
    for g in np.unique(item.groups):
        rows = item.groups == g
        for p in ip:
            assert sorted(p[rows]) == sorted(item.y[rows])


def test_item_mode_of_a_paired_set_has_two_rows_per_pair():
    df = _pairs(n=40)
    df.loc[0, "label"] = "tie"
    prep = vp.prepare_item(df)
    assert prep.n == 78 and prep.n_ties_dropped == 1
    assert set(prep.y) == {"preferred", "rejected"}


# --------------------------------------------------------------------------- provenance member

def test_provenance_member_recovers_a_provenance_inherited_set():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(120):
        gold = _sentence(rng, int(rng.integers(3, 8))).title()          # gold: title case
        fake = _sentence(rng, int(rng.integers(3, 8))) + " was the one."  # generated: an idiom
        side = "A" if i % 2 else "B"
        a, b, ca, cb = (gold, fake, "gold", "gen") if side == "A" else (fake, gold, "gen", "gold")
        rows.append({"pair_id": f"p{i}", "prompt": f"q{i}", "response_a": a, "response_b": b, "label": side,
                     "group": f"q{i}", "source_set": "syn", "subset": None, "condition_a": ca, "condition_b": cb,
                     "meta": {}})
    df = pd.DataFrame(rows)
    r = vp.audit_prepared(vp.prepare_paired(df), n_permutations=5)
    assert r.member("provenance_recoverable").kappa > 0.9
    assert r.member("provenance_recoverable").null_mean < 0.2
    ri = vp.audit_prepared(vp.prepare_item(df), n_permutations=3)
    assert "provenance_recoverable" in [m.name for m in ri.members]
    # no recorded condition → no provenance member
    r2 = vp.audit_prepared(vp.prepare_paired(df.assign(condition_a=None, condition_b=None)), n_permutations=0)
    assert "provenance_recoverable" not in [m.name for m in r2.members]


# --------------------------------------------------------------------------- ceiling and VP

def _annotated_items(n_items: int, n_annotators: int, accuracy: float, seed: int) -> tuple[pd.DataFrame, list]:
    """An item table with a balanced binary truth and ``n_annotators`` independent annotators per
    item, each right with probability ``accuracy`` (the planted annotator accuracy)."""
    rng = np.random.default_rng(seed)
    df = _items(n=n_items, n_groups=n_items // 3, seed=seed)
    truth = df["label"].to_numpy()
    right = rng.random((n_items, n_annotators)) < accuracy
    human = [[t if ok else ("1" if t == "0" else "0") for ok in row] for t, row in zip(truth, right, strict=True)]
    df["human_labels"] = human
    return df, human


def test_human_ceiling_is_one_annotator_against_the_majority_of_the_others():
    # Four annotators of planted accuracy q = 0.8 on a balanced binary truth. Held out, one annotator
    # is right with probability q; the majority of the other three with r = q³ + 3q²(1 − q) = 0.896.
    # Both margins are ½, so the pooled κ of "annotator vs the others' majority" is
    # (2q − 1)(2r − 1) = 0.6 · 0.792 = 0.4752 — the same statistic as a_imp (κ of a prediction
    # against a label). Fleiss' κ among the four estimates a different quantity:
    # (q² + (1 − q)² − ½) / ½ = 0.36.
    q = 0.8
    r = q**3 + 3 * q**2 * (1 - q)
    expected = (2 * q - 1) * (2 * r - 1)
    df, human = _annotated_items(3000, 4, q, seed=21)
    res = vp.audit_prepared(vp.prepare_item(df), n_permutations=0, members=["length_only"], n_boot=200)
    assert expected == pytest.approx(0.4752)
    assert res.a_hum == pytest.approx(expected, abs=0.03)
    assert res.a_hum_ci[0] < expected < res.a_hum_ci[1]
    # the old number (Fleiss' κ among annotators) is a different estimand, far from it
    assert fleiss_kappa(human) == pytest.approx(0.36, abs=0.03)
    assert abs(res.a_hum - fleiss_kappa(human)) > 0.08
    assert res.vp == pytest.approx(res.a_hum - res.a_imp)


def test_human_ceiling_with_three_annotators_drops_undefined_draws_without_reweighting():
    # Three annotators of accuracy q = 0.9: a held-out label is defined only where the other two
    # agree (both right q², both wrong (1 − q)²), so agreement is (q³ + (1 − q)³) / (q² + (1 − q)²)
    # = 0.73 / 0.82 and κ = 2·0.8902 − 1 = 0.7805 (margins ½). Fleiss' κ: (0.82 − ½)/½ = 0.64.
    q = 0.9
    agree = (q**3 + (1 - q) ** 3) / (q**2 + (1 - q) ** 2)
    expected = 2 * agree - 1
    df, human = _annotated_items(3000, 3, q, seed=22)
    h = vp.human_ceiling(human, df["group"].to_numpy(), label_space=("0", "1"), n_boot=200)
    assert expected == pytest.approx(0.7805, abs=1e-4)
    assert h.kappa == pytest.approx(expected, abs=0.03)
    assert h.ci[0] < expected < h.ci[1]
    assert fleiss_kappa(human) == pytest.approx(0.64, abs=0.03)


def test_human_ceiling_hand_computed_with_tie_and_label_space_rules():
    labels = [
        ["x", "x", "x"],       # 3 held-out rows, each (label x, pred x), weight ⅓
        ["x", "x", "y"],       # the two x's see others {x, y}: no strict majority → dropped; y vs x, weight ⅓
        ["y", "y"],            # 2 rows (y, y), weight ½
        ["y", "x", "y", "y"],  # 3 rows (y, y) and 1 row (label y, pred x), weight ¼ each
        ["x", "z", "x"],       # x's: others {z, x} no majority; z: outside the label space → nothing scored
        ["x"],                 # one label: nobody to hold out against
    ]
    h = vp.human_ceiling(labels, np.arange(6).astype(str), label_space=("x", "y"), n_boot=50)
    # confusion (label × pred): (x,x) 1, (x,y) ⅓, (y,y) 1.75, (y,x) 0.25, total 10/3;
    # p_o = 2.75 / (10/3) = 0.825; label margins x 0.4, y 0.6; prediction margins x 0.375, y 0.625;
    # p_e = 0.4·0.375 + 0.6·0.625 = 0.525 → κ = 0.3 / 0.475 = 12/19
    assert h.kappa == pytest.approx(12 / 19, abs=1e-12)
    assert (h.n_items, h.n_rows, h.n_no_majority, h.n_outside_label_space) == (4, 10, 4, 1)
    assert h.fleiss_kappa == pytest.approx(vp.fleiss_kappa_general(labels))


def test_paired_ceiling_on_a_and_b_with_tie_votes_left_out():
    # Three votes per pair, each right with probability 0.85 and a tie with probability 0.1: in
    # paired mode the label space is {A, B}, so a held-out tie vote (or others whose majority is a
    # tie or absent) is not scored; the same votes, split per response, give the item-mode ceiling
    # on {preferred, rejected}.
    df = _pairs(n=200, seed=6, prefer_longer=0.5)
    rng = np.random.default_rng(3)
    votes = []
    for lab in df["label"]:
        other = "B" if lab == "A" else "A"
        u = rng.random(3)
        votes.append([lab if x < 0.85 else ("tie" if x < 0.95 else other) for x in u])
    df["human_labels"] = votes
    prep = vp.prepare_paired(df, seed=0)
    r = vp.audit_prepared(prep, n_permutations=0, members=["length_only"], n_boot=100)
    h = vp.human_ceiling(prep.human, prep.groups, label_space=("A", "B"), n_boot=100)
    assert r.a_hum == pytest.approx(h.kappa) and r.a_hum_detail.n_rows == h.n_rows
    # by hand on the unswapped votes (side randomisation swaps A and B in label and vote alike)
    rows, no_major, outside = [], 0, 0
    for v in votes:
        for j in range(3):
            maj = majority_label(v[:j] + v[j + 1:])
            if maj is None:
                no_major += 1
            elif maj in ("A", "B") and v[j] in ("A", "B"):
                rows.append((maj, v[j]))
            else:
                outside += 1
    assert (h.n_rows, h.n_no_majority, h.n_outside_label_space) == (len(rows), no_major, outside)
    assert outside > 0 and no_major > 0
    item = vp.audit_prepared(vp.prepare_item(df), n_permutations=0, members=["length_only"], n_boot=100)
    assert item.a_hum_detail.n_rows == 2 * len(rows)
    assert 0.6 < item.a_hum < 1.0 and 0.6 < r.a_hum < 1.0


def test_vp_resolvability_and_user_ceiling():
    df, _ = _annotated_items(150, 3, 0.9, seed=8)
    r = vp.audit_prepared(vp.prepare_item(df), n_permutations=0, members=["length_only"], n_boot=300)
    assert r.a_hum_ci[0] < r.a_hum < r.a_hum_ci[1]
    assert r.resolvable is True  # ceiling ~0.6, a_imp ~0
    user = vp.audit_prepared(vp.prepare_item(df), n_permutations=0, members=["length_only"],
                             ceiling=(0.05, -0.1, 0.2), n_boot=300)
    assert user.a_hum_source == "user-supplied" and user.resolvable is False
    assert vp.fleiss_kappa_general([["a", "a", "b"], ["b", "b"], ["a"]]) == pytest.approx(
        vp.fleiss_kappa_general([["a", "a", "b"], ["b", "b"]]))


def _kappa_coverage(n_members: int, accuracy: float, n_sims: int = 200, n_groups: int = 150,
                    n_boot: int = 200) -> tuple[float, float]:
    """Coverage of the population a_imp = max over members of κ (every member's κ is 2·acc − 1) by
    the best member's own interval (the old a_imp interval) and by the max-bootstrap interval."""
    truth = 2 * accuracy - 1
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(n_groups), 2)
    old = new = 0
    for s in range(n_sims):
        y = rng.integers(0, 2, 2 * n_groups).astype(str)
        right = rng.random((n_members, len(y))) < accuracy
        preds = np.where(right, y[None, :], np.where(y == "0", "1", "0")[None, :])
        kappas = [float(vp.kappa_from_confusions(np.array([[[np.sum((y == a) & (p == b)) for b in "01"]
                                                             for a in "01"]]))[0]) for p in preds]
        best = int(np.argmax(kappas))
        lo, hi = vp.bootstrap_kappa_ci(y, preds[best], groups, n_boot=n_boot, seed=s)
        old += lo <= truth <= hi
        lo, hi = vp.a_imp_interval(y, preds, groups, n_boot=n_boot, seed=s)
        assert lo <= max(kappas) <= hi
        new += lo <= truth <= hi
    return old / n_sims, new / n_sims


def test_a_imp_interval_covers_the_max_over_equally_informative_members():
    # Five members equally informative (κ = 0.2 each) or equally uninformative (κ = 0): the best
    # observed κ is biased upward by the selection, and the best member's own interval misses the
    # population max too often; the max-bootstrap interval keeps its nominal coverage.
    old, new = _kappa_coverage(5, 0.6)
    assert old < 0.9 and new >= 0.93, (old, new)
    old0, new0 = _kappa_coverage(5, 0.5)
    assert old0 < 0.9 and new0 >= 0.93, (old0, new0)
    # one member: the selection is trivial and the interval is an ordinary 95% interval
    one_old, one_new = _kappa_coverage(1, 0.6, n_sims=100)
    assert one_new >= 0.9 and abs(one_new - one_old) < 0.05, (one_old, one_new)


def test_a_imp_null_is_the_max_over_members_per_permutation():
    df = _items(seed=3)
    r = vp.audit_prepared(vp.prepare_item(df), n_permutations=9, members=["length_only", "numeric_surface"])
    assert r.a_imp_null_n == 9
    for m in r.members:
        assert r.a_imp_null_p95 >= m.null_p95 - 1e-12
        assert m.p_value_min == pytest.approx(0.1)
        assert m.clears_null == (m.kappa > m.null_p95)
    assert r.a_imp_p_value_min == pytest.approx(0.1)
    assert 0.1 <= r.a_imp_p_value <= 1.0


def test_bootstrap_interval_brackets_the_estimate():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(str)
    p = np.where(rng.random(300) < 0.8, y, np.where(y == "0", "1", "0"))
    g = np.arange(300) // 3
    lo, hi = vp.bootstrap_kappa_ci(y, p, g, n_boot=500)
    k = vp.pooled_kappa(y, p)
    assert lo < k < hi and hi - lo < 0.3


# --------------------------------------------------------------------------- efficiency pieces are exact

def test_ngram_bank_reproduces_tfidf_vectorizer():
    rng = np.random.default_rng(0)
    texts = [_sentence(rng, int(rng.integers(3, 30))) + ("!" if i % 3 else "?") for i in range(200)]
    bank = vp.NgramBank(texts)
    train = np.arange(0, 200, 2)
    sel, idf = bank.tfidf(train)
    mine = bank.transform(slice(None), sel, idf).toarray()
    ref = vp.make_ngram_vectorizer().fit([texts[i] for i in train]).transform(texts).toarray()
    np.testing.assert_allclose(mine, ref, atol=1e-12)


def test_rowspace_reduction_is_the_same_fitted_model():
    from scipy import sparse

    rng = np.random.default_rng(0)
    x = sparse.random(120, 3000, density=0.05, random_state=1, format="csr")
    w = rng.normal(size=3000)
    y = np.where(x @ w + rng.normal(0, 0.5, 120) > 0, "a", "b")
    tr, te = np.arange(90), np.arange(90, 120)
    p_direct = vp.make_classifier().fit(x[tr], y[tr]).predict_proba(x[te])
    ztr, zte, basis = vp.rowspace_reduce(x[tr], x[te])
    assert ztr.shape[1] <= 90 and basis.rank == ztr.shape[1]
    p_reduced = vp.fit_logistic(basis, y[tr]).predict_proba(zte)
    np.testing.assert_allclose(p_direct, p_reduced, rtol=0, atol=1e-9)
    assert vp.rowspace_reduce(x[tr], x[te], route="reference")[2] is None


# --------------------------------------------------------------------------- result shape, transfer

def test_audit_result_dict_shape_and_transfer_admission():
    sets = {"pairs1": _pairs(n=60, seed=1), "pairs2": _pairs(n=60, seed=2),
            "items": _items(n=80, seed=3)}
    res = vp.audit_validation_power(sets, n_permutations=3, n_boot=100)
    d = json.loads(json.dumps(res.to_dict(), default=float))
    p = d["sets"]["pairs1"]["paired"]
    for key in ("n", "n_groups", "folds", "members", "a_imp", "a_hum", "a_hum_ci", "vp", "resolvable",
                "prefer_longer_accuracy", "prefer_shorter_accuracy", "preferred_longer_rate"):
        assert key in p
    assert set(p["members"]["length_only"]) >= {"kappa", "accuracy", "null_kappa"}
    assert d["sets"]["items"]["paired"] == {"applicable": False, "reason": "per-item labels, not comparisons"}
    adm = {(t["source"], t["target"], t["mode"]): t["admitted"] for t in d["transfer"]}
    assert adm[("pairs1", "pairs2", "paired")] is True
    assert adm[("pairs1", "pairs2", "item")] is True
    assert adm[("items", "pairs1", "item")] is False  # {0,1} vs {preferred,rejected}
    frame = res.to_frame()
    assert list(frame["label set"]) == ["pairs1", "pairs2", "items"]
    assert res.members_frame().shape[0] == 2 * (3 + 3) + 3


# --------------------------------------------------------------------------- real data (JUDGEAUDIT_DATA_DIR)

def _independent_rate(pairs: list[tuple[str, str, str]]) -> tuple[float, float]:
    longer = shorter = 0
    for a, b, lab in pairs:
        pref, other = (a, b) if lab == "A" else (b, a)
        if len(pref) > len(other):
            longer += 1
        elif len(pref) < len(other):
            shorter += 1
    return longer / (longer + shorter), shorter / (longer + shorter)


@pytest.mark.data
def test_llmbar_prefer_longer_rates_match_an_independent_count(data_dir):
    from judgeaudit.datasets import llmbar

    raw = json.loads((data_dir / "llmbar/Dataset/LLMBar/Natural/dataset.json").read_text())
    pairs = [(o["output_1"], o["output_2"], "A" if o["label"] == 1 else "B") for o in raw]
    longer, shorter = _independent_rate(pairs)
    prep = vp.prepare_paired(llmbar.load_pairs(data_dir / "llmbar", sets=["Natural"]), seed=0)
    rules = vp.length_rules(prep)
    assert rules["preferred_longer_rate"] == pytest.approx(longer)
    assert rules["prefer_shorter_accuracy"] == pytest.approx(shorter)


@pytest.mark.data
def test_judgebench_prefer_longer_rates_match_an_independent_count(data_dir):
    from judgeaudit.datasets import judgebench

    pairs = []
    for f in sorted((data_dir / "judgebench/data").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                o = json.loads(line)
                pairs.append((o["response_A"], o["response_B"], "A" if o["label"] == "A>B" else "B"))
    longer, shorter = _independent_rate(pairs)
    prep = vp.prepare_paired(judgebench.load_pairs(data_dir / "judgebench"), seed=3)
    rules = vp.length_rules(prep)
    assert rules["preferred_longer_rate"] == pytest.approx(longer)
    assert rules["prefer_shorter_accuracy"] == pytest.approx(shorter)


def test_between_group_label_share():
    y = np.array(["a", "a", "b", "b", "a", "b"])
    g = np.array(["x", "x", "y", "y", "z", "z"])
    # indicator of "a": group means 1, 0, .5 around .5 → between SS = 2·.25 + 2·.25 + 0 = 1; total = 1.5
    assert vp.between_group_label_share(y, g) == pytest.approx(1 / 1.5)
    assert vp.between_group_label_share(np.array(["a", "b"] * 3), np.repeat(["p", "q", "r"], 2)) == 0.0


# --------------------------------------------------------------------------- many p-values: BH, resolution

def test_benjamini_hochberg_equals_a_hand_computation():
    from judgeaudit.stats.tests import bh_adjust

    # sorted 0.01, 0.03, 0.04, 0.2 (m = 4): p·m/rank = 0.04, 0.06, 0.0533, 0.2; then running
    # minimum from the top: 0.04, 0.0533, 0.0533, 0.2. NaN (no null) stays NaN and is not counted.
    got = bh_adjust([0.01, 0.04, 0.03, 0.2, float("nan")])
    np.testing.assert_allclose(got[:4], [0.04, 0.16 / 3, 0.16 / 3, 0.2])
    assert np.isnan(got[4])


def test_member_table_reports_bh_and_the_smallest_attainable_p():
    from judgeaudit.stats.tests import bh_adjust

    sets = {"pairs1": _pairs(n=60, seed=1), "items": _items(n=80, seed=3)}
    res = vp.audit_validation_power(sets, n_permutations=4, n_boot=50, transfer=False)
    frame = res.members_frame()
    np.testing.assert_allclose(frame["p (BH)"], bh_adjust(frame["p"]))
    assert frame["min attainable p"].tolist() == pytest.approx([0.2] * len(frame))   # 1 / (4 + 1)
    assert list(frame.columns).index("min attainable p") == list(frame.columns).index("p") + 1
    d = res.to_dict()["sets"]["pairs1"]["paired"]
    m = d["members"]["length_only"]
    assert m["p_value_min"] == pytest.approx(0.2)
    row = frame[(frame["label set"] == "pairs1") & (frame["mode"] == "paired") & (frame["member"] == "length_only")]
    assert m["p_value_bh"] == pytest.approx(float(row["p (BH)"].iloc[0]))
    assert d["a_imp_null"]["p_value_min"] == pytest.approx(0.2)


def test_transfer_is_admitted_by_label_origin_as_in_section_5_4():
    """§5.4: a transfer is defined only where the two label spaces share two categories. In paired
    mode every set's labels are the sides A/B, so "share ≥ 2 labels" admitted every ordered pair
    (6 of 6 here); a category is a label value under its origin (a pair role, a human vote, the
    author's gold), so only the two pair-role sets admit each other (2 of 6), and each refusal says
    why. Tables without a declared origin are still compared by their label values."""
    sets = {"rb": _pairs(n=60, seed=1), "rmb": _pairs(n=60, seed=2), "mt": _pairs(n=60, seed=3)}
    meta = {"rb": {"label_origin": "pair role"}, "rmb": {"label_origin": "pair_role"},
            "mt": {"label_origin": "human_vote"}}
    res = vp.audit_validation_power(sets, modes=("paired",), n_permutations=0, n_boot=10, set_meta=meta)
    by = {(t.source, t.target): t for t in res.transfer}
    assert len(by) == 6
    assert sorted(k for k, t in by.items() if t.admitted) == [("rb", "rmb"), ("rmb", "rb")]
    assert by[("rb", "rmb")].n == 60 and set(by[("rb", "rmb")].members) == set(vp.FAMILY)
    for k in (("rb", "mt"), ("mt", "rb"), ("rmb", "mt"), ("mt", "rmb")):
        assert not by[k].admitted and by[k].members == {}
        assert by[k].reason.startswith("label origins differ (")
    assert "human vote" in by[("rb", "mt")].reason and "pair role" in by[("rb", "mt")].reason
    # one set declares an origin, the other does not: the categories cannot be matched
    one = vp.audit_validation_power(sets, modes=("paired",), n_permutations=0, n_boot=10,
                                    set_meta={"rb": {"label_origin": "pair role"}})
    t = next(t for t in one.transfer if (t.source, t.target) == ("rb", "rmb"))
    assert not t.admitted and "declared for one set only" in t.reason
    # the report counts them as §5.4 does, lists the admitted pairs and groups the refusals by their reason
    from judgeaudit.report.validation_power import refusal_frame, transfer_frame, transfer_sentence

    assert transfer_sentence(res) == "paired mode: 2 of 6 ordered set pairs admitted."
    assert sorted(zip(transfer_frame(res)["source"], transfer_frame(res)["target"])) == [("rb", "rmb"), ("rmb", "rb")]
    refused = refusal_frame(res)
    assert refused["ordered pairs"].sum() == 4 and refused["reason not admitted"].str.startswith(
        "label origins differ (").all()
    assert sorted(p for ps in refused["pairs"] for p in ps.split("; ")) == sorted(
        f"{a} → {b}" for a, b in (("rb", "mt"), ("mt", "rb"), ("rmb", "mt"), ("mt", "rmb")))


def test_balanced_sample_weights_are_scikit_learns():
    from sklearn.utils.class_weight import compute_class_weight

    from judgeaudit.analyses.validation_power.logistic import _problems

    rng = np.random.default_rng(5)
    for k in (2, 3, 5):
        codes = [rng.permutation(np.r_[np.arange(k), rng.integers(0, k, 40)]) for _ in range(6)]
        for c, (target, sw, l2) in zip(codes, _problems(codes, k), strict=True):
            want = compute_class_weight("balanced", classes=np.arange(k), y=c)[c]
            np.testing.assert_array_equal(sw, want)
            assert target.dtype == np.float64 and l2 == 1.0 / want.sum()
    with pytest.raises(ValueError):
        _problems([np.array([0, 0, 1])], 3)

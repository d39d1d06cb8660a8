from __future__ import annotations

import pandas as pd
import pytest
from world_fixtures import summary_item, tiny_items

from judgeaudit.analyses.world.pooling import majority, pool_votes
from judgeaudit.analyses.world.scoring import (
    STRICT_THRESHOLD,
    char_overlap,
    disagreement,
    locate,
    matcher_audit,
    span_scores,
    strict_match,
    strict_matcher,
)
from judgeaudit.records import Span, WorldItem


def _rows(**cols):
    n = len(next(iter(cols.values())))
    base = {"parse_ok": [True] * n, "error": [None] * n, "label": [None] * n, "unit_labels": [None] * n,
            "defect_ids": [None] * n, "score": [None] * n, "defects": [None] * n}
    base.update(cols)
    return pd.DataFrame(base)


def test_majority_of_parsed_votes_and_the_tie_rule():
    assert majority([True, False, True]) == (True, False)
    assert majority([True, False]) == (True, True)              # tie -> defective, reported
    assert majority([True, False], tie="clean") == (False, True)
    assert majority([]) == (None, False)
    # a vote that did not parse does not count: 1 true, 1 false parsed -> tie
    p = pool_votes(_rows(label=[True, False, True], parse_ok=[True, True, False]))
    assert (p.label, p.ties, p.parsed_votes, p.votes) == (True, 1, 2, 3)
    none = pool_votes(_rows(label=[None, None], parse_ok=[False, False]))
    assert none.label is None and none.parsed_votes == 0


def test_union_for_defects_majority_for_units_and_ids_median_for_scores():
    d = pool_votes(_rows(defects=[[{"span": "1901", "reason": "a"}], [], [{"span": "1901.", "reason": "b"},
                                                                           {"span": "Paris", "reason": "c"}]],
                         label=[True, False, True]), form="defects")
    # "1901" for reason a and "1901." for reason b are two complaints (dedup is by quote and reason)
    assert [x["span"] for x in d.defects] == ["1901", "1901.", "Paris"] and d.label is True
    u = pool_votes(_rows(unit_labels=[[True, False], [True, True], [False, False]]))
    assert u.unit_labels == [True, False] and u.ties == 0
    t = pool_votes(_rows(defect_ids=[["a"], ["a", "b"], []]))
    assert t.defect_ids == ["a"]
    s = pool_votes(_rows(score=[2.0, 5.0, 4.0]))
    assert s.score == 4.0


def test_strict_matcher_threshold():
    assert STRICT_THRESHOLD == 0.5
    assert strict_match("finished in 1901", "1901")                     # 1/1 of the segment
    assert strict_match("The tower, Finished in 1901!", "finished in 1901")
    assert not strict_match("Paris is lovely", "finished in 1901")
    # two of four content tokens shared: passes at 0.5, fails at 0.6
    assert strict_match("the big red house roof", "a big red car door", 0.5)
    assert not strict_match("the big red house roof", "a big red car door", 0.6)


def test_strict_matcher_drops_stop_words_and_punctuation():
    # a quote from another summary sharing only "the" with a 2-token segment was credited (1/2 = 0.5)
    assert not strict_match("the budget was approved", "the mayor")
    assert not strict_match("It was, in fact, the", "in the wrong year")
    assert strict_match("the mayor's", "the mayor")
    assert strict_match("he did not go", "not")                 # negations are kept: FRANK's negation errors
    assert strict_match("Its symbol is Co", "Co")               # a stop-word-only segment: every token counts
    from judgeaudit.analyses.world.scoring import content_tokens
    assert content_tokens("The vote -- was unanimous!") == ["vote", "unanimous"]


def test_union_dedups_by_quote_and_reason_and_never_merges_empty_quotes():
    d = pool_votes(_rows(defects=[[{"span": "1901", "reason": "wrong year"}, {"span": "1901", "reason": "no source"}],
                                  [{"span": "1901.", "reason": "Wrong year."}, {"span": "", "reason": "too short"}],
                                  [{"span": "", "reason": "too short"}, {"span": "1901", "reason": "misspelt"}]],
                         label=[True] * 3), form="defects")
    assert [(x["span"], x["reason"]) for x in d.defects] == [
        ("1901", "wrong year"), ("1901", "no source"), ("1901", "misspelt"), ("", "too short"), ("", "too short")]


def test_span_scores_generous_matcher_disagreement_and_permuted_audit():
    items = [it for it in tiny_items() if it.spans][:3]
    complaints = {items[0].item_id: [{"span": "1901", "reason": "wrong year"},
                                     {"span": "It was", "reason": "vague"}],
                  items[1].item_id: [{"span": "the height", "reason": "Everest is lower"}],
                  items[2].item_id: [{"span": "Red Sea", "reason": "ends in the Mediterranean"}]}
    strict = span_scores(items, complaints, strict_matcher())
    assert (strict.segments, strict.found, strict.complaints, strict.on_target) == (3, 2, 4, 2)

    def generous(c, seg, item):   # scripted: the reason names the defect
        return "wrong" in c["reason"] or "lower" in c["reason"] or "Mediterranean" in c["reason"]

    gen = span_scores(items, complaints, generous)
    assert (gen.found, gen.on_target) == (3, 3)
    dis = disagreement(items, complaints, strict_matcher(), generous)
    assert dis == {"pairs": 4, "differ": 1, "first_only": 0, "second_only": 1, "undecided": 0, "rate": 0.25}
    audit = matcher_audit(items, complaints, strict_matcher(), seed=0)
    assert audit["complaints"] == 4 and audit["false_matches"] == 0
    assert matcher_audit(items, complaints, lambda c, s, i: True)["false_match_rate"] == 1.0


def test_ragtruth_character_overlap_micro_and_macro():
    a = WorldItem(item_id="a", task="rag", output="abcdefghij", spans=[Span(start=2, end=6)])   # cdef
    b = WorldItem(item_id="b", task="rag", output="0123456789", spans=[Span(start=0, end=2)])   # 01
    comp = {"a": [{"span": "efgh"}, {"span": "zz"}], "b": [{"span": "01"}]}
    r = char_overlap([a, b], comp)
    # a: predicted efgh (4), gold cdef (4), overlap ef (2); b: predicted 01, gold 01, overlap 2
    assert (r["overlap_chars"], r["predicted_chars"], r["gold_chars"]) == (4, 6, 6)
    assert r["precision"] == pytest.approx(4 / 6) and r["recall"] == pytest.approx(4 / 6)
    assert r["f1"] == pytest.approx(4 / 6)
    assert r["macro_precision"] == pytest.approx((0.5 + 1) / 2)
    assert r["unlocated_quotes"] == 1
    assert locate("EFG", "abcdefg") == (4, 7)


def test_unit_and_typed_decisions():
    from judgeaudit.analyses.world.pooling import Pooled
    from judgeaudit.analyses.world.scoring import decisions
    s = summary_item()
    p = Pooled(parsed_votes=3, votes=3, label=True, unit_labels=[True, True], defect_ids=["entity"], score=None,
               defects=None, ties=0)
    assert [(r["gold"], r["flagged"]) for r in decisions(s, p, "sentences")] == [(False, True), (True, True)]
    assert [(r["gold"], r["flagged"]) for r in decisions(s, p, "typed")] == [(False, True), (True, False)]
    # a unit whose kind names two types is still one unit, flagged when either type is named; two constraints
    # of one type stay two units
    from judgeaudit.records import Unit
    from judgeaudit.world.requests import taxonomy_of
    two = s.model_copy(update={"units": [s.units[0], Unit(unit_id="u", text="t", defective=True, kind="a, contradiction"),
                                         Unit(unit_id="v", text="w", defective=False, kind="a")]})
    assert taxonomy_of([two]) == ("a", "contradiction", "entity")
    rows = decisions(two, p.__class__(**{**p.__dict__, "defect_ids": ["a"]}), "typed")
    assert [(r["unit"], r["gold"], r["flagged"]) for r in rows] == [
        ("s1.0", False, False), ("u", True, True), ("v", False, True)]


def test_second_matcher_agreement_and_cohen_kappa():
    from sklearn.metrics import cohen_kappa_score

    from judgeaudit.analyses.world.scoring import agreement
    items = [it for it in tiny_items() if it.spans]
    complaints = {it.item_id: [{"span": "x", "reason": str(k)} for k in range(3)] for it in items}
    first = lambda c, s, it: c["reason"] != "2"                                  # noqa: E731
    second = lambda c, s, it: None if it.item_id == "q3-wrong" else c["reason"] == "0"   # noqa: E731
    ag = agreement(items, complaints, first, second)
    # decided pairs: q0–q2 wrong × 3 complaints; first credits reasons 0, 1; second reason 0
    a, b = [1, 1, 0] * 3, [1, 0, 0] * 3
    assert (ag["pairs"], ag["decided"]) == (12, 9)
    assert ag["agreement"] == pytest.approx(6 / 9) and ag["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert (ag["first_credits"], ag["second_credits"]) == (pytest.approx(6 / 9), pytest.approx(3 / 9))


def test_permuted_control_false_matches_by_segment_length():
    items = [WorldItem(item_id=f"i{k}", task="rag", output=out, spans=[Span(start=0, end=len(out))])
             for k, out in enumerate(["Paris", "the tall tower", "it opened in nineteen hundred and one today"])]
    complaints = {it.item_id: [{"span": "Paris tower opened"}] for it in items}
    audit = matcher_audit(items, complaints, strict_matcher(), seed=0)
    # each item's complaint meets another item's segment: lengths 1 ("paris"), 2 ("tall tower"), 4 content tokens
    assert audit["complaints"] == 3
    by = audit["by_segment_length"]
    assert set(by) == {"1", "2", "3-5"} and all(v["pairs"] == 1 for v in by.values())
    assert sum(v["false_matches"] for v in by.values()) == audit["false_matches"]
    # FRANK-like 2-token segments and quotes from another summary that share only stop words with them:
    # credited at overlap 1/2 when stop words counted; never now
    segs = ["the mayor", "in Paris", "a law"]
    items = [WorldItem(item_id=f"f{k}", task="summarization", output=f"{seg} was cited.",
                       spans=[Span(start=0, end=len(seg))]) for k, seg in enumerate(segs)]
    complaints = {it.item_id: [{"span": "the council met in a hall"}] for it in items}
    audit = matcher_audit(items, complaints, strict_matcher(), seed=0)
    assert (audit["complaints"], audit["false_matches"]) == (3, 0)
    assert audit["by_segment_length"] == {"1": {"pairs": 3, "false_matches": 0, "rate": 0.0}}


@pytest.mark.parametrize("form", ["label", "score", "sentences", "typed", "defects"])
def test_pooling_a_whole_table_in_one_pass_gives_each_groups_pooled_report(form):
    """``pooled_groups`` (one pass over the table's records) pools every (judge, request) exactly as
    ``pool_votes`` pools its rows alone, in the order ``groupby(sort=False)`` gives them: failed calls, parse
    failures, ties and missing cells included."""
    import numpy as np

    from judgeaudit.analyses.world.pooling import pooled_groups

    rng = np.random.default_rng(3)
    rows = []
    for k in range(400):
        judge, req = f"j{k % 3}", f"item{(k * 7) % 41}::{'blind' if k % 2 else 'informed'}"
        failed, parsed = rng.random() < 0.1, rng.random() < 0.85
        rows.append({"judge_id": judge, "request_id": req, "parse_ok": parsed and not failed,
                     "error": "timeout" if failed else None,
                     "label": None if not parsed else bool(rng.random() < 0.5),
                     "unit_labels": [bool(x) for x in rng.random(3) < 0.4] if parsed else None,
                     "defect_ids": [f"t{i}" for i in range(3) if rng.random() < 0.3] if parsed else None,
                     "score": float(rng.integers(1, 6)) if parsed else np.nan,
                     "defects": [{"span": str(rng.integers(0, 3)), "reason": "r"}] if parsed and rng.random() < .5
                     else ([] if parsed else None)})
    table = pd.DataFrame(rows)
    want = [(key, pool_votes(g, form=form)) for key, g in table.groupby(["judge_id", "request_id"], sort=False)]
    got = list(pooled_groups(table, form=form))
    assert got == want and len(got) == table.groupby(["judge_id", "request_id"]).ngroups
    usable = (table["parse_ok"].astype(bool) & table["error"].isna()).groupby(
        [table["judge_id"], table["request_id"]], sort=False).sum()   # a usable vote, as the table reads it
    assert [p.parsed_votes for _, p in got] == usable.tolist()
    assert sum(p.ties for _, p in got) > 0 and any(p.parsed_votes < p.votes for _, p in got)

from __future__ import annotations

import pandas as pd
import pytest
from world_fixtures import summary_item, tiny_items

from judgeaudit.world.items import Span, WorldItem
from judgeaudit.world.pooling import majority, pool_votes
from judgeaudit.world.scoring import (
    STRICT_THRESHOLD,
    char_overlap,
    disagreement,
    locate,
    matcher_audit,
    span_scores,
    strict_match,
    strict_matcher,
)


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
    assert [x["span"] for x in d.defects] == ["1901", "Paris"] and d.label is True
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
    # two of four tokens shared: passes at 0.5, fails at 0.6
    assert strict_match("the big red house", "the big blue car", 0.5)
    assert not strict_match("the big red house", "the big blue car", 0.6)


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
    assert dis == {"pairs": 4, "differ": 1, "first_only": 0, "second_only": 1, "rate": 0.25}
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
    from judgeaudit.world.pooling import Pooled
    from judgeaudit.world.scoring import decisions
    s = summary_item()
    p = Pooled(parsed_votes=3, votes=3, label=True, unit_labels=[True, True], defect_ids=["entity"], score=None,
               defects=None, ties=0)
    assert [(r["gold"], r["flagged"]) for r in decisions(s, p, "sentences")] == [(False, True), (True, True)]
    assert [(r["gold"], r["flagged"]) for r in decisions(s, p, "typed")] == [(False, True), (True, False)]
    # a unit whose kind names two types makes each type a unit (defective when the unit is): reporting one
    # of them finds that type and misses the other
    from judgeaudit.world.items import Unit
    from judgeaudit.world.requests import taxonomy_of
    two = s.model_copy(update={"units": [s.units[0], Unit(unit_id="u", text="t", defective=True, kind="a, contradiction")]})
    assert taxonomy_of([two]) == ("a", "contradiction", "entity")
    rows = decisions(two, p.__class__(**{**p.__dict__, "defect_ids": ["a"]}), "typed")
    assert [(r["unit"], r["gold"], r["flagged"]) for r in rows] == [
        ("s1#entity", False, False), ("s1#a", True, True), ("s1#contradiction", True, False)]

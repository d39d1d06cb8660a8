"""World scoring on the designs where it used to break: a RAGTruth-shaped set with error-free answers and
an over-flagging blind judge (character and span scores over every answer, character specificity); a
simulation where recall falls while correctness rises (one McNemar per metric and stratum); a free-text
judge scored per marked segment and per sentence through the matcher; a matcher that never decides; the
Spearman default; the report's order. Scripted judges' replies go through judgeaudit's own parsers and
pooling."""

from __future__ import annotations

import json

import numpy as np
import pytest
from world_fixtures import ScriptedJudge, world_run

from judgeaudit.records import Span, Unit, WorldItem
from judgeaudit.world.run import analyse, judge_world


def _run(tmp_path, reply, items, form, arms=("blind", "informed"), n_boot=200, **kw):
    v = judge_world(items, [ScriptedJudge(reply, "j")], list(arms), form=form, votes=1,
                    store_path=tmp_path / "calls.sqlite", progress=False)
    return analyse(items, v, form=form, arms=list(arms), n_boot=n_boot, seed=0, n_perm=99, **kw)


# --- 1: character-level and span scores over every answer -------------------------------------------------


def rag_items(n_def: int, n_clean: int) -> list[WorldItem]:
    """RAGTruth-shaped: answers with one marked wrong year, and error-free answers (no span)."""
    items = []
    for i in range(n_def):
        out = f"Bridge {i} opened in {1900 + i} and is long."
        at = out.index(str(1900 + i))
        items.append(WorldItem(item_id=f"d{i}", task="rag", output=out, world=f"Bridge {i} opened in 1800.",
                               defective=True, group=f"d{i}", spans=[Span(start=at, end=at + 4)]))
    for i in range(n_clean):
        items.append(WorldItem(item_id=f"c{i}", task="rag", output=f"Tunnel {i} is in use since 1932 today.",
                               world=f"Tunnel {i} is in use since 1932.", defective=False, group=f"c{i}"))
    return items


def over_flagging(items):
    by_id = {it.item_id: it for it in items}

    def reply(req):
        it = by_id[req.meta["item_id"]]
        quotes = req.meta["gold"]["quotes"]
        if not quotes and not req.meta["world_shown"]:       # blind: most of an error-free answer flagged
            quotes = [it.output[: int(0.75 * len(it.output))]]
        return json.dumps({"defects": [{"quote": q, "reason": "unsupported"} for q in quotes]})

    return reply


def test_char_and_span_scores_count_text_flagged_on_error_free_answers(tmp_path):
    items = rag_items(9, 3)
    an = _run(tmp_path, over_flagging(items), items, "defects")
    arms = an.result["judges"]["j"]["arms"]
    bl, inf = arms["blind"]["spans"], arms["informed"]["spans"]
    clean_chars = [len(it.output) for it in items if not it.spans]
    flagged = sum(int(0.75 * n) for n in clean_chars)
    # blind: 9 gold years (36 characters) found, plus 75% of each error-free answer flagged
    assert bl["char_overlap"]["precision"] == pytest.approx(36 / (36 + flagged))
    assert bl["char_overlap"]["recall"] == 1.0
    p = 36 / (36 + flagged)
    assert bl["char_overlap"]["f1"] == pytest.approx(2 * p / (p + 1))
    assert bl["strict"]["precision"] == pytest.approx(9 / 12)       # 3 complaints point at no marked segment
    assert (inf["char_overlap"]["precision"], inf["strict"]["precision"]) == (1.0, 1.0)
    # character specificity on the error-free answers, pooled over characters, bootstrap over answers
    cs = bl["char_specificity"]
    assert (cs["answers"], cs["chars"], cs["flagged_chars"]) == (3, sum(clean_chars), flagged)
    assert cs["specificity"] == pytest.approx(1 - flagged / sum(clean_chars))
    assert cs["ci"][0] <= cs["specificity"] <= cs["ci"][1]
    assert cs["mean_flagged_share"] == pytest.approx(np.mean([int(0.75 * n) / n for n in clean_chars]))
    assert inf["char_specificity"]["specificity"] == 1.0


# --- 2: one McNemar per metric and stratum -----------------------------------------------------------------


def qa_items(n_def: int, n_clean: int) -> list[WorldItem]:
    return [WorldItem(item_id=f"{'d' if i < n_def else 'c'}{i}", task="qa", output=f"Answer {i}.",
                      world=f"Fact {i}.", question=f"Question {i}?", defective=i < n_def, group=f"g{i}")
            for i in range(n_def + n_clean)]


def test_mcnemar_of_each_metric_uses_its_own_stratum_when_recall_falls_and_correctness_rises(tmp_path):
    # 10 defective, 30 clean answers. Blind flags every defective one and 20 clean ones; informed flags 4
    # defective ones and no clean one: recall falls 1.0 -> 0.4 while correctness rises 20/40 -> 34/40.
    items = qa_items(10, 30)

    def reply(req):
        i = int(req.meta["item_id"][1:])
        flag = i < 30 if not req.meta["world_shown"] else i < 4
        return json.dumps({"defective": flag})

    an = _run(tmp_path, reply, items, "label")
    rows = {p["metric"]: p for p in an.result["paired"]}
    rec = rows["recall"]
    assert (rec["a_value"], rec["b_value"]) == (1.0, pytest.approx(0.4))
    assert (rec["mcnemar"]["stratum"], rec["mcnemar"]["b"], rec["mcnemar"]["c"]) == ("defective", 0, 6)
    assert rec["mcnemar"]["p"] == pytest.approx(2 * 0.5 ** 6)
    assert rec["mcnemar"]["c_is"] == "defective units a found and b missed"
    for m in ("specificity", "false_alarms_per_clean"):
        mc = rows[m]["mcnemar"]
        assert (mc["stratum"], mc["units"], mc["b"], mc["c"]) == ("clean", 30, 20, 0)
        assert mc["p"] == pytest.approx(2 * 0.5 ** 20)
    ba = rows["balanced_accuracy"]["mcnemar"]
    assert (ba["stratum"], ba["b"], ba["c"]) == ("all", 20, 6)
    assert rows["precision"]["mcnemar"] is None


# --- 3: free-text reports per marked segment and per sentence ---------------------------------------------


def two_segment_items() -> list[WorldItem]:
    items = []
    for i in range(4):
        out = f"Ship {i} sailed in {1800 + i} from Lisbon to Goa."
        a, b = out.index(str(1800 + i)), out.index("Goa")
        items.append(WorldItem(item_id=f"d{i}", task="rag", output=out, world="Ship log.", defective=True,
                               group=f"d{i}", spans=[Span(start=a, end=a + 4), Span(start=b, end=b + 3)]))
    items += [WorldItem(item_id=f"c{i}", task="rag", output=f"Ship {i} was wooden.", world="Ship log.",
                        defective=False, group=f"c{i}") for i in range(2)]
    return items


def test_defects_are_scored_per_marked_segment_with_a_paired_gain_and_mcnemar(tmp_path):
    def reply(req):   # blind finds the first marked segment of each answer, informed both
        q = req.meta["gold"]["quotes"]
        q = q if req.meta["world_shown"] else q[:1]
        return json.dumps({"defects": [{"quote": x, "reason": "wrong"} for x in q]})

    an = _run(tmp_path, reply, two_segment_items(), "defects")
    arms = an.result["judges"]["j"]["arms"]
    # answer level: both arms complain about every defective answer, so "the answer got any complaint"
    # sees no gain
    assert arms["blind"]["unit"] == "answer" and arms["blind"]["recall"] == arms["informed"]["recall"] == 1.0
    seg_b, seg_i = arms["blind"]["matched"]["segment:strict"], arms["informed"]["matched"]["segment:strict"]
    assert (seg_b["n"], seg_b["recall"], seg_i["recall"]) == (8, 0.5, 1.0)
    assert seg_b["ci"]["recall"] == [0.5, 0.5]          # every answer: 1 of its 2 segments
    row = next(p for p in an.result["paired"] if p["unit"] == "segment" and p["matcher"] == "strict")
    assert (row["metric"], row["gain"], row["n"]) == ("recall", 0.5, 8)
    assert (row["mcnemar"]["b"], row["mcnemar"]["c"]) == (4, 0) and row["mcnemar"]["p"] == pytest.approx(0.125)
    ans = next(p for p in an.result["paired"] if p["unit"] == "answer" and p["metric"] == "recall")
    assert ans["gain"] == 0.0 and ans["matcher"] is None


def frank_items() -> list[WorldItem]:
    """Summaries with labelled sentences (FRANK-shaped): the second sentence of each wrong."""
    items = []
    for i in range(4):
        s1, s2 = f"Council {i} approved the budget.", f"Mayor {i} resigned in protest."
        out = f"{s1} {s2}"
        items.append(WorldItem(item_id=f"s{i}", task="summarization", output=out, world="Article.",
                               group=f"s{i}", units=[
                                   Unit(unit_id=f"s{i}.0", text=s1, start=0, end=len(s1), defective=False),
                                   Unit(unit_id=f"s{i}.1", text=s2, start=len(s1) + 1, end=len(out),
                                        defective=True)]))
    return items


def test_defects_map_to_sentences_through_the_matcher_frank_path(tmp_path):
    items = frank_items()
    by_id = {it.item_id: it for it in items}

    def reply(req):   # blind complains about every sentence, informed about the wrong one
        it = by_id[req.meta["item_id"]]
        sents = [u.text for u in it.units if req.meta["world_shown"] is False or u.defective]
        return json.dumps({"defects": [{"quote": s, "reason": "unsupported"} for s in sents]})

    an = _run(tmp_path, reply, items, "defects")
    arms = an.result["judges"]["j"]["arms"]
    sb, si = arms["blind"]["matched"]["sentence:strict"], arms["informed"]["matched"]["sentence:strict"]
    assert (sb["n"], sb["n_defective"], sb["recall"], sb["specificity"], sb["balanced_accuracy"]) == (8, 4, 1, 0, .5)
    assert sb["false_alarms_per_clean"] == 1.0
    assert (si["recall"], si["specificity"], si["balanced_accuracy"]) == (1.0, 1.0, 1.0)
    row = next(p for p in an.result["paired"] if p["unit"] == "sentence" and p["metric"] == "false_alarms_per_clean")
    assert row["gain"] == -1.0 and (row["mcnemar"]["stratum"], row["mcnemar"]["b"], row["mcnemar"]["c"]) == (
        "clean", 4, 0)


# --- a matcher that never decides ---------------------------------------------------------------------------


def test_an_undecided_matcher_is_not_no_match(tmp_path):
    items = rag_items(4, 1)
    an = _run(tmp_path, over_flagging(items), items, "defects", generous=lambda c, s, it: None)
    sp = an.result["judges"]["j"]["arms"]["informed"]["spans"]
    g = sp["generous"]
    assert (g["recall"], g["precision"], g["undecided_segments"], g["undecided_complaints"]) == (None, None, 4, 4)
    assert "decided none of the 4 segments" in g["undefined"]["recall"]
    seg = an.result["judges"]["j"]["arms"]["informed"]["matched"]["segment:generous"]
    assert seg["recall"] is None and seg["undecided"] == 4 and "decided none" in seg["undefined"]
    assert sp["permuted_audit_generous"]["false_match_rate"] is None
    assert sp["strict"]["recall"] == 1.0


# --- 18a: Spearman one-sided in the predicted direction by default ------------------------------------------


def test_world_spearman_defaults_to_one_sided_in_the_predicted_direction(tmp_path):
    from judgeaudit.analyses.world.correlate import answer_gains, covariate_table
    from judgeaudit.stats.tests import spearman_test

    items = qa_items(6, 6)
    # gain on an answer falls with the world's length: informed right on the short worlds only
    items = [it.model_copy(update={"world": "x" * (10 + i)}) for i, it in enumerate(items)]

    def reply(req):
        i = int(req.meta["item_id"][1:])
        right = req.meta["world_shown"] and i % 6 < 3
        return json.dumps({"defective": (i < 6) == right})

    an = _run(tmp_path, reply, items, "label", n_boot=0)
    row = next(r for r in an.result["spearman"] if r["quantity"] == "gain")
    assert row["alternative"] == "greater" and row["rho"] < 0
    g = answer_gains(an.decisions, "j", "blind", "informed")
    cov = covariate_table(items, ["world_chars"])["world_chars"].reindex(g.index)
    assert row["p"] == pytest.approx(spearman_test(cov, g, n_perm=99, seed=0, alternative="greater").p)
    assert row["p"] > 0.5


# --- the report page: key finding first, the Shapley chart before the cell table, "—" explained ------------


def test_world_report_opens_with_the_paired_gain_and_writes_dashes_with_a_footnote(tmp_path):
    import re

    from judgeaudit.report.html import esc
    from judgeaudit.report.world import DASH_NOTE, world_sections
    from judgeaudit.world.run import factorial_arms, factorial_table

    def reply(req):
        q = req.meta["gold"]["quotes"]
        q = q if req.meta["world_shown"] else q[:1]
        return json.dumps({"defects": [{"quote": x, "reason": "wrong"} for x in q]})

    an = _run(tmp_path, reply, two_segment_items(), "defects")
    secs = world_sections(world_run(an.result, two_segment_items(), "two-segment", ["j"]))
    assert secs[0].title == "Key finding"
    assert "recall per segment blind 0.500 → informed 1.000, gain +0.500 [" in secs[0].body
    assert "McNemar p = 0.125 on the defective units (b = 4, c = 0); strict matcher" in secs[0].body
    tables = "".join(s.body for s in secs)
    cells = re.findall(r"<td>(.*?)</td>", tables)
    assert cells and not {"None", "nan", "NaN"} & set(cells)
    assert "—" in cells and esc(DASH_NOTE) in tables    # precision's McNemar, for one

    factors = ["question", "source"]
    arms = sorted(set(factorial_arms(factors).values()))
    items = qa_items(3, 3)
    v = judge_world(items, [ScriptedJudge(lambda r: json.dumps({"defective": r.meta["world_shown"]}), "j")], arms,
                    form="label", votes=1, store_path=tmp_path / "f.sqlite", progress=False)
    fa = analyse(items, v, form="label", arms=arms, n_boot=0, n_perm=9)
    run = world_run({**fa.result, "factorial": factorial_table(fa, factors, ["j"])}, items, "qa", ["j"])
    titles = [s.title for s in world_sections(run)]
    assert titles.index("Factorial") < titles.index("Arms")
    fac = next(s for s in world_sections(run) if s.title == "Factorial")
    assert fac.body.index("plotly") < fac.body.index("<table")

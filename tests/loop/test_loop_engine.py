"""The loop end to end in process: certificate reaches the checker's ceiling with a responder that
fixes what it is told; echo changes nothing; a blind judge's complaints are mapped and counted."""

from __future__ import annotations

import pytest
from scripted import Constant, FixNamedUnits

from judgeaudit.errors import InputError
from judgeaudit.loop.accounting import summarise
from judgeaudit.loop.engine import initial_outputs, run_loop
from judgeaudit.loop.regulators import get_regulator
from judgeaudit.loop.responders import ECHO, make_responder
from judgeaudit.loop.tasks import load_task

COMMA = {"defects": [{"quote": "x", "reason": "the response uses a comma", "severity": 2}]}


def _run(d, regs, responder, judge=None, rounds=1, votes=1):
    t = load_task("ifeval", d)
    lr = run_loop(t, initial_outputs(t, "shipped"), [get_regulator(r) for r in regs], responder=responder,
                  judge=judge, rounds=rounds, votes=votes)
    return lr, summarise(lr.units, lr.complaints, list(lr.regulators), rounds, n_boot=50)


def test_certificate_with_a_fixing_responder_reaches_the_ceiling(ifeval_dir):
    _, s = _run(ifeval_dir, ["certificate", "control"], FixNamedUnits())
    assert s["before"]["pass_rate"] == pytest.approx(2 / 5)
    c = s["regulators"]["certificate"]
    assert (c["fixed"], c["broken"], c["net"], c["acted_on"]) == (3, 0, pytest.approx(3 / 5), 2)
    assert c["pass_rate"] == 1.0 and c["precision"] == 1.0
    # the no-report control names nothing, so this responder changes nothing; it acts on every response
    k = s["regulators"]["control"]
    assert (k["fixed"], k["broken"], k["acted_on"]) == (0, 0, 4)


def test_certificate_on_the_shipped_gpt4_responses_reaches_the_ceiling(data_dir):
    # every shipped IFEval response whose constraints the scripted responder can fix
    from scripted import FIXES

    t = load_task("ifeval", data_dir / "ifeval")
    keep = tuple(it for it in t.items if set(it.checked.instruction_ids) <= set(FIXES)
                 and not {"change_case:english_lowercase", "change_case:english_capital"}
                 <= set(it.checked.instruction_ids))
    t = type(t)(t.name, keep, t.source)
    init = initial_outputs(t, "shipped")
    lr = run_loop(t, init, [get_regulator("certificate")], responder=FixNamedUnits())
    s = summarise(lr.units, lr.complaints, ["certificate"], 1, n_boot=50)
    # the ceiling, from the checker alone: failing units whose fix makes the response pass them
    # (two one-word responses, 'etchings' and 'YES', stay failing: langdetect does not call them English)
    failing = [(it, u) for it in t.items for u, r in zip(it.units, t.check(it, init[it.item_id]).units,
                                                          strict=True) if not r.passed]
    ceiling = sum(t.check(it, FIXES[u.split(":", 1)[1]](init[it.item_id])).units[it.units.index(u)].passed
                  for it, u in failing)
    assert len(keep) == 41 and (len(failing), ceiling) == (8, 6)
    c = s["regulators"]["certificate"]
    assert (c["fixed"], c["broken"]) == (ceiling, 0)


def test_echo_gives_fixed_and_broken_zero(ifeval_dir):
    echo = make_responder("reference:echo")
    _, s = _run(ifeval_dir, ["control", "blind", "informed", "certificate"], echo, Constant(COMMA), rounds=2)
    for name, r in s["regulators"].items():
        assert (r["fixed"], r["broken"], r["net"]) == (0, 0, 0.0), name
        assert [x["pass_rate"] for x in r["rounds"]] == [pytest.approx(2 / 5)] * 2


def test_blind_complaints_are_mapped_by_the_keyword_table(ifeval_dir):
    judge = Constant(COMMA)
    lr, s = _run(ifeval_dir, ["blind"], FixNamedUnits(), judge)
    b = s["regulators"]["blind"]
    # the comma complaint maps to the no_comma unit of items 1, 2, 4: fixes 1 and 2; item 3 has none
    assert (b["fixed"], b["broken"], b["acted_on"]) == (2, 0, 4)
    assert b["precision"] == pytest.approx(2 / 4)          # correct on items 1 and 2 only
    assert b["false_alarm_rate"] == pytest.approx(1 / 2)  # satisfied: item 3 capital (clean), item 4 comma (flagged)
    # blind: no world block; the prompt holds the output only
    assert all("instruction the response had to follow" not in p for p in judge.prompts)


def test_arms_differ_only_in_the_world_block(ifeval_dir):
    from judgeaudit.loop import prompts as P

    blind = P.regulator_prompt("ifeval", "out", world=None, question=None, channel="free")
    informed = P.regulator_prompt("ifeval", "out", world="Prompt 1.", question=None, channel="free")
    assert informed.replace(P.world_block("ifeval", "Prompt 1."), "") == blind


def test_a_regulator_that_reports_no_defect_takes_no_action(ifeval_dir):
    _, s = _run(ifeval_dir, ["informed", "score"], FixNamedUnits(), Constant({"defects": [], "score": 5}))
    for r in s["regulators"].values():
        assert r["acted_on"] == 0 and r["fixed"] == r["broken"] == 0


def test_rounds_ask_the_judge_afresh(ifeval_dir):
    t = load_task("ifeval", ifeval_dir)
    judge = Constant(COMMA)
    lr = run_loop(t, initial_outputs(t, "shipped"), [get_regulator("blind")],
                  responder=make_responder("reference:echo"),
                  judge=judge, rounds=3, votes=2)
    keys = set()
    from judgeaudit.loop import prompts as P
    from judgeaudit.records import JudgeRequest

    for rnd in (1, 2, 3):
        for v in range(2):
            keys.add(judge.key(JudgeRequest(form="generate", request_id="x", epoch=100 * rnd + v,
                                            prompt=P.regulator_prompt("ifeval", "a, b, c", world=None, question=None,
                                                                      channel="free"))))
    assert len(keys) == 6 and len(judge.prompts) == 4 * 3 * 2


def test_composed_regulators_and_bad_names():
    r = get_regulator("blind+top1+second")
    assert (r.channel, r.world, r.throttle, r.judge, r.name) == ("free", "none", 1, "second", "blind+top1+second")
    with pytest.raises(InputError, match="unknown regulator"):
        get_regulator("oracle2")
    with pytest.raises(InputError, match="takes no modifier"):
        get_regulator("control+half")


def test_score_channel_median_and_whole_response_flags(ifeval_dir):
    from judgeaudit.loop.regulators import pool_score, score_report

    assert pool_score([2.0, None, 5.0, 4.0]) == 4.0
    r = score_report(4.0, 3, ("0:a", "1:b"))
    assert r.acted and r.complaints[0].units == ("0:a", "1:b") and r.feedback == (
        "A reviewer scored your response 4 out of 5.",)
    _, s = _run(ifeval_dir, ["score"], FixNamedUnits(), Constant({"score": 3}))
    x = s["regulators"]["score"]
    assert x["acted_on"] == 4
    # the scripted responder applies the fix of every flagged unit: the 3 failing ones are fixed
    assert (x["fixed"], x["broken"]) == (3, 0)


def test_a_bare_score_has_no_rates(ifeval_dir, tmp_path):
    # §8.2: "A scalar names no constraint, so no rate is defined for it" — in the result and the report
    from judgeaudit.commands.loop import run_loop_command

    r = run_loop_command(task="ifeval", data=ifeval_dir, initial="shipped", responder=FixNamedUnits(),
                         judge=Constant({"score": 3, "defects": []}), regulators=["score", "blind+score", "informed"],
                         out=tmp_path / "o", votes=1, bootstrap=0, progress=False)
    for name in ("score", "blind+score"):
        x = r["regulators"][name]
        assert (x["precision"], x["false_alarm_rate"], x["break_rate_flagged"], x["break_rate_unflagged"]) == (
            None, None, None, None), name
        assert all(rd[k] is None for rd in x["rounds"] for k in ("precision", "false_alarm_rate")), name
        assert (x["fixed"], x["acted_on"]) == (3, 4)
    assert r["regulators"]["informed"]["false_alarm_rate"] == 0.0       # an empty free-text report flags nothing
    assert r["precision_vs_net"]["regulators"] == []                    # no arm with a precision: no Spearman
    assert "none (a score names no constraint)" in (tmp_path / "o" / "report.html").read_text()


def test_keyword_table_matches_words_not_substrings():
    from judgeaudit.loop.keywords import map_complaint

    units = ("0:detectable_format:constrained_response", "1:punctuation:no_comma",
             "2:change_case:english_capital", "3:detectable_content:number_placeholders")
    assert map_complaint("I do not know what the user wants", units) == ()          # "no" in not/know
    assert map_complaint("None of the sentences is finished", units) == ()
    assert map_complaint("The answer should be 'My answer is no.'", units) == (units[0],)
    assert map_complaint("It uses two commas", units) == (units[1],)                 # inflected forms match
    assert map_complaint("Not every word is capitalized", units) == (units[2],)
    assert map_complaint("It lacks a [name] placeholder", units) == (units[3],)      # punctuation keywords


@pytest.mark.data
def test_half_world_shows_a_seeded_random_half_and_its_realised_share_is_reported(data_dir, tmp_path):
    from judgeaudit.commands.loop import run_loop_command
    from judgeaudit.loop.regulators import half_share, half_world

    t = load_task("ifeval", data_dir / "ifeval")
    # max(1, ⌊n/2⌋) of each response's n constraints (305 with one, 179 with two, 57 with three):
    # 541 of the 834 shown, 64.9% (the paper: 63% as realised on its 300-response subset); ⌈n/2⌉ showed 72%
    assert half_share("ifeval", t.items) == {"shown": 541, "of": 834, "share": pytest.approx(541 / 834)}
    three = next(it for it in t.items if len(it.units) == 3)
    shown = [line[2:] for line in half_world("ifeval", three.item_id, three.world, three.unit_text).splitlines()[1:]]
    assert len(shown) == 1 and shown[0] in three.unit_text.values()
    twos = [it for it in t.items if len(it.units) == 2]
    second = sum(half_world("ifeval", it.item_id, it.world, it.unit_text).endswith(list(it.unit_text.values())[1])
                 for it in twos)
    assert (len(twos), second) == (179, 80)              # a seeded random one of the two, not always the first
    r = run_loop_command(task="ifeval", data=data_dir / "ifeval", initial="shipped", responder=make_responder(ECHO),
                         judge=Constant(COMMA), regulators=["world_half"], out=tmp_path / "o", votes=1,
                         max_items=20, bootstrap=0, progress=False)
    assert r["regulators"]["world_half"]["world_shown"] == half_share("ifeval", t.items[:20])


def test_typed_votes_majority_and_two_judges_agree():
    from judgeaudit.loop.regulators import Complaint, agree, pool_typed

    assert pool_typed([["a", "b"], ["a"], None, ["c", "a"]]) == ["a"]       # 3 parsed: a 3/3; b, c 1/3
    assert pool_typed([["a"], ["b"]]) == []                                  # a tie is not a majority
    free = [Complaint("comma", 2, ("0:punctuation:no_comma",)),
            Complaint("case", 1, ("1:change_case:english_lowercase",))]
    kept = agree(free, ("0:punctuation:no_comma",), ("0:punctuation:no_comma", "1:change_case:english_lowercase"))
    assert [c.text for c in kept] == ["comma"]


def test_failed_judge_calls_are_counted_and_take_no_action(ifeval_dir):
    class Broken(Constant):
        async def judge_one(self, request):
            raise RuntimeError("down")

    t = load_task("ifeval", ifeval_dir)
    lr = run_loop(t, initial_outputs(t, "shipped"), [get_regulator("blind")], responder=FixNamedUnits(),
                  judge=Broken("x"), rounds=2, votes=3)
    # a failed call is a failed call, not also a parse failure (counted as every other form counts them)
    assert lr.judge_errors == {"blind": 4 * 3 * 2} and lr.judge_parse_failures == {"blind": 0}
    assert lr.judge_calls["blind"].usable == 0 and lr.unusable() == ["blind"]
    assert lr.judge_calls["blind"].reasons == ("RuntimeError: down",) or "down" in lr.judge_calls["blind"].reasons[0]
    assert not lr.units["acted"].any()


def test_hidden_arm_shows_the_rewritten_request_and_half_shows_half_the_constraints(ifeval_dir, data_dir):
    from judgeaudit.loop.regulators import half_world

    t = load_task("ifeval", ifeval_dir)
    judge, rewriter = Constant(COMMA), Constant("Write something.")
    lr = run_loop(t, initial_outputs(t, "shipped"), [get_regulator("hidden")], responder=make_responder(ECHO),
                  judge=judge, rewriter=rewriter, votes=1)
    assert lr.rewrites == {k: "Write something." for k in ("1", "2", "3", "4")}
    assert len(rewriter.prompts) == 4 and "Prompt 2." in rewriter.prompts[1]
    assert all("Write something." in p and "Prompt " not in p for p in judge.prompts)
    two = t.items[1]                                     # two constraints → one shown
    shown = half_world("ifeval", two.item_id, two.world, two.unit_text)
    assert shown.startswith("Constraints:\n- ") and shown.count("\n- ") == 1
    assert shown == half_world("ifeval", two.item_id, two.world, two.unit_text)   # seeded
    with pytest.raises(InputError, match="IFEval only"):
        g = load_task("gsm8k", data_dir / "gsm8k", max_items=2)
        run_loop(g, initial_outputs(g, "shipped"), [get_regulator("hidden")], responder=make_responder(ECHO),
                 judge=judge)


def test_sampled_once_asks_one_vote_per_output_and_round(ifeval_dir):
    t = load_task("ifeval", ifeval_dir)
    judge = Constant(COMMA)
    run_loop(t, initial_outputs(t, "shipped"), [get_regulator("informed_once")], responder=make_responder(ECHO),
             judge=judge, rounds=2, votes=3)
    assert len(judge.prompts) == 4 * 2
    assert get_regulator("blind+once").votes == 1


def test_shipped_initial_outputs_never_score_a_stale_response_against_an_edited_prompt(data_dir):
    # Google's GPT-4 response file has no response with the text of prompt 2785 (edited after the
    # responses were written): it is left out of a shipped loop and counted, never joined by line
    from judgeaudit.loop.tasks import NO_SHIPPED, shipped_only

    t = load_task("ifeval", data_dir / "ifeval")
    assert len(t.items) == 541 and next(it for it in t.items if it.item_id == "2785").shipped is None
    s = shipped_only(t)
    assert len(s.items) == 540 and "2785" not in {it.item_id for it in s.items}
    assert s.excluded == {NO_SHIPPED: 1}
    assert set(initial_outputs(s, "shipped")) == {it.item_id for it in s.items}

from __future__ import annotations

import pytest
from world_fixtures import fake_encoder, summary_item, tiny_items

from judgeaudit.errors import InputError
from judgeaudit.judges import elicit
from judgeaudit.records import JudgeRequest
from judgeaudit.world import arms as A
from judgeaudit.world.parse import parse
from judgeaudit.world.requests import build_request, check_spans
from judgeaudit.world.templates import CONTEXT_BLOCKS, PROCEDURE_BLOCKS, PROCEDURES, WORLD_FORMS, render_blocks

ALL = tiny_items() + [summary_item()]


def ctx(**kw):
    return A.ArmContext(pool=tuple(ALL + _extra_qa()), seed=0, encoder=fake_encoder,
                        taxonomy=("contradiction", "entity"), **kw)


def _extra_qa():
    from judgeaudit.records import WorldItem
    return [WorldItem(item_id=f"x{i}", task="qa", output="o", world=f"Extra world number {i}. " * (i + 1),
                      question="q?", group=f"x{i}") for i in range(10)]


def _strip(prompt_blocks, drop):
    return "\n\n".join(t for n, t in prompt_blocks if n not in drop)


@pytest.mark.parametrize("form", WORLD_FORMS)
def test_prompts_are_byte_identical_across_arms_outside_the_world_blocks(form):
    item = summary_item() if form in ("sentences", "typed") else tiny_items()[1]
    c = ctx()
    rendered = {}
    for arm in A.ARMS:
        if (arm == "placebo" or arm.startswith("dilution")) and item.task != "qa":
            continue       # the tiny pool has other worlds for the qa task only
        req = build_request(item, arm, c, form=form)
        assert elicit.render(req) == "\n\n".join(t for _, t in render_blocks(req))
        rendered[arm] = render_blocks(req)
    base = _strip(rendered["blind"], CONTEXT_BLOCKS)
    plain = {a for a, d in rendered.items() if "procedure" not in dict(d) and "taxonomy" not in a
             and "typed" not in a and not a.endswith("T1")}
    assert {"blind", "informed", "blind+question", "answer-alone", "reference-only", "world+reference",
            "routed"} <= plain
    if item.task == "qa":
        assert {"placebo", "dilution-2", "dilution-5", "dilution-10"} <= plain
    for arm in plain:
        assert _strip(rendered[arm], CONTEXT_BLOCKS).encode() == base.encode(), arm
    # arms with a step differ from blind also in that block, and only there
    for arm, blocks in rendered.items():
        assert _strip(blocks, CONTEXT_BLOCKS + PROCEDURE_BLOCKS + ("rubric",)).encode() == \
            _strip(rendered["blind"], CONTEXT_BLOCKS + ("rubric",)).encode(), arm
    # the blind/informed pair differs exactly by the world block
    assert _strip(rendered["informed"], ("world",)) == _strip(rendered["blind"], ("world",))
    assert "Source material:" in elicit.render(build_request(item, "informed", c, form=form))
    assert "Source material:" not in elicit.render(build_request(item, "blind", c, form=form))


def test_restatement_and_its_controls_are_token_matched():
    n = {k: len(PROCEDURES[k].split()) for k in ("restate", "restate-rubric", "restate-blind")}
    assert len(set(n.values())) == 1, n


def test_each_operator_on_a_tiny_world(items):
    c = ctx()
    right, wrong = items[0], items[1]
    assert A.blind(wrong, c) == A.Delivery(question=wrong.question)             # qa: blind sees the question
    assert A.answer_alone(wrong, c) == A.Delivery()
    assert A.informed(wrong, c).evidence == wrong.world and A.informed(wrong, c).world_shown
    s = summary_item()
    assert A.blind(s, c).question is None and A.blind_question(s, c).question is None
    assert A.reference_only(wrong, c).reference == wrong.reference and A.reference_only(wrong, c).evidence is None
    wr = A.world_reference(wrong, c)
    assert (wr.evidence, wr.reference) == (wrong.world, wrong.reference)
    # placebo: same task, another source item, nearest length, seeded and reproducible
    p = A.placebo(wrong, c)
    assert p.evidence != wrong.world and not p.world_shown
    donor = next(o for o in c.pool if o.item_id == p.meta["placebo_from"])
    assert donor.task == "qa" and donor.group != wrong.group
    assert A.placebo(wrong, c) == p
    # dilution: k other worlds plus the true one at the recorded position
    for k in (2, 5, 10):
        d = A.ARMS[f"dilution-{k}"](wrong, c)
        docs = d.evidence.split("\n\n[Document ")
        assert len(docs) == k + 1 == d.meta["n_documents"]
        pos = d.meta["world_position"]
        assert f"[Document {pos}]\n{wrong.world}" in d.evidence
        assert d.evidence.count(wrong.world) == 1
        assert A.ARMS[f"dilution-{k}"](wrong, c) == d
    # routed: the one world sentence nearest the claim (top-1) under the fake encoder
    r = A.routed(wrong, A.ArmContext(pool=c.pool, encoder=fake_encoder, top_k=1))
    assert r.evidence == "The Eiffel Tower was finished in 1889." and r.meta["routed_sentences"] == [1]
    r2 = A.routed(wrong, A.ArmContext(pool=c.pool, encoder=fake_encoder, top_k=2))
    assert len(r2.meta["routed_sentences"]) == 2 and 1 in r2.meta["routed_sentences"]
    # numbered with required citations
    nb = A.numbered(wrong, c)
    assert nb.evidence.splitlines() == ["[1] Paris is the capital of France.",
                                        "[2] The Eiffel Tower was finished in 1889.", "[3] It is 330 metres tall."]
    assert nb.procedure == "cite"
    assert (A.restate(wrong, c).procedure, A.restate_control(wrong, c).procedure,
            A.restate_blind(wrong, c).procedure) == ("restate", "restate-rubric", "restate-blind")
    assert A.restate_blind(wrong, c).evidence is None
    assert A.taxonomy(wrong, c).criterion == \
        "Requirement types (report defects by type): contradiction, entity."
    assert A.strengthened_blind(wrong, c).procedure == "self-contradiction"
    cell = A.ARMS["Q0S1T1"](wrong, c)
    assert (cell.question, cell.evidence, cell.criterion is not None) == (None, wrong.world, True)
    assert A.ARMS["Q1S0T0"](right, c) == A.Delivery(question=right.question)


def test_informed_arm_without_a_world_and_a_span_outside_the_text_are_input_errors(items):
    from judgeaudit.records import Span
    bare = items[0].model_copy(update={"world": None})
    with pytest.raises(InputError, match="q0-right.*no world") as e:
        build_request(bare, "informed", ctx(), form="label")
    assert e.value.field == "world"
    bad = items[1].model_copy(update={"spans": [Span(start=3, end=400)]})
    with pytest.raises(InputError, match="outside the output") as e:
        check_spans(bad)
    assert e.value.field == "spans"
    with pytest.raises(InputError, match="unknown arm"):
        build_request(items[0], "nope", ctx(), form="label")


def _req(form, units=None):
    return JudgeRequest(request_id="r", form=form, text="t", units=units, meta={"template": "world"})


def test_parsers_strict_schema_tolerant_framing():
    lab = _req("label")
    assert parse(lab, '{"defective": true}').label is True
    assert parse(lab, 'Restatement: blah {not json}\n```json\n{"defective": false}\n```\nDone.').label is False
    assert not parse(lab, '{"defective": "yes"}').ok
    assert not parse(lab, "The output is defective.").ok
    assert not parse(lab, "").ok
    sen = _req("sentences", ["a", "b", "c"])
    assert parse(sen, 'ok {"labels": [true, false, false]} trailing').unit_labels == [True, False, False]
    assert not parse(sen, '{"labels": [true, false]}').ok                  # wrong count
    typ = _req("typed", ["x", "y"])
    assert parse(typ, '{"defect_ids": ["y", "x", "y"]}').defect_ids == ["x", "y"]
    assert not parse(typ, '{"defect_ids": ["z"]}').ok
    sc = _req("score")
    assert parse(sc, '{"score": 4}').score == 4.0
    for bad in ('{"score": 6}', '{"score": 3.5}', '{"score": true}'):
        assert not parse(sc, bad).ok
    d = _req("defects")
    r = parse(d, 'Here:\n```\n{"defects": [{"quote": "1901", "reason": "wrong year", "citation": 2}]}\n``` ok')
    assert r.ok and r.defects[0].span == "1901" and r.defects[0].citation == "2" and r.label is True
    assert parse(d, '{"defects": []}').label is False
    assert not parse(d, '{"defects": [{"quote": "x"}]}').ok
    # dispatch through the judges' parse path; a non-world request keeps the old parser
    assert elicit.parse_request(lab, '{"defective": true}').label is True
    assert elicit.parse_request(JudgeRequest(request_id="g", text="t"), "Score: 4").score == 4.0

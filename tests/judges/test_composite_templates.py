"""``vote:`` and ``ensemble:`` judges pass a template to their inner judges: ``?template=`` in the inner spec,
the ``template`` option (``--template``, a YAML entry's ``template:``) to every inner judge that renders
prompts. The inner calls carry the template's prompt and key; the composite reports the template and its scale."""

from __future__ import annotations

import asyncio

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.judges.base import call_key, with_template
from judgeaudit.judges.templates import get_template
from judgeaudit.records import JudgeRequest

MT = get_template("mt-bench-single")
REQUEST = JudgeRequest(request_id="q1", prompt="What did the trial find?", text="It lowered blood pressure.")
MT_USER = MT.render_parts(REQUEST)[1]


@pytest.fixture
def srv(fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return fake_server(responder=lambda prompt: "The answer restates the finding.\n\nRating: [[7]]")


def _inner_keys(judge, request, k=1):
    inner = judge.inner
    return {call_key(inner.spec, MT.render(request), request.epoch * k + i) for i in range(k)}


@pytest.mark.parametrize("how", ["in-spec", "option", "with_template"])
def test_vote_passes_the_template_to_its_inner_judge(srv, how):
    base = "api:openai/judge-model"
    if how == "in-spec":
        j = make_judge(f"vote:3:{base}?template=mt-bench-single", api_base=srv.base_url)
    elif how == "option":
        j = make_judge(f"vote:3:{base}", api_base=srv.base_url, template="mt-bench-single")
    else:   # the commands' --template
        j = with_template(make_judge(f"vote:3:{base}", api_base=srv.base_url), "mt-bench-single")
    v = asyncio.run(j.judge_one(REQUEST))
    assert v.parse_ok and v.score == 7.0 and v.meta["n_usable"] == 3
    assert len(srv.requests) == 3
    assert all(b["messages"] == [{"role": "system", "content": "You are a helpful assistant."},
                                 {"role": "user", "content": MT_USER}] for b in srv.requests)
    assert j.inner.spec.template == MT.ref() and j.spec.template == MT.ref()
    assert j.template is MT and j.scale == MT.scale and j.template_record("graded")["name"] == "mt-bench-single"
    plain = make_judge(f"vote:3:{base}", api_base=srv.base_url)
    assert j.spec.fingerprint() != plain.spec.fingerprint() and j.key(REQUEST) != plain.key(REQUEST)
    # the inner calls are keyed by the template: the key the store keeps for each sample
    assert _inner_keys(j, REQUEST, 3) == {j.inner.key(REQUEST.model_copy(update={"epoch": e})) for e in range(3)}


def test_a_vote_rebuilt_from_its_recipe_is_the_same_instrument(srv):
    j = with_template(make_judge("vote:2:api:openai/judge-model", api_base=srv.base_url), "mt-bench-single")
    spec, options = j.recipe
    again = make_judge(spec, **options)
    assert again.spec.fingerprint() == j.spec.fingerprint() and again.key(REQUEST) == j.key(REQUEST)
    assert again.inner.key(REQUEST) == j.inner.key(REQUEST) == call_key(j.inner.spec, MT.render(REQUEST), 0)


def test_ensemble_passes_the_template_to_every_member_that_renders_prompts(srv):
    j = make_judge("ensemble:api:openai/judge-a,api:openai/judge-b", api_base=srv.base_url,
                   template="mt-bench-single")
    v = asyncio.run(j.judge_one(REQUEST))
    assert v.parse_ok and v.score == 7.0 and len(srv.requests) == 2
    assert {b["model"] for b in srv.requests} == {"judge-a", "judge-b"}
    assert all(b["messages"][-1]["content"] == MT_USER for b in srv.requests)
    assert [m.spec.template for m in j.members] == [MT.ref(), MT.ref()] and j.template is MT
    assert j.scale == MT.scale
    # a member's own ?template=: that member only; the ensemble reports no shared template or scale
    mixed = make_judge("ensemble:api:openai/judge-a?template=mt-bench-single,api:openai/judge-b",
                       api_base=srv.base_url)
    assert [m.spec.template for m in mixed.members] == [MT.ref(), None]
    assert mixed.template is None and mixed.scale is None
    # a reference member takes no template: --template goes to the members that render prompts
    with_ref = with_template(make_judge("ensemble:api:openai/judge-a,reference:constant", api_base=srv.base_url),
                             "mt-bench-single")
    assert [m.spec.template for m in with_ref.members] == [MT.ref(), None]
    assert make_judge(*with_ref.recipe[:1], **with_ref.recipe[1]).spec.fingerprint() == with_ref.spec.fingerprint()


def test_a_composite_of_judges_that_render_no_prompt_takes_no_template():
    with pytest.raises(InputError, match="takes no template"):
        make_judge("vote:3:reference:constant", template="mt-bench-single")
    with pytest.raises(InputError, match="takes no template"):
        make_judge("vote:3:reference:constant?template=mt-bench-single")

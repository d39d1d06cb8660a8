"""Structured outputs on the api backend (the lean HTTP path and the LiteLLM path) against the local
server: the request body carries the verdict form's JSON schema in ``response_format``, a
schema-constrained JSON reply is read, and a reply that breaks the schema is a parse failure with the
reason, counted like any other."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge, structured
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import RetryPolicy, run

FAST = RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05, timeout=300.0)   # litellm loads in the first call
KEY = "sk-test-not-a-secret"

GRADED = JudgeRequest(request_id="g", text="The drug always works.", evidence="It worked in one trial.")
PAIR = JudgeRequest(request_id="p", form="pairwise", prompt="2+2?", response_a="4", response_b="5")
DEFECTS = JudgeRequest(request_id="d", form="defects", text="The drug always works.", evidence="One trial.")

REPLIES = {"graded_verdict": '{"score": 7}',
           "pairwise_verdict": '{"rationale": "B is wrong.", "choice": "A"}',
           "defects_verdict": '{"defects": [{"span": "always", "reason": "one trial", "citation": null}]}'}


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _server(fake_server, replies=REPLIES):
    return fake_server(responder=lambda p: "Score: 3\nVerdict: B",
                       structured_responder=lambda prompt, spec: replies[spec["name"]])


def _walk_objects(schema):
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for v in schema.values():
            yield from _walk_objects(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from _walk_objects(v)


@pytest.mark.parametrize("form", ["graded", "pairwise", "defects"])
def test_schemas_follow_strict_mode(form):
    """Strict mode: every object closes its properties and requires each of them."""
    fmt = structured.response_format(form)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == f"{form}_verdict"
    objects = list(_walk_objects(fmt["json_schema"]["schema"]))
    assert objects
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert "title" not in json.dumps(fmt)


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_schema_constrained_replies_are_read_and_the_body_carries_the_schema(fake_server, transport):
    srv = _server(fake_server)
    judge = make_judge(f"api:openai/fake-judge?structured=json_schema&transport={transport}", api_base=srv.base_url)
    g, p, d = run(judge, [GRADED, PAIR, DEFECTS], progress=False, policy=FAST)
    assert (g.score, g.parse_ok, g.raw) == (7.0, True, '{"score": 7}')
    assert (p.choice, p.rationale, p.parse_ok) == ("A", "B is wrong.", True)
    assert d.parse_ok and [(x.span, x.reason, x.citation) for x in d.defects] == [("always", "one trial", None)]
    sent = {b["response_format"]["json_schema"]["name"]: b["response_format"] for b in srv.requests}
    assert set(sent) == {"graded_verdict", "pairwise_verdict", "defects_verdict"}
    for form in ("graded", "pairwise", "defects"):
        assert sent[f"{form}_verdict"] == structured.response_format(form)
    assert sent["graded_verdict"]["json_schema"]["schema"]["properties"]["score"]["enum"] == list(range(1, 10))
    assert sent["pairwise_verdict"]["json_schema"]["schema"]["properties"]["choice"]["enum"] == ["A", "B", "tie"]


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_a_reply_that_breaks_the_schema_is_a_parse_failure_with_the_reason(fake_server, transport):
    srv = _server(fake_server, {"graded_verdict": '{"score": 12}', "pairwise_verdict": "Verdict: A",
                                "defects_verdict": '{"defects": [{"span": "always"}]}'})
    judge = make_judge(f"api:openai/fake-judge?structured=json_schema&transport={transport}", api_base=srv.base_url)
    srv.fault("schema_break")
    broken, g, p, d = run(judge, [GRADED.model_copy(update={"request_id": "g0", "text": "other"}), GRADED, PAIR,
                                  DEFECTS], progress=False, policy=FAST, concurrency=1)
    for v in (broken, g, p, d):
        assert v.error is None and not v.parse_ok and v.score is None and v.choice is None   # a completed call
    assert broken.raw == '{"verdict": "maybe", "score": 12}'
    assert broken.meta["parse_error"].startswith("the reply breaks the 'score' schema")
    assert g.meta["parse_error"].startswith("the reply breaks the 'score' schema")
    assert p.meta["parse_error"].startswith("the reply is not JSON")
    assert d.meta["parse_error"].startswith("the reply breaks the 'defects.0.reason' schema")


def test_without_the_option_no_schema_is_sent_and_the_keys_differ(fake_server):
    srv = _server(fake_server)
    plain = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    schema = make_judge("api:openai/fake-judge?structured=json_schema", api_base=srv.base_url)
    (v,) = run(plain, [GRADED], progress=False, policy=FAST)
    assert v.score == 3.0 and "response_format" not in srv.requests[0]
    assert plain.key(GRADED) != schema.key(GRADED)
    assert schema.spec.params == {"structured": "json_schema"}
    # a world request keeps its own JSON reply: no schema sent
    world = JudgeRequest(request_id="w", form="label", text="t", meta={"template": "world"})
    assert not structured.applies(world)


def test_unknown_mode_is_one_line():
    with pytest.raises(InputError, match="structured must be one of json_schema, not 'tools'"):
        make_judge("api:openai/fake-judge?structured=tools", api_base="http://127.0.0.1:9/v1")


def test_the_fake_server_refuses_a_malformed_response_format():
    assert FakeServer.response_format_problem({"response_format": {"type": "json_schema"}}) == \
        "response_format.json_schema is required for type json_schema"
    assert FakeServer.response_format_problem(
        {"response_format": {"type": "json_schema", "json_schema": {"name": "bad name!", "schema": {}}}})
    assert FakeServer.response_format_problem({"response_format": structured.response_format("graded")}) is None


def test_a_structured_grade_reads_the_logprobs_at_its_digit(fake_server):
    """The digit inside the JSON reply is where the score's log-probabilities are read."""
    from fakeserver import chat_logprobs

    srv = fake_server(structured_responder=lambda prompt, spec: '{"score": 7}',
                      logprobs=lambda text: chat_logprobs(text, {7: 0.6, 6: 0.4}))
    judge = make_judge("api:openai/fake-judge?structured=json_schema", api_base=srv.base_url)
    (v,) = run(judge, [GRADED], progress=False, policy=FAST)
    assert v.parse_ok and v.score_source == "logprobs"
    assert v.score == pytest.approx(0.6 * 7 + 0.4 * 6)
    assert v.score_dist == pytest.approx([0, 0, 0, 0, 0, 0.4, 0.6, 0, 0])

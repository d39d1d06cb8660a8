"""The lean HTTP transport of api judges gives what the LiteLLM route gives, on the local server.

Same rows (all but latency and timestamp), same requests on the wire, same call keys, and the same
fault handling through the executor and the store: transient faults are retried until exactly one
answer is bought, permanent ones are recorded once; the key reaches the server and nothing else.
"""

from __future__ import annotations

import asyncio

import pytest

from fakeserver import chat_logprobs
from judgeaudit.errors import InputError, TransientError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

KEY = "sk-test-lean-not-a-secret"
TRANSPORTS = ("http", "litellm")
FAST = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05, timeout=2.0)
AT_SCORE = {7: 0.6, 6: 0.3, 8: 0.1}

REQUESTS = [
    JudgeRequest(request_id="g", text="The drug cures every cancer.", evidence="Some tumours shrank in 40 adults."),
    JudgeRequest(request_id="g2", text="The drug cures every cancer.", evidence="Some tumours shrank.", epoch=2),
    JudgeRequest(request_id="refuse", text="refuse this one", evidence="e"),
    JudgeRequest(request_id="p", form="pairwise", prompt="Which is kinder?", response_a="Thanks!", response_b="No."),
]


def _reply(prompt: str) -> str:
    if "refuse this one" in prompt:
        return "I would rather not say."
    if "Thanks!" in prompt:
        return "Response A is kinder.\nVerdict: A"
    return "The claim goes far beyond 40 adults — it says every cancer.\nScore: 7"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _judge(srv, transport, model="openai/gpt-4o-mini", **kw):
    return make_judge(f"api:{model}", api_base=srv.base_url, transport=transport, **kw)


def _row(v):
    return v.model_dump(exclude={"latency_s", "timestamp"})


def test_both_transports_give_the_same_rows_requests_and_keys(fake_server):
    srv = fake_server(responder=_reply, logprobs=lambda text: chat_logprobs(text, AT_SCORE))
    rows, bodies = {}, {}
    for transport in TRANSPORTS:
        judge = _judge(srv, transport)
        assert judge.transport == transport
        before = len(srv.requests)
        rows[transport] = [_row(v) for v in run(judge, REQUESTS, policy=FAST, progress=False)]
        bodies[transport] = sorted(srv.requests[before:], key=str)
    assert srv.auth_headers == [f"Bearer {KEY}"] * 2 * len(REQUESTS)
    assert rows["http"] == rows["litellm"]
    assert bodies["http"] == bodies["litellm"]
    graded, _, refused, pairwise = rows["http"]
    # the values a correct read gives (not merely equal across transports)
    assert graded["score_source"] == "logprobs" and graded["score"] == pytest.approx(6 * 0.3 + 7 * 0.6 + 8 * 0.1)
    assert graded["score_dist"] == pytest.approx([0, 0, 0, 0, 0, 0.3, 0.6, 0.1, 0])
    assert graded["input_tokens"] == 10 and graded["output_tokens"] == 3 and graded["provider"] == "openai"
    assert graded["cost_usd"] == pytest.approx(10 * 0.15e-6 + 3 * 0.6e-6)   # gpt-4o-mini's listed prices
    assert not refused["parse_ok"] and refused["score"] is None and "parse_error" in refused["meta"]
    assert pairwise["parse_ok"] and pairwise["choice"] == "A"
    assert bodies["http"][0]["model"] == "gpt-4o-mini"


def test_an_unlisted_model_has_no_cost_on_either_transport(fake_server):
    srv = fake_server(responder=lambda p: "Score: 3")
    costs = {t: run(_judge(srv, t, model="openai/fake-judge"), REQUESTS[:1], progress=False)[0].cost_usd
             for t in TRANSPORTS}
    assert costs == {"http": None, "litellm": None}


def test_the_transport_enters_no_call_key(fake_server):
    srv = fake_server()
    http, litellm = _judge(srv, "http"), _judge(srv, "litellm")
    assert [http.key(r) for r in REQUESTS] == [litellm.key(r) for r in REQUESTS]
    assert http.spec.fingerprint() == litellm.spec.fingerprint()


def test_which_transport_is_used(fake_server):
    base = "http://127.0.0.1:9/v1"
    assert make_judge("api:openai/m", api_base=base).transport == "http"
    assert make_judge("api:hosted_vllm/m", api_base=base).transport == "http"
    assert make_judge("api:openai/m").transport == "litellm"                        # no server named
    assert make_judge("api:anthropic/claude-x", api_base=base).transport == "litellm"  # not OpenAI's API
    assert make_judge("api:openai/m?transport=litellm", api_base=base).transport == "litellm"
    j = make_judge("api:openai/m?transport=litellm&family=meta", api_base=base)
    assert (j.transport, j.spec.family, j.spec.model) == ("litellm", "meta", "openai/m")
    with pytest.raises(InputError, match="transport"):
        make_judge("api:openai/m", api_base=base, transport="grpc")
    with pytest.raises(InputError, match="api_base"):
        make_judge("api:openai/m", transport="http")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_rate_limit_is_transient_and_carries_retry_after(fake_server, transport):
    srv = fake_server()
    srv.fault("429", retry_after=0.3)
    with pytest.raises(TransientError) as err:
        asyncio.run(_judge(srv, transport).judge_one(REQUESTS[0]))
    assert err.value.retry_after == 0.3


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_late_answer_is_a_transient_timeout_of_the_transport(fake_server, transport):
    srv = fake_server()
    srv.fault("slow", delay=2.0)
    with pytest.raises(TransientError, match="(?i)timeout"):
        asyncio.run(_judge(srv, transport, timeout=0.3).judge_one(REQUESTS[0]))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault", ["429", "500", "slow", "truncated", "malformed"])
def test_each_transient_fault_ends_in_one_bought_answer(fake_server, tmp_path, transport, fault):
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault(fault, times=2, retry_after=0.05, delay=3.0)
    store = CallStore(tmp_path / "s.sqlite")
    [v] = run(_judge(srv, transport, timeout=1.0), REQUESTS[:1], store=store, policy=FAST, progress=False)
    assert v.error is None and v.parse_ok and v.score == 7.0
    assert len(srv.requests) == 3                 # two faults, one success
    assert sum(srv.answered.values()) == 1        # exactly one answer bought
    assert len(store) == 1 and store.completed([v.call_key])[v.call_key].score == 7.0


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("code,name", [(400, "BadRequestError"), (404, "NotFoundError")])
def test_a_permanent_status_is_recorded_once_not_retried(fake_server, tmp_path, transport, code, name):
    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault("status", code=code)
    store = CallStore(tmp_path / "s.sqlite")
    [v] = run(_judge(srv, transport), REQUESTS[:1], store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 1 and sum(srv.answered.values()) == 0
    assert v.error is not None and v.error.startswith(name) and not v.parse_ok
    assert not store.completed([v.call_key])     # a failure: the next run asks again


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_stops_the_run_naming_the_variable_and_stores_nothing(fake_server, tmp_path, transport, code):
    from judgeaudit.errors import AuthError

    srv = fake_server(responder=lambda p: "Score: 7")
    srv.fault("status", code=code, times=100)
    store = CallStore(tmp_path / "s.sqlite")
    with pytest.raises(AuthError) as e:
        run(_judge(srv, transport, max_concurrency=1), REQUESTS, store=store, policy=FAST, progress=False)
    assert len(srv.requests) == 1 and e.value.field == "OPENAI_API_KEY"   # not retried, no further call
    assert len(store) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_key_reaches_the_server_and_never_the_store(fake_server, tmp_path, transport):
    srv = fake_server(responder=_reply)
    srv.fault("status", code=400)
    path = tmp_path / "s.sqlite"
    run(_judge(srv, transport), REQUESTS, store=CallStore(path), policy=FAST, progress=False)
    assert srv.auth_headers == [f"Bearer {KEY}"] * len(REQUESTS)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())   # the database and any journal
    assert KEY.encode() not in stored and len(stored) > 0


def test_one_pooled_client_per_run_closed_when_the_run_ends(fake_server):
    srv = fake_server()
    judge = _judge(srv, "http", max_concurrency=8)
    seen = []

    async def go():
        c1 = await judge._lean()[0].client()
        await judge.judge_one(REQUESTS[0])
        await judge.judge_one(REQUESTS[2])
        seen.append((c1, await judge._lean()[0].client()))

    asyncio.run(go())
    (c1, c2), = seen
    assert c1 is c2 and c1.closed                # the same client for every call; closed by the run's end
    assert judge._lean()[0]._clients == {}
    run(judge, REQUESTS[:2], progress=False)        # a later run makes its own
    assert judge._lean()[0]._clients == {} and len(srv.requests) == 4

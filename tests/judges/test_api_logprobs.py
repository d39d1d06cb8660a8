"""Graded verdicts from chat logprobs are read at the token the parser read as the score.

The local server returns OpenAI chat-format logprobs (one entry per token, ``top_logprobs`` at each,
digits among the alternatives of the first token), as hosted chat models do.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from fakeserver import chat_logprobs
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest

REQ = JudgeRequest(request_id="r", text="The drug cures every cancer.", evidence="Some tumours shrank in 40 adults.")
AT_SCORE = {7: 0.6, 6: 0.3, 8: 0.1}
EXPECTED_DIST = [0, 0, 0, 0, 0, 0.3, 0.6, 0.1, 0]   # over 1..9
EXPECTED_SCORE = 6 * 0.3 + 7 * 0.6 + 8 * 0.1        # 6.8


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


def _ask(fake_server, reply, logprobs):
    srv = fake_server(responder=lambda p: reply, logprobs=logprobs)
    j = make_judge("api:openai/fake-judge", api_base=srv.base_url)
    v = asyncio.run(j.judge_one(REQ))
    assert srv.requests[0]["logprobs"] is True
    return v


@pytest.mark.parametrize("reply", [
    "Score: 7",
    "**Score:** 7",
    "The claim goes far beyond 40 adults — it says every cancer.\nScore: 7",   # a 3-byte character split in two
    "7",
    "7\nIt generalises from one trial to every cancer.",
])
def test_distribution_is_read_at_the_score_token(fake_server, reply):
    v = _ask(fake_server, reply, lambda text: chat_logprobs(text, AT_SCORE))
    assert v.parse_ok and v.score_source == "logprobs"
    assert v.score_dist == pytest.approx(EXPECTED_DIST, abs=1e-9)
    assert v.score == pytest.approx(EXPECTED_SCORE, abs=1e-9)


def test_a_refusal_is_a_parse_failure_even_with_logprobs(fake_server):
    v = _ask(fake_server, "I would rather not say.", lambda text: chat_logprobs(text, AT_SCORE))
    assert not v.parse_ok and v.score is None and v.score_dist is None and v.score_source is None
    assert "parse_error" in v.meta


def test_a_decimal_reply_is_a_parse_failure_even_with_logprobs(fake_server):
    v = _ask(fake_server, "Score: 4.5", lambda text: chat_logprobs(text, {4: 0.5, 5: 0.5}))
    assert not v.parse_ok and v.score is None and v.score_source is None


def test_tokens_that_do_not_spell_the_reply_fall_back_to_the_parsed_score(fake_server):
    # a provider whose tokens do not reproduce the message text: no position can be trusted
    v = _ask(fake_server, "Score: 7", lambda text: chat_logprobs("Rating: 3", {3: 0.9, 4: 0.1}))
    assert v.parse_ok and v.score_source == "parsed" and v.score == 7.0 and v.score_dist is None


def test_a_score_token_that_is_not_the_lone_digit_falls_back_to_the_parsed_score(fake_server):
    # the digit sits inside a longer token (" 7." ): its alternatives are not a distribution over grades
    def merged(text):
        content = chat_logprobs(text.removesuffix("."), AT_SCORE)
        last = content[-1]
        return content[:-1] + [{**last, "token": last["token"] + ".", "bytes": last["bytes"] + [46],
                                "top_logprobs": [{**t, "token": t["token"] + "."} for t in last["top_logprobs"]]}]
    v = _ask(fake_server, "Score: 7.", merged)
    assert v.parse_ok and v.score_source == "parsed" and v.score == 7.0


def test_leading_space_variants_of_a_digit_are_one_grade(fake_server):
    def both_spellings(text):
        content = chat_logprobs(text, {7: 0.5, 6: 0.3})
        content[-1]["top_logprobs"].append({"token": "7", "logprob": math.log(0.2), "bytes": [55]})
        return content
    v = _ask(fake_server, "Score: 7", both_spellings)
    assert v.score_dist == pytest.approx([0, 0, 0, 0, 0, 0.3, 0.7, 0, 0], abs=1e-9)


def test_a_certain_digit_is_a_one_point_distribution(fake_server):
    v = _ask(fake_server, "Score: 3", lambda text: chat_logprobs(text, {3: 1.0}))   # logprob 0.0
    assert v.score_source == "logprobs" and v.score == 3.0
    assert v.score_dist == [0, 0, 1.0, 0, 0, 0, 0, 0, 0] and v.meta["digit_mass"] == 1.0

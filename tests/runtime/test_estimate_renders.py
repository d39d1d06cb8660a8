"""The cost estimate renders a judge's prompts only to count their tokens where prompt tokens cost money: a
model that costs nothing per prompt token (a local server's, priced 0 in LiteLLM's cost map) is not rendered,
and a priced model is rendered once per request, its cost the documented characters/4 formula."""

from __future__ import annotations

import math

import pytest

from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.estimate import CHARS_PER_TOKEN, estimate


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", form="graded", text=f"text number {i}") for i in range(n)]


def _counting(monkeypatch, judge, prompt: str) -> list[str]:
    seen: list[str] = []

    def render(request):
        seen.append(request.request_id)
        return prompt

    monkeypatch.setattr(judge, "render", render)
    return seen


def test_a_model_priced_zero_per_prompt_token_is_not_rendered(monkeypatch):
    judge = make_judge("api:ollama/llama3")
    seen = _counting(monkeypatch, judge, "x" * 400)
    e = estimate(judge, _requests(5), cached={})
    assert seen == [] and e.cost_usd == 0.0 and e.calls == 5


def test_a_priced_model_is_rendered_once_per_request_and_costed(monkeypatch):
    import litellm

    judge = make_judge("api:openai/gpt-4o-mini", max_tokens=10)
    seen = _counting(monkeypatch, judge, "x" * 401)
    e = estimate(judge, _requests(3), cached={})
    info = litellm.get_model_info("openai/gpt-4o-mini")
    tokens_in = 3 * math.ceil(401 / CHARS_PER_TOKEN)
    assert seen == ["r0", "r1", "r2"]
    assert e.cost_usd == pytest.approx(tokens_in * info["input_cost_per_token"] + 30 * info["output_cost_per_token"])

"""``api:<litellm-model>`` — any hosted or self-served model through LiteLLM.

``api:openai/gpt-4o-mini``, ``api:anthropic/claude-...``, ``api:openai/<name>`` with
``api_base=http://127.0.0.1:8000/v1`` for vLLM, Ollama or any OpenAI-compatible server.

Graded verdicts use the returned log-probabilities of the score tokens where the provider
returns them (``score_source='logprobs'``; ``score`` is the expected grade and ``score_dist`` the
renormalised distribution over 1–9), and the parsed score otherwise (``score_source='parsed'``).
Keys are read by LiteLLM from the environment and never pass through judgeaudit's records.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from judgeaudit.families import resolve, split_spec_family
from judgeaudit.judges import elicit
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.errors import InputError, TransientError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map at import
_TRANSPORT_OPTIONS = ("api_base", "timeout", "max_concurrency")
_DIGITS = {str(s): i for i, s in enumerate(elicit.SCALE)}


def _litellm():
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True
    return litellm


def _retry_after(exc: Exception) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None) or {}
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _classify(exc: Exception) -> Exception:
    """Map LiteLLM/OpenAI exceptions to TransientError (retry) or leave them permanent."""
    litellm = _litellm()
    transient = (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
                 litellm.Timeout, litellm.APIConnectionError, litellm.APIError)
    permanent = (litellm.AuthenticationError, litellm.NotFoundError, litellm.BadRequestError,
                 litellm.PermissionDeniedError, litellm.ContextWindowExceededError)
    if isinstance(exc, permanent):
        return exc
    if isinstance(exc, transient) or isinstance(exc, (ValueError, KeyError)):
        return TransientError(f"{type(exc).__name__}: {_short(exc)}", retry_after=_retry_after(exc))
    return exc


def _short(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text[:300]


def _score_distribution(choice: Any) -> list[float] | None:
    """Distribution over 1–9 at the first generated position whose top candidates include a digit."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    for position in content:
        cands = getattr(position, "top_logprobs", None) or []
        probs = [0.0] * len(elicit.SCALE)
        found = False
        for c in cands:
            tok = (getattr(c, "token", "") or "").strip()
            if tok in _DIGITS:
                probs[_DIGITS[tok]] += math.exp(getattr(c, "logprob", -math.inf))
                found = True
        if found:
            total = sum(probs)
            return [p / total for p in probs] if total > 0 else None
        # No digit among this position's candidates: the score comes later in the text.
    return None


class ApiJudge(Judge):
    """A LiteLLM-served chat model."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.max_concurrency = int(spec.options.get("max_concurrency", 32))

    @property
    def provider(self) -> str:
        return self.spec.options.get("api_base") or (self.spec.model or "").split("/")[0]

    def render(self, request: JudgeRequest) -> str:
        return elicit.render(request)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        litellm = _litellm()
        prompt = self.render(request)
        params = dict(self.spec.params)
        params.setdefault("temperature", 0.0)
        params.setdefault("max_tokens", 16 if request.form == "graded" else 1024)
        want_logprobs = request.form == "graded" and params.pop("logprobs", True)
        kwargs: dict[str, Any] = dict(model=self.spec.model, messages=[{"role": "user", "content": prompt}],
                                      num_retries=0, max_retries=0, **params)
        if request.epoch and "seed" not in kwargs:
            kwargs["seed"] = request.epoch
        if want_logprobs:
            kwargs.update(logprobs=True, top_logprobs=20)
        if self.spec.options.get("api_base"):
            kwargs["api_base"] = self.spec.options["api_base"]
        started = time.perf_counter()
        try:
            resp = await litellm.acompletion(**kwargs)
            choice = resp.choices[0]
            text = choice.message.content
        except Exception as e:  # noqa: BLE001 - classified below
            raise _classify(e) from None
        if text is None:
            raise TransientError("response had no message content")
        latency = time.perf_counter() - started
        parsed = elicit.parse(request.form, text)
        fields: dict[str, Any] = dict(raw=text, parse_ok=parsed.ok, choice=parsed.choice,
                                      rationale=parsed.rationale, defects=parsed.defects, latency_s=latency)
        if request.form == "graded":
            dist = _score_distribution(choice) if want_logprobs else None
            if dist is not None:
                fields.update(score=elicit.expected_score(dist), score_dist=dist, score_source="logprobs",
                              parse_ok=True)
            else:
                fields.update(score=parsed.score, score_source="parsed" if parsed.ok else None)
        if not fields["parse_ok"]:
            fields["meta"] = {"parse_error": parsed.error}
        usage = getattr(resp, "usage", None)
        if usage is not None:
            fields.update(input_tokens=getattr(usage, "prompt_tokens", None),
                          output_tokens=getattr(usage, "completion_tokens", None))
        try:
            fields["cost_usd"] = float(litellm.completion_cost(completion_response=resp))
        except Exception:  # noqa: BLE001 - unknown model prices are common
            fields["cost_usd"] = None
        hidden = getattr(resp, "_hidden_params", {}) or {}
        fields["provider"] = hidden.get("custom_llm_provider") or self.provider
        return self._verdict(request, **fields)


@register("api", "any model through LiteLLM: api:<provider/model> (api_base=... for OpenAI-compatible servers)")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if not argument:
        raise InputError("api judge needs a model, e.g. api:openai/gpt-4o-mini", field="judge")
    argument, spec_family = split_spec_family(argument)
    opts = dict(options)
    spec_id = opts.pop("id")
    family = resolve(argument, opts.pop("family", None) or spec_family)
    transport = {k: opts.pop(k) for k in _TRANSPORT_OPTIONS if k in opts}
    return ApiJudge(JudgeSpec(id=spec_id, backend="api", model=argument, family=family, params=opts,
                              template_version=elicit.TEMPLATE_VERSION, options=transport))

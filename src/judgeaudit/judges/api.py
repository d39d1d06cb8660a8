"""``api:<litellm-model>`` — any hosted or self-served model through LiteLLM.

``api:openai/gpt-4o-mini``, ``api:anthropic/claude-...``, ``api:openai/<name>`` with
``api_base=http://127.0.0.1:8000/v1`` for vLLM, Ollama or any OpenAI-compatible server.

An ``api_base`` of an OpenAI-compatible provider (``openai/``, ``hosted_vllm/``, ...) goes through
the lean transport (``openai_http``: one pooled HTTP client, nothing resolved per call); named
providers without one go through LiteLLM. ``transport=http|litellm`` (an option, or
``?transport=`` on the spec) forces either; both give the same verdict and the same call key.

Graded verdicts use the returned log-probabilities at the token the parser read as the score,
where the provider returns them (``score_source='logprobs'``; ``score`` is the expected grade and
``score_dist`` the renormalised distribution over 1–9), and the parsed score otherwise
(``score_source='parsed'``). A reply the parser cannot read is a parse failure whatever its
logprobs.

``?structured=json_schema`` (or the option ``structured="json_schema"``) sends the verdict form's JSON
schema in ``response_format`` for graded, pairwise and defects requests and reads the reply as JSON
against it (``judges.structured``); a reply that breaks the schema is a parse failure with the reason.
The option enters the call key. Keys are read from the environment (by LiteLLM, or by the lean transport from
``<PROVIDER>_API_KEY``, e.g. ``OPENAI_API_KEY``, sent as a Bearer token) and never pass through
judgeaudit's records; ``api_base`` enters call keys and records only as its normalised endpoint (no user-info,
no query string).
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from judgeaudit.families import resolve, split_spec_family
from judgeaudit.judges import elicit, structured
from judgeaudit.judges.base import Judge, JudgeSpec, call_key, normalise_endpoint, register
from judgeaudit.judges.openai_http import OpenAIHttp
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.errors import AuthError, InputError, TransientError
from judgeaudit.specs import pop

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map at import
_TRANSPORT_OPTIONS = ("api_base", "timeout", "max_concurrency", "transport")


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


def _classify(exc: Exception, key_var: str | None = None) -> Exception:
    """Map LiteLLM/OpenAI exceptions to TransientError (retry), AuthError (401/403: stop; ``key_var`` is the
    key's environment variable) or leave them permanent."""
    litellm = _litellm()
    transient = (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
                 litellm.Timeout, litellm.APIConnectionError, litellm.APIError)
    permanent = (litellm.AuthenticationError, litellm.NotFoundError, litellm.BadRequestError,
                 litellm.PermissionDeniedError, litellm.ContextWindowExceededError)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or \
            getattr(exc, "status_code", None) in (401, 403):
        var = key_var or "the provider's API key variable"
        return AuthError(f"{type(exc).__name__}: {_short(exc)} (check the key in {var})", field=var)
    if isinstance(exc, permanent):
        return exc
    if isinstance(exc, transient) or isinstance(exc, (ValueError, KeyError)):
        return TransientError(f"{type(exc).__name__}: {_short(exc)}", retry_after=_retry_after(exc))
    return exc


_USERINFO_RE = re.compile(r"(?<=//)[^/\s@]*@")
_QUERY_RE = re.compile(r"(?<=://)([^\s?#]*)[?#][^\s'\"]*")


def _redact(text: str) -> str:
    """``text`` without URL user-info or query strings (where credentials travel)."""
    return _QUERY_RE.sub(r"\1", _USERINFO_RE.sub("", text))


def _short(exc: Exception) -> str:
    text = _redact(str(exc)).replace("\n", " ")
    return text[:300]


def reply_field(obj: Any, name: str) -> Any:
    """The field ``name`` of a provider's reply object, whether it came as a mapping (the HTTP transport) or as
    an object (LiteLLM's); None when it has none."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def token_bytes(entry: Any) -> bytes | None:
    """The bytes of one token of a reply's logprobs (``logprobs.content[i]`` or one of its ``top_logprobs``):
    its ``bytes`` where the provider gives them, else its ``token`` text encoded as UTF-8; None with neither."""
    raw = reply_field(entry, "bytes")
    if raw is not None:
        return bytes(raw)
    token = reply_field(entry, "token")
    return token.encode() if isinstance(token, str) else None


def _score_distribution(choice: Any, text: str, at: int,
                        values: tuple[int, ...] = elicit.SCALE) -> tuple[list[float], float] | None:
    """Distribution over the scale ``values`` at the token holding ``text[at]`` (the first digit of
    the grade the parser read), and the probability mass the top alternatives there put on the
    grades.

    None when the provider returned no logprobs, when its tokens do not spell the reply up to that
    token, or when that token is more than the grade (its alternatives are then not grades).
    """
    content = reply_field(reply_field(choice, "logprobs"), "content")
    if not content:
        return None
    reply = text.encode()
    target = len(text[:at].encode())
    number = re.match(r"\d+", text[at:])
    grade = number.group() if number else text[at]
    start = 0
    for entry in content:
        raw = token_bytes(entry)
        if raw is None or reply[start : start + len(raw)] != raw:
            return None
        end = start + len(raw)
        if start <= target < end:
            if raw.decode(errors="replace").strip() != grade:
                return None
            return _digit_distribution(entry, values)
        start = end
    return None


def _digit_distribution(entry: Any, values: tuple[int, ...] = elicit.SCALE) -> tuple[list[float], float] | None:
    """Renormalised probabilities of the grades among one position's alternatives (spellings with
    and without a leading space are one grade); the chosen token counts when it is not listed."""
    index = {str(v): i for i, v in enumerate(values)}
    cands = list(reply_field(entry, "top_logprobs") or [])
    if not any(token_bytes(c) == token_bytes(entry) for c in cands):
        cands.append(entry)
    probs = [0.0] * len(values)
    for c in cands:
        raw = token_bytes(c)
        spelled = raw.decode(errors="replace").strip() if raw is not None else ""
        logprob = reply_field(c, "logprob")
        if spelled in index and logprob is not None:
            probs[index[spelled]] += math.exp(logprob)
    total = sum(probs)
    return ([p / total for p in probs], total) if total > 0 else None


def _without_credentials(exc: Exception) -> Exception:
    """``exc`` with user-info and query strings cut from its message (it is stored as the error)."""
    if isinstance(exc, (TransientError, AuthError)):   # their messages are made from redacted text
        return exc
    clean = _redact(str(exc))
    if clean == str(exc):
        return exc
    return type(type(exc).__name__, (Exception,), {})(clean)


@dataclass(frozen=True)
class _Reply:
    """What either transport hands back: the first choice, its text, token counts, cost and provider."""

    choice: Any
    text: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    provider: str


class ApiJudge(Judge):
    """A chat model served through LiteLLM, or through the lean HTTP transport (``openai_http``)."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.max_concurrency = int(spec.options.get("max_concurrency", 32))
        _check_transport(spec)
        self._http: OpenAIHttp | None = None
        self._wire: tuple[str, str, tuple[float, float] | None] | None = None

    @cached_property
    def transport(self) -> str:
        """``http`` (the lean path) or ``litellm``."""
        return _transport(self.spec)

    @property
    def provider(self) -> str:
        return self.spec.endpoint or (self.spec.model or "").split("/")[0]

    @cached_property
    def key_variable(self) -> str | None:
        """The environment variable holding this judge's key (LiteLLM's name for the provider's key)."""
        try:
            env = _litellm().validate_environment(model=self.spec.model)
            return (env.get("missing_keys") or [None])[0] or \
                f"{_litellm().get_llm_provider(self.spec.model)[1].upper()}_API_KEY"
        except Exception:  # noqa: BLE001 - LiteLLM cannot place the model: its calls say so
            return None

    @cached_property
    def missing_key(self) -> str | None:
        """The variable to set when the judge calls a named provider's own server and no key for it is in
        the environment (None: a key is set, or an ``api_base`` names a server that may need none)."""
        if self.spec.options.get("api_base") or self.spec.endpoint:
            return None
        try:
            env = _litellm().validate_environment(model=self.spec.model)
        except Exception:  # noqa: BLE001 - LiteLLM cannot place the model: its calls say so
            return None
        missing = env.get("missing_keys") or []
        return missing[0] if missing and not env.get("keys_in_environment") else None

    takes_template = True

    def render(self, request: JudgeRequest) -> str:
        return self.template.render(request) if self.template is not None else elicit.render(request)

    def _body(self, request: JudgeRequest) -> tuple[str, dict[str, Any], bool]:
        """The rendered prompt, the chat-completion body sent for ``request`` (no model name) and whether it
        asks for log-probabilities."""
        template = self.template
        prompt = self.render(request)
        params = dict(self.spec.params)
        params.setdefault("temperature", 0.0)
        params.setdefault("max_tokens", 16 if request.form == "graded" and template is None else 1024)
        weighted = template is None or template.score == "probability_weighted"
        want_logprobs = request.form == "graded" and params.pop("logprobs", weighted) and weighted
        schema_mode = params.pop("structured", None) if self._structured(request) else None
        params.pop("structured", None)
        messages = template.messages(request) if template is not None else [{"role": "user", "content": prompt}]
        body: dict[str, Any] = dict(messages=messages, **params)
        if schema_mode is not None:
            body["response_format"] = structured.response_format(request.form)
        if request.epoch and "seed" not in body:
            body["seed"] = request.epoch
        if want_logprobs:
            body.update(logprobs=True, top_logprobs=20)
        return prompt, body, bool(want_logprobs)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        if self.missing_key is not None:
            raise AuthError(f"{self.id}: no API key in the environment for {self.spec.model}; set "
                            f"{self.missing_key}", field=self.missing_key)
        prompt, body, want_logprobs = self._body(request)
        started = time.perf_counter()
        reply = await self.reply(body)
        if reply.text is None:
            raise TransientError("response had no message content")
        return self._verdict_from(request, prompt, want_logprobs, reply, time.perf_counter() - started)

    def _structured(self, request: JudgeRequest) -> bool:
        """Whether ``request`` is sent with judgeaudit's verdict schema (a template brings its own parser)."""
        return self.template is None and self.spec.params.get("structured") is not None \
            and structured.applies(request)

    def _verdict_from(self, request: JudgeRequest, prompt: str, want_logprobs: bool, reply: _Reply,
                      latency: float | None, extra: dict[str, Any] | None = None) -> Verdict:
        """The verdict a reply to ``request`` gives (the one path of online and batch answers)."""
        text, choice = reply.text or "", reply.choice
        template = self.template
        if template is not None:
            parsed = template.parse(request, text)
        elif self._structured(request):
            parsed = structured.parse(request, text)
        else:
            parsed = elicit.parse_request(request, text)
        fields: dict[str, Any] = dict(raw=text, parse_ok=parsed.ok, choice=parsed.choice,
                                      rationale=parsed.rationale, defects=parsed.defects, latency_s=latency)
        fields.update(elicit.world_fields(request, parsed))
        meta: dict[str, Any] = {}
        if request.form == "graded":
            values = template.scale.values if template is not None and template.scale is not None else elicit.SCALE
            read = _score_distribution(choice, text, parsed.score_at, values) \
                if want_logprobs and parsed.ok and parsed.score_at is not None else None
            if read is not None:
                dist, mass = read
                fields.update(score=float(sum(p * v for p, v in zip(dist, values, strict=True))), score_dist=dist,
                              score_source="logprobs")
                meta["digit_mass"] = mass
            else:
                fields.update(score=parsed.score, score_source="parsed" if parsed.ok else None)
        if parsed.strength is not None:
            meta["strength"] = parsed.strength
        if not fields["parse_ok"]:
            meta["parse_error"] = parsed.error
        if extra:
            meta.update(extra)
        if meta:
            fields["meta"] = meta
        fields.update(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                      cost_usd=reply.cost_usd, provider=reply.provider)
        return self.make_verdict(request, call_key=call_key(self.spec, prompt, request.epoch), **fields)

    # --- provider batch files (``judgeaudit.interop.batch``) -------------------------------------------------

    @property
    def model_provider(self) -> str | None:
        """LiteLLM's provider of this judge's model (``openai``, ``anthropic``, …; None when it cannot tell)."""
        try:
            return _litellm().get_llm_provider(self.spec.model)[1]
        except Exception:  # noqa: BLE001 - LiteLLM cannot place the model
            return None

    def batch_call(self, request: JudgeRequest) -> dict[str, Any]:
        """What a provider's batch file needs to send ``request`` as this judge would online: the
        OpenAI chat-completion ``body`` (with the model name the provider is sent), whether it asks for
        log-probabilities, and the provider of the model."""
        prompt, body, want_logprobs = self._body(request)
        try:
            wire, provider, _, _ = _litellm().get_llm_provider(self.spec.model)
        except Exception as e:  # noqa: BLE001
            raise InputError(f"{self.id}: cannot place model {self.spec.model!r} with a provider ({e})",
                             field="judge") from None
        return {"body": {"model": wire, **body}, "want_logprobs": want_logprobs, "provider": provider}

    def batch_verdict(self, request: JudgeRequest, *, want_logprobs: bool, text: str | None, choice: Any,
                      input_tokens: int | None, output_tokens: int | None, provider: str,
                      meta: dict[str, Any] | None = None) -> Verdict:
        """The verdict of a provider's batch answer to ``request`` (same parser, same key as online). Its cost
        is LiteLLM's batch price of the model where it lists one (else None: not known)."""
        cost = None
        prices = _prices(self.spec.model, (self.spec.model or "").split("/", 1)[-1], batch=True)
        if prices is not None and input_tokens is not None and output_tokens is not None:
            cost = input_tokens * prices[0] + output_tokens * prices[1]
        reply = _Reply(choice, text, input_tokens, output_tokens, cost, provider)
        return self._verdict_from(request, self.render(request), want_logprobs, reply, None, meta)

    async def reply(self, body: dict[str, Any]) -> _Reply:
        """The provider's reply to one chat-completions ``body`` (the request's messages and sampling options),
        through this judge's transport (``transport``: the lean HTTP client or LiteLLM); no retries here."""
        return await (self._http_reply(body) if self.transport == "http" else self._litellm_reply(body))

    async def _litellm_reply(self, body: dict[str, Any]) -> _Reply:
        litellm = _litellm()
        kwargs = dict(model=self.spec.model, num_retries=0, max_retries=0, **body)
        if self.spec.options.get("api_base"):
            kwargs["api_base"] = self.spec.options["api_base"]
        if self.spec.options.get("timeout") is not None:
            kwargs["timeout"] = _seconds(self.spec.options["timeout"])
        try:
            resp = await litellm.acompletion(**kwargs)
            choice = resp.choices[0]
            text = choice.message.content
        except Exception as e:  # noqa: BLE001 - classified below
            raise _without_credentials(_classify(e, self.key_variable)) from None
        usage = getattr(resp, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=resp))
        except Exception:  # noqa: BLE001 - unknown model prices are common
            cost = None
        hidden = getattr(resp, "_hidden_params", {}) or {}
        return _Reply(choice, text, getattr(usage, "prompt_tokens", None) if usage is not None else None,
                      getattr(usage, "completion_tokens", None) if usage is not None else None, cost,
                      hidden.get("custom_llm_provider") or self.provider)

    def _lean(self) -> tuple[OpenAIHttp, str, str, tuple[float, float] | None]:
        """The pooled client, the model name the server is sent, the provider and the per-token
        prices, resolved once per judge (LiteLLM's resolution and price table, as its route uses)."""
        if self._http is None:
            wire, provider, key, _ = _litellm().get_llm_provider(self.spec.model)
            self._wire = (wire, provider, _prices(self.spec.model, wire))
            self._http = OpenAIHttp(self.spec.options["api_base"], endpoint=self.spec.endpoint or "",
                                    key_env=(f"{provider.upper()}_API_KEY",), default_key=key,
                                    limit=self.max_concurrency, timeout=_seconds(self.spec.options.get("timeout")))
            del key
        assert self._wire is not None
        return (self._http, *self._wire)

    async def _http_reply(self, body: dict[str, Any]) -> _Reply:
        http, wire, provider, prices = self._lean()
        answer = await http.complete({"model": wire, **body})
        choice = answer["choices"][0]
        usage = answer.get("usage") or {}
        pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
        cost = pt * prices[0] + ct * prices[1] if prices is not None and pt is not None and ct is not None else None
        return _Reply(choice, choice["message"]["content"], pt, ct, cost, provider)

    async def aclose(self) -> None:
        """Close the lean transport's client in this event loop (runs close it themselves)."""
        if self._http is not None:
            await self._http.aclose()


def _seconds(value: Any) -> float | None:
    return float(value) if value is not None else None


def _prices(*names: str, batch: bool = False) -> tuple[float, float] | None:
    """LiteLLM's (input, output) price per token of the first of ``names`` it lists (``batch``: its price
    for the provider's batch API, ``input_cost_per_token_batches``)."""
    table = _litellm().model_cost
    suffix = "_batches" if batch else ""
    for name in names:
        entry = table.get(name) or {}
        cin, cout = entry.get(f"input_cost_per_token{suffix}"), entry.get(f"output_cost_per_token{suffix}")
        if cin is not None and cout is not None:
            return float(cin), float(cout)
    return None


_LEAN_PROVIDERS = ("openai", "hosted_vllm", "openai_like", "custom_openai", "lm_studio", "llamafile")
"""LiteLLM providers that speak OpenAI chat completions at ``<api_base>/chat/completions``."""


def _check_transport(spec: JudgeSpec) -> None:
    forced = spec.options.get("transport")
    if forced is not None and forced not in ("http", "litellm"):
        raise InputError(f"transport must be 'http' or 'litellm', not {forced!r}", field="transport")
    if forced == "http" and not spec.options.get("api_base"):
        raise InputError("transport=http needs an api_base (an OpenAI-compatible server)", field="transport")


def _transport(spec: JudgeSpec) -> str:
    """``http`` (the lean path) or ``litellm``: as forced by the ``transport`` option, else ``http``
    for an ``api_base`` of an OpenAI-compatible provider and ``litellm`` for everything else."""
    if spec.options.get("transport") is not None:
        return spec.options["transport"]
    if not spec.options.get("api_base"):
        return "litellm"
    try:
        provider = _litellm().get_llm_provider(spec.model)[1]
    except Exception:  # noqa: BLE001 - LiteLLM cannot place the model: let its route report that
        return "litellm"
    return "http" if provider in _LEAN_PROVIDERS else "litellm"


def _split_transport(argument: str, option: str = "transport") -> tuple[str, str | None]:
    """Split a ``?transport=http|litellm`` option (or another ``option``) off a spec's argument, keeping
    the others."""
    return pop(argument, option, field="judge")


def _env_base(model: str) -> tuple[str, str] | None:
    """``(variable, value)`` of the base URL LiteLLM takes from the environment for this model's
    provider (``<PROVIDER>_BASE_URL``, else ``<PROVIDER>_API_BASE``), when one is set."""
    if not any(k.endswith(("_BASE_URL", "_API_BASE")) and v for k, v in os.environ.items()):
        return None
    try:
        provider = _litellm().get_llm_provider(model)[1]
    except Exception:  # noqa: BLE001 - LiteLLM cannot place the model: its calls will fail anyway
        return None
    for name in (f"{provider.upper()}_BASE_URL", f"{provider.upper()}_API_BASE"):
        if os.environ.get(name):
            return name, os.environ[name]
    return None


def _endpoint(model: str, api_base: str | None) -> str | None:
    """The normalised endpoint of an api judge: its ``api_base``, else the provider's base URL from
    the environment, else None (the provider's default server; keys as before endpoints existed)."""
    if api_base:
        return normalise_endpoint(api_base)
    found = _env_base(model)
    return normalise_endpoint(found[1], field=found[0]) if found else None


@register("api", "any model through LiteLLM: api:<provider/model> (api_base=... for OpenAI-compatible servers)")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if not argument:
        raise InputError("api judge needs a model, e.g. api:openai/gpt-4o-mini", field="judge")
    argument, forced = _split_transport(argument)
    argument, schema_mode = _split_transport(argument, "structured")
    argument, spec_family = split_spec_family(argument)
    opts = dict(options)
    if forced is not None:
        opts.setdefault("transport", forced)
    if schema_mode is not None:
        opts.setdefault("structured", schema_mode)
    structured.check_mode(opts.get("structured"))
    spec_id = opts.pop("id")
    family = resolve(argument, opts.pop("family", None) or spec_family)
    transport = {k: opts.pop(k) for k in _TRANSPORT_OPTIONS if k in opts}
    endpoint = _endpoint(argument, transport.get("api_base"))
    return ApiJudge(JudgeSpec(id=spec_id, backend="api", model=argument, family=family, params=opts,
                              template_version=elicit.TEMPLATE_VERSION, endpoint=endpoint, options=transport))

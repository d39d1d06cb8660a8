"""The judge protocol, its spec, and the registry of backends.

A judge is an instrument: ``await judge.judge_one(request) -> Verdict``. Backends register
a factory under a name (``api``, ``local``, ``replay``, ``reference``, ``hf``, ``vote``,
``ensemble``); ``make_judge("api:openai/gpt-4o-mini")`` parses a spec string and builds one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from judgeaudit.errors import InputError
from judgeaudit.specs import pop
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.registry import Registry


class JudgeSpec(BaseModel):
    """Everything that identifies an instrument. Its hash is part of every call key.

    Attributes:
        id: the judge id reports use (defaults to the spec string).
        backend: registered backend name.
        model: backend-specific model name (a LiteLLM model string, a file path, ...).
        family: model family, checked by the disjointness rules (generator/verifier/judge).
        params: sampling parameters (temperature, max_tokens, ...).
        template_version: version of the elicitation templates the judge renders.
        endpoint: the server the requests are sent to (``normalise_endpoint``: never a credential),
            when one is named. It is part of the fingerprint, so another server is another
            instrument; a spec with no endpoint hashes as it always did.
        options: backend options that change no verdict (the raw api_base, timeouts) are *not*
            hashed.
        template: the user's judge template (``{name, version, sha256}``, ``judges.templates``) the
            judge renders instead of the built-in ones, when one is named. It is part of the
            fingerprint; a spec with none hashes as it always did.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    backend: str
    model: str | None = None
    family: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    template_version: str | None = None
    endpoint: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    template: dict[str, Any] | None = None

    def fingerprint(self) -> str:
        """Stable hash of what changes a verdict (never of secrets or transport options)."""
        payload = {
            "backend": self.backend,
            "model": self.model,
            "params": self.params,
            "template_version": self.template_version,
        }
        if self.endpoint is not None:
            payload["endpoint"] = self.endpoint
        if self.template is not None:
            payload["template"] = self.template
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_endpoint(url: str, *, field: str = "api_base") -> str:
    """A server address as it enters call keys and the store: ``scheme://host[:port]/path``.

    Scheme and host are lower-cased, a default port (80, 443) is dropped, the path keeps its case
    and loses trailing slashes. User-info, query string and fragment (where keys and tokens travel)
    are never kept. Raises ``InputError`` (naming ``field``) for anything but an http(s) URL with a
    host; the message never repeats the URL, which may hold a credential.
    """
    bad = InputError(f"{field} must be an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1", field=field)
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise bad from None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in _DEFAULT_PORTS or not host:
        raise bad
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def call_key(spec: JudgeSpec, rendered: str, epoch: int) -> str:
    """The call store key: hash of judge spec (its endpoint included), rendered request, sampling
    params and epoch."""
    h = hashlib.sha256()
    h.update(spec.fingerprint().encode())
    h.update(b"\x00")
    h.update(rendered.encode())
    h.update(b"\x00")
    h.update(json.dumps(spec.params, sort_keys=True, default=str).encode())
    h.update(b"\x00")
    h.update(str(epoch).encode())
    return h.hexdigest()


class Judge:
    """Base class of every backend.

    Subclasses implement ``render`` (the exact text sent; it enters the call key) and
    ``judge_one``. ``judge`` runs a batch; the executor adds concurrency, retries and the
    call store around ``judge_one``.
    """

    spec: JudgeSpec
    #: how many calls may run at once for this backend (the executor's per-provider bound).
    max_concurrency: int = 8
    #: whether results may be cached in the call store (reference judges are free to recompute).
    cacheable: bool = True
    #: ``(spec, options)`` that ``make_judge`` built this judge from (None: built otherwise), so a
    #: worker in another process can rebuild it (``runtime.raybackend``).
    recipe: tuple[str, dict[str, Any]] | None = None
    #: whether the backend renders prompts, so that a user's template can replace the built-in ones
    takes_template: bool = False
    #: the user's template (``judges.templates.JudgeTemplate``), None: the built-in templates
    template: Any = None

    def __init__(self, spec: JudgeSpec):
        self.spec = spec

    def use_template(self, template: Any) -> None:
        """Render and read every request with ``template``; its ``{name, version, sha256}`` enters the
        spec's fingerprint, hence every call key."""
        if not self.takes_template:
            raise InputError(f"judge {self.spec.id}: the {self.spec.backend} backend takes no template (the "
                             "api and local backends do)", field="template")
        if self.spec.params.get("structured") is not None:
            raise InputError(f"judge {self.spec.id}: ?structured= sends judgeaudit's own verdict schema; a template "
                             "brings its own reply format and parser (use one or the other)", field="template")
        self.template = template
        self.spec = self.spec.model_copy(update={"template": template.ref()})

    def template_record(self, form: str) -> dict[str, Any] | None:
        """What a result records of the template this judge used for ``form`` requests: the user's
        template's provenance, the built-in default's for a prompting backend, None otherwise."""
        from judgeaudit.judges.templates import default_for

        if self.template is not None:
            return self.template.provenance()
        if self.takes_template and (t := default_for(form)) is not None:
            return {**t.provenance(), "default": True}
        return None

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def scale(self) -> Any:
        """The scale this judge's grades are on (``judges.scale.Scale``): its template's, or the one its
        spec declares (a replay file's, a python judge's); None for judgeaudit's own 1–9."""
        return self.template.scale if self.template is not None else None

    @property
    def provider(self) -> str:
        """The rate-limit bucket this judge's calls share."""
        return self.spec.backend

    def render(self, request: JudgeRequest) -> str:
        raise NotImplementedError

    def can_answer(self, request: JudgeRequest) -> bool:
        """Whether asking is meaningful (a replay file cannot be re-asked for an epoch it lacks)."""
        return True

    def answers(self, form: str) -> bool:
        """Whether this judge has the verdict form ``form`` at all (a model: every form; a fixed
        instrument: the forms it defines)."""
        return True

    def key(self, request: JudgeRequest) -> str:
        return call_key(self.spec, self.render(request), request.epoch)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        raise NotImplementedError

    async def judge(self, requests: list[JudgeRequest]) -> list[Verdict]:
        """Judge a batch with no store (use ``runtime.executor.run`` for stored runs)."""
        return list(await asyncio.gather(*(self.judge_one(r) for r in requests)))

    def close(self) -> None:  # pragma: no cover - backends with resources override
        pass

    def make_verdict(self, request: JudgeRequest, *, call_key: str | None = None, **fields: Any) -> Verdict:
        """A Verdict pre-filled with this judge's identity and the request's key (``call_key``, when
        the caller has already computed it, saves rendering and hashing the request again). A judge
        with an endpoint records it in ``meta['endpoint']``."""
        base = dict(
            call_key=call_key or self.key(request),
            request_id=request.request_id,
            judge_id=self.spec.id,
            model=self.spec.model,
            family=self.spec.family,
            form=request.form,
            epoch=request.epoch,
        )
        base.update(fields)
        if self.spec.endpoint is not None:
            base["meta"] = {"endpoint": self.spec.endpoint, **(base.get("meta") or {})}
        return Verdict(**base)


JudgeFactory = Callable[[str, dict[str, Any]], Judge]


@dataclass(frozen=True)
class Backend:
    """One registered judge backend: ``factory(argument, options) -> Judge``, its one-line help, and whether
    it is ``composite`` (built from other judges' specs: a template is their inner judges', so ``make_judge``
    leaves it to the factory)."""

    factory: JudgeFactory
    help: str
    composite: bool = False


PLUGIN_GROUP = "judgeaudit.judges"
"""The entry-point group of judge backends registered from above this layer or from other packages."""

BACKENDS: Registry[Backend] = Registry("judge backend", PLUGIN_GROUP,
                                       error=lambda msg: InputError(msg, field="judge"))
"""The judge backends by name (``judgeaudit.registry``): each backend module registers its own when imported;
judgeaudit's own are declared by the top package, another package's are its entry points of ``PLUGIN_GROUP``."""


def register(backend: str, help: str, *, composite: bool = False) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a backend factory: ``factory(argument, options) -> Judge``.

    ``argument`` is the part of the spec string after ``backend:`` ("" when absent). A ``composite``
    backend's argument holds other judges' specs; its factory receives the ``template`` option and passes
    it (and each inner spec's own ``?template=``) to the judges it builds. A name is taken once
    (``Registry.register``).
    """

    def deco(factory: JudgeFactory) -> JudgeFactory:
        BACKENDS.register(backend, Backend(factory, help, composite))
        return factory

    return deco


def registered() -> dict[str, str]:
    """Backend name -> one-line help, for ``judgeaudit judges list``."""
    return {k: v.help for k, v in BACKENDS.items().items()}


def make_judge(spec: str, **options: Any) -> Judge:
    """Build a judge from a spec string such as ``api:openai/gpt-4o-mini``, ``local``,
    ``replay:verdicts.jsonl``, ``reference:constant``, ``vote:3:local``.

    Options (``api_base``, ``family``, ``id``, sampling params, ...) are passed to the backend (a command passes
    its ``--api-base``, ``runtime.context.RunContext.api_base``, to every model it builds).
    Raises ``InputError`` for an unknown backend.
    """
    backend, _, argument = spec.partition(":")
    if backend not in BACKENDS:
        known = ", ".join(BACKENDS.names())
        raise InputError(f"unknown judge spec {spec!r}: backend {backend!r} is not one of: {known}",
                         field="judge")
    entry = BACKENDS.get(backend)
    factory = entry.factory
    options = {k: v for k, v in options.items() if v is not None}
    options.setdefault("id", spec)
    recipe = dict(options)
    if entry.composite:
        judge = factory(argument, options)
        judge.recipe = (spec, recipe)
        return judge
    argument, in_spec = _split_template(argument)
    named = options.pop("template", None) or in_spec
    judge = factory(argument, options)
    if named is not None:
        from judgeaudit.judges.templates import get_template

        template = get_template(named)
        if template.default_for is None:   # a built-in default renders what the judge renders anyway
            judge.use_template(template)
    judge.recipe = (spec, recipe)
    return judge


def with_template(judge: Judge, name: str) -> Judge:
    """``judge`` rendering and reading with the template ``name`` (a file or a built-in name), its recipe
    carrying it, so that a worker that rebuilds the judge renders the same prompts."""
    from judgeaudit.judges.templates import get_template

    template = get_template(name)
    if template.default_for is None:
        judge.use_template(template)
    if judge.recipe is not None:
        judge.recipe = (judge.recipe[0], {**judge.recipe[1], "template": name})
    return judge


def _split_template(argument: str) -> tuple[str, str | None]:
    """Split a ``?template=FILE_OR_NAME`` option off a spec's argument, keeping any other options."""
    return pop(argument, "template", field="judge")

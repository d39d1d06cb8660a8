"""Provider batch files: OpenAI's Batch API and Anthropic's Message Batches.

Writing (``BatchWriter``, the sink of ``runtime.batch``; in Python, ``write_batch``): every call of an ``api:`` judge that is not yet in the
call store becomes one request of the provider's batch file, with the call's key as its ``custom_id``:

* OpenAI (JSONL, one request a line): ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
  "body": {...}}``; the body is the chat-completion body the judge sends online (same prompt, sampling
  parameters, seed and log-probability request). OpenAI takes one model per file and at most
  ``OPENAI_MAX_REQUESTS`` requests / ``OPENAI_MAX_BYTES`` bytes: larger sets are split into numbered files.
* Anthropic (one JSON body to POST to ``/v1/messages/batches``): ``{"requests": [{"custom_id", "params":
  {...}}]}``, ``params`` being the Messages API parameters (``model``, ``max_tokens``, ``system``,
  ``messages``, ``temperature``, ``top_p``, ``top_k``, ``stop_sequences``): the Messages API takes a system
  prompt as the top-level ``system`` field, its ``messages`` holding only user and assistant turns. Anthropic has no seed and no log-probabilities:
  those are left out, as they are when the judge calls Anthropic online. At most
  ``ANTHROPIC_MAX_REQUESTS`` requests a batch.

A call key is 64 hexadecimal characters, which is a valid ``custom_id`` for both providers (Anthropic's ids
are at most 64 characters of ``[A-Za-z0-9_-]``), so the id *is* the key: no mapping is needed to read the
answers back. What reading an answer needs besides the id — the judge's spec and the request — is recorded
in the call store (``CallStore.defer``) as the file is written.

Reading (``ingest``): a provider's results file (OpenAI's output or error file: ``{"id", "custom_id",
"response": {"status_code", "request_id", "body"}, "error"}`` a line; Anthropic's results JSONL:
``{"custom_id", "result": {"type": "succeeded" | "errored" | "canceled" | "expired", "message" | "error"}}``
a line). Each succeeded answer is parsed exactly as an online reply (``ApiJudge.batch_verdict``) and stored
under its call key, so the next run of the same command finds it there. Errored, canceled and expired
entries, error statuses and answers without text are not stored: the calls stay missing, and the next run
calls them (or writes them to a new batch file). A partial file stores what it has. The whole file is
checked before anything is stored: a bad line is one error naming the file, the line and the field.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.io import read_text
from judgeaudit.judges.api import ApiJudge
from judgeaudit.judges.base import Judge, JudgeSpec
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.validate import output_file

PROVIDERS = ("openai", "anthropic")
OPENAI_URL = "/v1/chat/completions"
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
_ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Messages API parameters a chat body's entries map to; ``seed``/``logprobs``/``top_logprobs`` have none
_ANTHROPIC_PARAMS = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "max_tokens": "max_tokens",
                     "stop": "stop_sequences", "stop_sequences": "stop_sequences", "metadata": "metadata"}
_ANTHROPIC_DROPPED = ("seed", "logprobs", "top_logprobs")
#: LiteLLM providers whose servers speak OpenAI chat completions (an OpenAI batch file fits them)
_OPENAI_LIKE = ("openai", "hosted_vllm", "openai_like", "custom_openai", "lm_studio", "llamafile", "azure")


def custom_id(call_key: str, provider: str) -> str:
    """The ``custom_id`` of a call: its key (valid for both providers; checked for Anthropic's pattern)."""
    if provider == "anthropic" and not _ANTHROPIC_ID.match(call_key):
        raise InputError(f"call key {call_key!r} is not a valid Anthropic custom_id", field="custom_id")
    return call_key


def anthropic_params(body: dict[str, Any]) -> dict[str, Any]:
    """The Messages API parameters of an OpenAI chat-completion body (see the module docstring): its system
    messages become the top-level ``system`` field."""
    system = [m["content"] for m in body["messages"] if m.get("role") == "system"]
    params: dict[str, Any] = {"model": body["model"]}
    if system:
        params["system"] = "\n\n".join(system)
    params["messages"] = [m for m in body["messages"] if m.get("role") != "system"]
    for k, v in body.items():
        if k in ("model", "messages") or k in _ANTHROPIC_DROPPED:
            continue
        if k not in _ANTHROPIC_PARAMS:
            raise InputError(f"sampling parameter {k!r} has no Anthropic Messages API equivalent", field=k)
        name = _ANTHROPIC_PARAMS[k]
        params[name] = [v] if name == "stop_sequences" and isinstance(v, str) else v
    return params


def _wraps_api(judge: Judge) -> bool:
    """Whether a composite judge (vote, ensemble) calls an api judge inside."""
    inner = [getattr(judge, "inner", None), *getattr(judge, "members", ())]
    return any(isinstance(j, ApiJudge) or (j is not None and _wraps_api(j)) for j in inner)


def _fits(provider: str, model_provider: str | None) -> bool:
    return model_provider in (_OPENAI_LIKE if provider == "openai" else ("anthropic",))


BATCH_FILE = "--batch-out batch file"
"""Who writes a batch request file (any command's ``--batch-out``: a later batch of the same run replaces it)."""


@dataclass
class BatchWriter:
    """Collects deferred calls and writes the provider's batch file(s) (``runtime.batch.BatchSink``).

    Args:
        provider: ``openai`` or ``anthropic``.
        out: the file to write (``.jsonl`` for OpenAI, ``.json`` for Anthropic, by convention); when the calls
            need several files (several models for OpenAI, or more than a file holds) they are ``out`` with
            ``-2``, ``-3``, … before the suffix.
    """

    provider: str
    out: Path
    lines: dict[str, tuple[str, str, str]] = field(default_factory=dict)   # key -> (model, judge id, line)
    stores: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise InputError(f"--batch must be one of {', '.join(PROVIDERS)}, not {self.provider!r}", field="--batch")

    def takes(self, judge: Judge) -> bool:
        if isinstance(judge, ApiJudge):
            return True
        if _wraps_api(judge):
            raise InputError(f"--batch: judge {judge.id} combines api: judges (vote/ensemble), whose calls a batch "
                             "file cannot answer; batch the api: judge itself", field="--batch")
        return False

    def defer(self, judge: Judge, calls: dict[str, JudgeRequest], store: Any) -> None:
        assert isinstance(judge, ApiJudge)
        if not _fits(self.provider, judge.model_provider):
            raise InputError(f"--batch {self.provider}: judge {judge.id} is a {judge.model_provider or 'unknown'} "
                             f"model ({judge.spec.model}); an {self.provider} batch file cannot send it",
                             field="--batch")
        spec = judge.spec.model_copy(update={"options": {}}).model_dump_json()   # never a transport option
        rows = []
        for key, request in calls.items():
            call = judge.batch_call(request)
            cid = custom_id(key, self.provider)
            if self.provider == "openai":
                line = json.dumps({"custom_id": cid, "method": "POST", "url": OPENAI_URL, "body": call["body"]})
            else:
                line = json.dumps({"custom_id": cid, "params": anthropic_params(call["body"])})
            self.lines.setdefault(key, (call["body"]["model"], judge.id, line))
            rows.append((cid, key, self.provider, spec, request.model_dump_json(), call["want_logprobs"]))
        store.defer(rows)
        if store.path not in self.stores:
            self.stores.append(store.path)

    def parts(self) -> list[list[str]]:
        """The request lines, one list per file (per model for OpenAI, then cut at the provider's limits)."""
        limit, max_bytes = ((OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES) if self.provider == "openai"
                            else (ANTHROPIC_MAX_REQUESTS, ANTHROPIC_MAX_BYTES))
        groups: dict[str, list[str]] = {}
        for model, _, line in self.lines.values():
            groups.setdefault(model if self.provider == "openai" else "", []).append(line)
        parts: list[list[str]] = []
        for lines in groups.values():
            cur: list[str] = []
            size = 0
            for line in lines:
                n = len(line.encode()) + 1
                if cur and (len(cur) >= limit or size + n > max_bytes):
                    parts.append(cur)
                    cur, size = [], 0
                cur.append(line)
                size += n
            if cur:
                parts.append(cur)
        return parts

    def write(self) -> list[tuple[Path, int]]:
        """Write the batch file(s); ``(path, requests)`` each."""
        parts = self.parts()
        written = []
        for i, lines in enumerate(parts):
            path = self.out if i == 0 else self.out.with_name(f"{self.out.stem}-{i + 1}{self.out.suffix}")
            output_file(path, field="--batch-out", by=BATCH_FILE)   # (the first one is checked before any call too)
            path.parent.mkdir(parents=True, exist_ok=True)
            if self.provider == "openai":
                text = "\n".join(lines) + "\n"
            else:
                text = '{"requests": [\n' + ",\n".join(lines) + "\n]}\n"
            path.write_text(text, encoding="utf-8")
            written.append((path, len(lines)))
        return written


def write_batch(judges: Judge | list[Judge], requests: list[JudgeRequest], store: Any, *, provider: str,
                out: str | Path) -> list[tuple[Path, int]]:
    """Write the provider's batch request file(s) for every call of ``judges`` (``api:`` judges) on ``requests``
    that is not yet in ``store`` (a ``CallStore``, or the path of one, created if absent); no call is made.
    The Python form of ``--batch PROVIDER --batch-out OUT``: ``(path, requests)`` per file written (none when
    every call is stored). Then ``ingest`` the provider's results into the same store, and
    ``runtime.executor.run(judge, requests, store=store)`` is served from it with the keys and verdicts of online
    calls."""
    from judgeaudit.runtime.batch import Deferred
    from judgeaudit.runtime.context import RunContext
    from judgeaudit.runtime.executor import run
    from judgeaudit.runtime.store import CallStore

    judges = [judges] if isinstance(judges, Judge) else list(judges)
    writer = BatchWriter(provider, Path(out))
    for j in judges:
        if not writer.takes(j):
            raise InputError(f"judge {j.id} is not an api: judge: a batch file sends only api: judges' calls",
                             field="judge")
    if not isinstance(store, CallStore):
        with CallStore(store) as cs:
            return write_batch(judges, requests, cs, provider=provider, out=out)
    deferred = False
    context = RunContext(sink=writer)
    for j in judges:
        try:
            run(j, [r for r in requests if j.can_answer(r)], store=store, progress=False, context=context)
        except Deferred:
            deferred = True
    return writer.write() if deferred else []


# --- reading a provider's results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One line of a results file: its place, id, outcome and (succeeded) the answer's parts."""

    path: str
    line: int
    custom_id: str
    outcome: str            # succeeded | errored | canceled | expired | failed (an error status or no text)
    text: str | None = None
    choice: Any = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    provider: str = "openai"
    request_id: str | None = None


@dataclass
class IngestReport:
    """What ``ingest`` did: answers stored, already in the store, and entries left missing by outcome."""

    stored: int = 0
    already: int = 0
    missing: Counter = field(default_factory=Counter)
    first_error: str | None = None

    def line(self) -> str:
        left = ", ".join(f"{n} {k}" for k, n in sorted(self.missing.items()))
        text = f"{self.stored} answers stored, {self.already} already in the store"
        if left:
            text += f"; left missing (the next run calls them again): {left}"
            if self.first_error:
                text += f"; first error: {self.first_error}"
        return text


def _bad(path: str, line: int, field_: str, msg: str) -> InputError:
    return InputError(msg, path=path, line=line, field=field_)


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _openai_entry(obj: dict[str, Any], path: str, line: int) -> Entry:
    cid = obj["custom_id"]
    err, resp = obj.get("error"), obj.get("response")
    if err:
        msg = err.get("message") if isinstance(err, dict) else str(err)
        code = err.get("code") if isinstance(err, dict) else None
        return Entry(path, line, cid, "failed", error=f"{code}: {msg}" if code else str(msg))
    if not isinstance(resp, dict):
        raise _bad(path, line, "response", "an OpenAI batch result needs a 'response' object or an 'error'")
    status = resp.get("status_code")
    if not isinstance(status, int) or isinstance(status, bool):
        raise _bad(path, line, "response.status_code", f"status_code must be an integer, got {status!r}")
    body = resp.get("body")
    if not isinstance(body, dict):
        raise _bad(path, line, "response.body", "response.body must be a JSON object")
    if status != 200:
        e = body.get("error")
        msg = e.get("message") if isinstance(e, dict) else json.dumps(body)[:200]
        return Entry(path, line, cid, "failed", error=f"status {status}: {msg}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _bad(path, line, "response.body.choices", "a status 200 answer needs a non-empty 'choices' list")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _bad(path, line, "response.body.choices[0].message", "the first choice needs a 'message' object")
    text = message.get("content")
    if text is not None and not isinstance(text, str):
        raise _bad(path, line, "response.body.choices[0].message.content", "content must be text or null")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    if text is None:
        return Entry(path, line, cid, "failed", error="response had no message content")
    return Entry(path, line, cid, "succeeded", text=text, choice=choice, input_tokens=_int(usage.get("prompt_tokens")),
                 output_tokens=_int(usage.get("completion_tokens")), request_id=resp.get("request_id"))


def _anthropic_entry(obj: dict[str, Any], path: str, line: int) -> Entry:
    cid, result = obj["custom_id"], obj.get("result")
    if not isinstance(result, dict):
        raise _bad(path, line, "result", "an Anthropic batch result needs a 'result' object")
    kind = result.get("type")
    if kind in ("canceled", "expired"):
        return Entry(path, line, cid, kind, error=kind, provider="anthropic")
    if kind == "errored":
        e = result.get("error") or {}
        inner = e.get("error") if isinstance(e, dict) and isinstance(e.get("error"), dict) else e
        msg = f"{inner.get('type')}: {inner.get('message')}" if isinstance(inner, dict) else str(inner)
        return Entry(path, line, cid, "errored", error=msg, provider="anthropic")
    if kind != "succeeded":
        raise _bad(path, line, "result.type",
                   f"result.type must be succeeded, errored, canceled or expired, got {kind!r}")
    message = result.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise _bad(path, line, "result.message.content", "a succeeded result needs a message with a content list")
    texts = [b.get("text") for b in message["content"] if isinstance(b, dict) and b.get("type") == "text"]
    if any(not isinstance(t, str) for t in texts):
        raise _bad(path, line, "result.message.content", "a text block needs a 'text' string")
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    if not texts:
        return Entry(path, line, cid, "failed", error="response had no message content", provider="anthropic")
    return Entry(path, line, cid, "succeeded", text="".join(texts), input_tokens=_int(usage.get("input_tokens")),
                 output_tokens=_int(usage.get("output_tokens")), provider="anthropic", request_id=message.get("id"))


def read_results(path: str | Path) -> list[Entry]:
    """Every entry of a provider's results file (OpenAI or Anthropic, told apart line by line)."""
    p = str(path)
    if not Path(p).is_file():
        raise InputError("results file not found", path=p)
    entries = []
    for n, raw in enumerate(read_text(p).split("\n"), start=1):   # not UTF-8: one line naming its line
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise _bad(p, n, "line", f"not JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise _bad(p, n, "line", "each line must be a JSON object")
        cid = obj.get("custom_id")
        if not isinstance(cid, str) or not cid:
            raise _bad(p, n, "custom_id", "each result needs a non-empty 'custom_id' string")
        if "result" in obj:
            entries.append(_anthropic_entry(obj, p, n))
        elif "response" in obj or "error" in obj:
            entries.append(_openai_entry(obj, p, n))
        else:
            raise _bad(p, n, "response", "neither an OpenAI batch result ('response'/'error') nor an Anthropic "
                                         "one ('result')")
    return entries


def ingest(paths: list[str | Path], store: Any) -> IngestReport:
    """Read provider results files into ``store`` (a ``CallStore``, or the path of one); see the module docstring.

    Every file is read and every answer checked before anything is stored; given a path, the store is opened
    read-only for that and written only when there is an answer to store, so a bad file leaves it as it was.
    """
    from judgeaudit.runtime.store import CallStore

    entries = [e for p in paths for e in read_results(p)]
    if isinstance(store, CallStore):
        report, verdicts = _plan(entries, store)
        if verdicts:
            store.put_many(verdicts)
        return report
    with CallStore(store, readonly=True) as ro:
        report, verdicts = _plan(entries, ro)
    if verdicts:
        with CallStore(store) as rw:
            rw.put_many(verdicts)
    return report


def _plan(entries: list[Entry], store: Any) -> tuple[IngestReport, list[Verdict]]:
    """What ingesting ``entries`` into ``store`` stores (nothing is written here): the report and the verdicts."""
    deferred = store.deferred({e.custom_id for e in entries})
    unknown = [e for e in entries if e.custom_id not in deferred]
    done = store.completed([e.custom_id for e in unknown]) if unknown else {}
    report = IngestReport()
    judges: dict[str, ApiJudge] = {}
    verdicts: dict[str, Verdict] = {}
    for e in entries:
        if e.custom_id not in deferred:
            if e.custom_id in done:
                report.already += 1
                continue
            raise _bad(e.path, e.line, "custom_id", f"{e.custom_id!r} is not a call written to a batch file from "
                                                    f"{store.path}; ingest into the store the batch was made from")
        key, provider, spec_json, request_json, logprobs = deferred[e.custom_id]
        if e.provider != provider:
            raise _bad(e.path, e.line, "custom_id", f"an {e.provider} result for a call written to an {provider} "
                                                    "batch file")
        if e.outcome != "succeeded":
            report.missing[e.outcome] += 1
            report.first_error = report.first_error or e.error
            continue
        judge = judges.get(spec_json)
        if judge is None:
            judge = judges[spec_json] = ApiJudge(JudgeSpec.model_validate_json(spec_json))
        request = JudgeRequest.model_validate_json(request_json)
        meta = {"batch": provider, **({"batch_request_id": e.request_id} if e.request_id else {})}
        v = judge.batch_verdict(request, want_logprobs=logprobs, text=e.text, choice=e.choice,
                                input_tokens=e.input_tokens, output_tokens=e.output_tokens, provider=provider,
                                meta=meta)
        if v.call_key != key:
            raise _bad(e.path, e.line, "custom_id", f"the judge's prompt for {e.custom_id!r} is not the one the batch "
                                                    "file sent (judgeaudit's templates changed since): write a new "
                                                    "batch file")
        verdicts[key] = v
    already = store.completed(list(verdicts)) if verdicts else {}
    report.already += len(already)
    report.stored = len(verdicts) - len(already)
    return report, [v for k, v in verdicts.items() if k not in already]

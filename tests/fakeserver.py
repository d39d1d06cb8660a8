"""A local OpenAI-compatible chat-completions server on 127.0.0.1, with switchable faults.

Used by the tests and benchmarks of the ``api`` backend (through LiteLLM). Never reaches out.

    with FakeServer(responder=lambda prompt: "Score: 3") as srv:
        srv.fault("429", times=2, retry_after=0.1)
        ... api_base=srv.base_url ...

Faults apply to the next ``times`` requests, in the order planned: ``429`` (with Retry-After),
``500``, ``400`` (a permanent refusal; ``message`` sets its text), ``status`` (an error answer with status
``code``, e.g. a permanent 404), ``slow`` (sleeps ``delay`` seconds before answering; a late answer is not counted in ``answered``), ``malformed`` (a body that is not
JSON), ``truncated`` (a JSON body cut in half), ``garbage`` (a well-formed answer whose text is
not a verdict).

``schema_break`` answers a well-formed completion whose text is JSON that breaks any verdict schema.
A request carrying ``response_format`` is checked the way OpenAI checks it: ``{"type": "json_schema",
"json_schema": {"name": <1-64 of a-z A-Z 0-9 _ ->, "schema": {...}, "strict"?: bool}}`` (or ``text`` /
``json_object``); a malformed one gets a 400. ``structured_responder(prompt, json_schema)``, when given, answers
the requests that carry a JSON schema (the others go to ``responder``).

``logprobs=True`` answers a logprob request with one position: the reply's first digit at 0.7, the other
digits sharing 0.3. ``logprobs=<callable>`` builds ``choices[0].logprobs.content`` from the reply text;
``chat_logprobs`` makes them the shape OpenAI's chat API returns (one entry per token with ``token``,
``logprob``, ``bytes`` and ``top_logprobs``; digits among the alternatives of every position).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


_TOKEN_RE = re.compile(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]|\s+")


def _token_entries(piece: str) -> list[tuple[str, list[int]]]:
    """(token string, bytes) of one token; a character of several UTF-8 bytes is split across two
    tokens the way byte-level tokenisers do, each shown as ``bytes:\\xNN...``."""
    raw = piece.encode()
    if len(raw) == len(piece):
        return [(piece, list(raw))]
    cut = len(raw) - 1
    return [("bytes:" + "".join(f"\\x{b:02x}" for b in part), list(part)) for part in (raw[:cut], raw[cut:])]


def chat_logprobs(text: str, score_probs: dict[int, float], *, score_at: int | None = None,
                  distractors: tuple[str, ...] = ("1", "**", " the"), chosen_p: float = 0.9) -> list[dict[str, Any]]:
    """Chat-format logprobs for ``text``: at the token holding character ``score_at`` (default: the
    last digit of the text) ``score_probs`` (digit -> probability, the chosen digit included) in the
    token's own spelling; at every other token the chosen token at ``chosen_p`` and ``distractors``
    (a digit among them) sharing the rest."""
    if score_at is None:
        score_at = max((i for i, c in enumerate(text) if c.isdigit()), default=-1)
    content = []
    for m in _TOKEN_RE.finditer(text):
        for tok, raw in _token_entries(m.group()):
            if m.start() <= score_at < m.end():
                lead = tok[: len(tok) - 1]
                alts = {f"{lead}{d}": p for d, p in score_probs.items()}
            else:
                alts = {tok: chosen_p, **{d: (1 - chosen_p) / len(distractors) for d in distractors if d != tok}}
            top = [{"token": t, "logprob": math.log(p), "bytes": raw if t == tok else list(t.encode())}
                   for t, p in sorted(alts.items(), key=lambda kv: -kv[1])]
            content.append({"token": tok, "logprob": math.log(alts[tok]), "bytes": raw, "top_logprobs": top})
    return content


class HoldAfter:
    """A responder that answers its first ``n`` requests at once and holds every later one (the handler's
    thread waits) until ``release()``: a client killed while requests are held is killed mid-run however
    slowly the machine lets the test notice the first ``n`` answers. A held request waits at most
    ``limit`` seconds."""

    def __init__(self, n: int, responder: Callable[[str], str], limit: float = 600.0):
        self.n, self.responder, self.limit = n, responder, limit
        self.seen = 0
        self._lock = threading.Lock()
        self._open = threading.Event()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.seen += 1
            held = self.seen > self.n
        if held:
            self._open.wait(self.limit)
        return self.responder(prompt)

    def release(self) -> None:
        self._open.set()


_POLL_S = 0.02
"""How often the serving loop checks for a stop (``socketserver``'s default: 0.5 s)."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024   # the default backlog (5) drops connections under high concurrency

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a run the test killed) is not the server's error: no traceback.
        Any other error is printed as ``socketserver`` prints it."""
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)


class FakeServer:
    def __init__(self, responder: Callable[[str], str] | None = None, latency: float = 0.0,
                 logprobs: bool | Callable[[str], list[dict[str, Any]]] = False,
                 structured_responder: Callable[[str, dict[str, Any]], str] | None = None):
        self.responder = responder or (lambda prompt: "Score: 5")
        self.structured_responder = structured_responder
        self.latency = latency
        self.logprobs = logprobs
        self.requests: list[dict[str, Any]] = []
        self.answered: Counter[str] = Counter()   # prompt hash -> successful answers sent
        self.auth_headers: list[str] = []
        self._faults: deque[tuple[str, dict[str, Any]]] = deque()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # ``shutdown`` waits for the serving loop to look at its flag, once per poll: the default half second
        # was the cost of every stop
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": _POLL_S},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def fault(self, kind: str, times: int = 1, **kw: Any) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append((kind, kw))

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    start = __enter__

    def stop(self) -> None:
        self.__exit__()

    @staticmethod
    def prompt_hash(prompt: str) -> str:
        return hashlib.sha256(prompt.encode()).hexdigest()

    def _next_fault(self) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    @staticmethod
    def response_format_problem(body: dict[str, Any]) -> str | None:
        """Why a request's ``response_format`` is malformed (None: absent or well-formed)."""
        fmt = body.get("response_format")
        if fmt is None:
            return None
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
            return "response_format.type must be text, json_object or json_schema"
        if fmt["type"] != "json_schema":
            return None
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict):
            return "response_format.json_schema is required for type json_schema"
        if not isinstance(spec.get("name"), str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", spec["name"]):
            return "response_format.json_schema.name must be 1-64 of a-z, A-Z, 0-9, _ and -"
        if not isinstance(spec.get("schema"), dict):
            return "response_format.json_schema.schema must be a JSON schema object"
        if "strict" in spec and not isinstance(spec["strict"], bool):
            return "response_format.json_schema.strict must be a boolean"
        return None

    def _reply_text(self, body: dict[str, Any], prompt: str) -> str:
        fmt = body.get("response_format") or {}
        if self.structured_responder is not None and fmt.get("type") == "json_schema":
            return self.structured_responder(prompt, fmt["json_schema"])
        return self.responder(prompt)

    def _completion(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}
        if callable(self.logprobs) and body.get("logprobs"):
            choice["logprobs"] = {"content": self.logprobs(text)}
        elif self.logprobs and body.get("logprobs"):
            digit = next((c for c in text if c.isdigit()), "5")
            top = [{"token": str(d), "logprob": math.log(0.7 if str(d) == digit else 0.3 / 8), "bytes": None}
                   for d in range(1, 10)]
            choice["logprobs"] = {"content": [{"token": digit, "logprob": math.log(0.7), "bytes": None,
                                               "top_logprobs": top}]}
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake"), "choices": [choice],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True   # headers and body go out as separate writes

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, payload: bytes, headers: dict[str, str] | None = None,
                      length: int | None = None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length if length is not None else len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
                with server._lock:
                    server.requests.append(body)
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                problem = server.response_format_problem(body)
                if problem is not None:
                    return self._send(400, json.dumps({"error": {"message": problem, "type": "invalid_request_error",
                                                                 "param": "response_format", "code": None}}).encode())
                fault = server._next_fault()
                if server.latency:
                    time.sleep(server.latency)
                if fault:
                    kind, kw = fault
                    if kind == "429":
                        return self._send(429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}',
                                          {"Retry-After": str(kw.get("retry_after", 0.05))})
                    if kind == "400":
                        msg = kw.get("message", "invalid request")
                        return self._send(400, json.dumps({"error": {"message": msg, "type": "invalid_request_error",
                                                                     "code": None, "param": None}}).encode())
                    if kind == "500":
                        return self._send(500, b'{"error": {"message": "boom", "type": "server_error"}}')
                    if kind == "status":
                        return self._send(kw["code"], b'{"error": {"message": "refused", "type": "invalid_request"}}')
                    if kind == "slow":  # answers after the client's timeout: not counted as answered
                        time.sleep(kw.get("delay", 5.0))
                        text = server.responder(prompt)
                        return self._send(200, json.dumps(server._completion(body, text)).encode())
                    if kind == "malformed":
                        return self._send(200, b"<html>not json</html>")
                    if kind == "truncated":
                        full = json.dumps(server._completion(body, server.responder(prompt))).encode()
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(full)))
                        self.end_headers()
                        self.wfile.write(full[: len(full) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    if kind in ("garbage", "schema_break"):
                        text = "I would rather not say." if kind == "garbage" else '{"verdict": "maybe", "score": 12}'
                        with server._lock:
                            server.answered[server.prompt_hash(prompt)] += 1
                        return self._send(200, json.dumps(server._completion(body, text)).encode())
                text = server._reply_text(body, prompt)
                with server._lock:
                    server.answered[server.prompt_hash(prompt)] += 1
                self._send(200, json.dumps(server._completion(body, text)).encode())

        return Handler


def main() -> None:  # pragma: no cover - used by subprocess tests and benchmarks
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True, help="append one prompt hash per successful answer")
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)  # noqa: SIM115

    def responder(prompt: str) -> str:
        log.write(FakeServer.prompt_hash(prompt) + "\n")
        digit = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 9 + 1
        if '{"defective": true}' in prompt:    # a world label prompt (judgeaudit world)
            return '{"defective": %s}' % ("true" if digit > 5 else "false")
        return f"Score: {digit}"

    srv = FakeServer(responder=responder, latency=args.latency)
    srv.start()
    with open(args.port_file, "w") as fh:
        fh.write(srv.base_url)
    threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()

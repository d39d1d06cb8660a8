"""The lean transport of ``api:`` judges: OpenAI chat completions over one pooled HTTP client.

Used for an ``api_base`` served by an OpenAI-compatible server (vLLM, llama.cpp server, Ollama's
``/v1``, TGI, ...). One ``aiohttp.ClientSession`` per event loop keeps its connections alive
between calls (at most ``limit`` of them); it is created on the first call in a loop and closed when that
loop shuts down its async generators (``asyncio.run`` does at the end of every run), or by
``aclose``. Nothing is resolved per call: the wire model name, the provider and the key's source are
fixed when the judge is built. (aiohttp rather than httpx: against a 200 ms server on this 2-core
machine a bare httpx client reaches 0.04-0.05 of the ceiling at 128 in flight, a bare aiohttp client
0.7-0.9; see ``benchmarks/async_server.py --capacity``.)

Failures are classified as the LiteLLM route classifies them: 429, 408, 409 and 5xx (with the
server's Retry-After), timeouts, broken connections, truncated or malformed bodies and replies
without a message are ``TransientError`` (the executor retries them); 401/403 are ``AuthError`` (the run
stops at once, naming the key's variable); any other 4xx is permanent.
The key is read from the environment when a client is made, sent as a Bearer token and kept only
in that client's headers; error messages carry the normalised endpoint, never the key.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from judgeaudit.errors import AuthError, TransientError

_TRANSIENT_STATUS = frozenset({408, 409, 429})
_PERMANENT_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                    404: "NotFoundError", 422: "UnprocessableEntityError"}


class HTTPStatusError(Exception):
    """A permanent (4xx) answer of the server."""


_PERMANENT = {code: type(name, (HTTPStatusError,), {}) for code, name in _PERMANENT_NAMES.items()}


def _retry_after(resp: aiohttp.ClientResponse) -> float | None:
    value = resp.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _server_message(content: bytes) -> str:
    try:
        err = json.loads(content).get("error")
        text = err.get("message") if isinstance(err, dict) else err
    except (ValueError, AttributeError):
        text = None
    return str(text if text else content[:200].decode(errors="replace")).replace("\n", " ")[:300]


class OpenAIHttp:
    """POSTs chat-completion bodies to ``<base_url>/chat/completions``.

    Args:
        base_url: the server's base URL (``http://host:port/v1``) as the user gave it.
        endpoint: its normalised form, the only one error messages show.
        key_env: environment variables to read the key from, in order (the first set one is sent).
        default_key: the key when none of them is set (a placeholder some providers need), or None.
        limit: the most connections kept open (the judge's concurrency).
        timeout: seconds per call, or None for no transport timeout (the executor's still applies).
    """

    def __init__(self, base_url: str, *, endpoint: str, key_env: tuple[str, ...], default_key: str | None,
                 limit: int, timeout: float | None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.endpoint = endpoint
        self.key_env, self.default_key = key_env, default_key
        self.limit, self.timeout = limit, timeout
        self._clients: dict[int, tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession, AsyncIterator[None]]] = {}

    def _new_client(self) -> aiohttp.ClientSession:
        headers = {"Content-Type": "application/json"}
        key = next((os.environ[v] for v in self.key_env if os.environ.get(v)), self.default_key)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout),
                                     connector=aiohttp.TCPConnector(limit=self.limit), trust_env=False)

    async def _lifetime(self, loop_id: int, client: aiohttp.ClientSession) -> AsyncIterator[None]:
        """Suspended for the life of the loop; the loop's shutdown closes it, and the client with it."""
        try:
            yield
        finally:
            self._clients.pop(loop_id, None)
            await client.close()

    async def client(self) -> aiohttp.ClientSession:
        """This event loop's client (made on first use)."""
        loop = asyncio.get_running_loop()
        entry = self._clients.get(id(loop))
        if entry is not None and entry[0] is loop and not entry[1].closed:
            return entry[1]
        client = self._new_client()
        keeper = self._lifetime(id(loop), client)
        self._clients[id(loop)] = (loop, client, keeper)
        await keeper.__anext__()
        return client

    async def aclose(self) -> None:
        """Close this event loop's client now (the next call makes a new one)."""
        entry = self._clients.get(id(asyncio.get_running_loop()))
        if entry is not None:
            await entry[2].aclose()

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's JSON answer to ``body``; raises ``TransientError`` or a permanent error."""
        client = await self.client()
        try:
            async with client.post(self.url, data=json.dumps(body).encode()) as resp:
                status, content = resp.status, await resp.read()
                retry_after = _retry_after(resp)
        except TimeoutError:
            raise TransientError(f"Timeout: no answer from {self.endpoint} in time") from None
        except aiohttp.ClientError as e:   # refused, reset, or a body cut short
            raise TransientError(f"{type(e).__name__}: {self.endpoint}: {str(e)[:200]}") from None
        if status >= 400:
            message = f"HTTP {status} from {self.endpoint}: {_server_message(content)}"
            if status in _TRANSIENT_STATUS or status >= 500:
                raise TransientError(message, retry_after=retry_after)
            if status in (401, 403):
                var = self.key_env[0] if self.key_env else "the provider's API key variable"
                raise AuthError(f"{message} (check the key in {var})", field=var)
            raise _PERMANENT.get(status, HTTPStatusError)(message)
        try:
            answer = json.loads(content)
            choice = answer["choices"][0]
            choice["message"]["content"]   # noqa: B018 - a reply without a message is broken
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise TransientError(f"malformed answer from {self.endpoint}: {type(e).__name__}") from None
        return answer

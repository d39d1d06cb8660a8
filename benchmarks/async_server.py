"""An asyncio OpenAI chat-completions server for throughput benchmarks, on 127.0.0.1 only.

Answers every ``POST .../chat/completions`` after a fixed latency (default 200 ms) with
``Score: <digit>`` (the digit a hash of the prompt), holding no thread per connection: one event
loop, HTTP/1.1 keep-alive, a timer per request. Unlike ``tests/fakeserver.py`` (threads, switchable
faults) it sustains hundreds of requests in flight, so a benchmark measures the client, not the
server. Run: ``python benchmarks/async_server.py --port-file PATH [--latency 0.2]``; it writes its
base URL to PATH and serves until terminated. ``python benchmarks/async_server.py --capacity``
instead reports the fraction of the ceiling bare ``aiohttp`` and ``httpx`` clients reach against it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def completion(body: dict[str, Any]) -> bytes:
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    digit = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 9 + 1
    return json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()),
                       "model": body.get("model", "bench"),
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": f"Score: {digit}"}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}).encode()


class _Http(asyncio.Protocol):
    """One connection: parses requests (Content-Length bodies) and answers each after ``latency``."""

    def __init__(self, latency: float):
        self.latency = latency
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
            length = int(headers.get("content-length", 0))
            if len(self.buf) < head_end + 4 + length:
                return
            body = self.buf[head_end + 4 : head_end + 4 + length]
            self.buf = self.buf[head_end + 4 + length :]
            method, path = head[0].split(" ")[:2]
            if method == "POST" and path.endswith("/chat/completions"):
                status, payload = "200 OK", completion(json.loads(body or b"{}"))
            else:
                status, payload = "404 Not Found", b'{"error": {"message": "not found"}}'
            asyncio.get_running_loop().call_later(self.latency, self._answer, status, payload)

    def _answer(self, status: str, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                                 f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)


async def serve(latency: float, port_file: str | None = None, ready: asyncio.Event | None = None,
                urls: list[str] | None = None) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Http(latency), "127.0.0.1", 0, backlog=2048)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    if port_file:
        with open(port_file, "w") as fh:
            fh.write(url)
    if urls is not None:
        urls.append(url)
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()


async def bare_client_rate(base_url: str, in_flight: int, calls: int, client: str = "aiohttp") -> float:
    """Calls per second a bare client (``aiohttp`` or ``httpx``) reaches with ``in_flight`` requests
    outstanding: ``in_flight`` workers posting one after another over one pooled session."""
    url = base_url + "/chat/completions"

    def body(i: int) -> bytes:
        return json.dumps({"model": "bench", "messages": [{"role": "user", "content": f"x{i}"}]}).encode()

    share = [calls // in_flight + (1 if w < calls % in_flight else 0) for w in range(in_flight)]
    if client == "aiohttp":
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=in_flight)) as session:
            async def post(i: int) -> None:
                async with session.post(url, data=body(i), headers={"Content-Type": "application/json"}) as r:
                    r.raise_for_status()
                    await r.read()

            return await _timed(post, share, calls)
    import httpx

    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    async with httpx.AsyncClient(limits=limits, timeout=60, trust_env=False) as hc:
        async def post(i: int) -> None:
            (await hc.post(url, content=body(i), headers={"Content-Type": "application/json"})).raise_for_status()

        return await _timed(post, share, calls)


async def _timed(post: Any, share: list[int], calls: int) -> float:
    async def worker(w: int, n: int) -> None:
        for i in range(n):
            await post(w * 100_000 + i)

    started = time.perf_counter()
    await asyncio.gather(*(worker(w, n) for w, n in enumerate(share) if n))
    return calls / (time.perf_counter() - started)


class ServerProcess:
    """This server in its own process (it must not share the client's interpreter lock); yields its URL."""

    def __init__(self, latency: float):
        self.latency = latency

    def __enter__(self) -> str:
        self._tmp = tempfile.TemporaryDirectory()
        port_file = Path(self._tmp.name) / "url"
        self.proc = subprocess.Popen([sys.executable, __file__, "--latency", str(self.latency),
                                      "--port-file", str(port_file)])
        while not (port_file.exists() and port_file.read_text()):
            if self.proc.poll() is not None:
                raise RuntimeError("the benchmark server exited before it served")
            time.sleep(0.05)
        return port_file.read_text()

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait()
        self._tmp.cleanup()


def calls_for(in_flight: int, latency: float, seconds: float = 5.0, cap: int = 2000) -> int:
    """A bounded call count: about ``seconds`` at the ceiling, at least 4 rounds, at most ``cap``."""
    return min(cap, max(4 * in_flight, round(seconds * in_flight / latency)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--port-file")
    ap.add_argument("--capacity", action="store_true",
                    help="start the server in a subprocess and report a bare client's fraction of the ceiling")
    args = ap.parse_args()
    if not args.capacity:
        if not args.port_file:
            ap.error("--port-file is required to serve")
        asyncio.run(serve(args.latency, args.port_file))
        return
    with ServerProcess(args.latency) as url:
        print(f"async benchmark server, {args.latency * 1000:.0f} ms latency: fraction of the ceiling a bare client reaches")
        print(f"{'in flight':>9} {'calls':>6} {'ceiling/s':>9} {'aiohttp':>8} {'httpx':>8}")
        for c in (1, 8, 32, 128):
            n = calls_for(c, args.latency)
            ceiling = c / args.latency
            fractions = [asyncio.run(bare_client_rate(url, c, n, client)) / ceiling for client in ("aiohttp", "httpx")]
            print(f"{c:>9} {n:>6} {ceiling:>9.1f} {fractions[0]:>8.2f} {fractions[1]:>8.2f}", flush=True)


if __name__ == "__main__":
    main()

"""Plumbing for ``client.py``: the Langfuse peer and its fake server, a transport that
counts the requests a client sends, and the timed loops.

The Langfuse Python SDK fetches a prompt with ``GET /api/public/v2/prompts/{name}``
(HTTP Basic auth, public key : secret key) and parses the answer as its ``Prompt``
model (``type`` "text" or "chat", ``name``, ``version``, ``config``, ``labels``,
``tags``, and ``prompt``); later ``get_prompt`` calls are answered from its
``PromptCache`` until the TTL passes. :class:`FakeLangfuse` answers that one endpoint
on 127.0.0.1, so the SDK's first call fills its cache as it would against Langfuse
Cloud, and counts every request it gets: a cached call must send none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import statistics
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from itertools import repeat
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from sysprompt_client import AsyncClient, Client, PromptResult

PROMPT_PATH = "/api/public/v2/prompts/"
LANGFUSE_TTL = 24 * 3600
"""The cache TTL the peer asks for: no refetch can happen while it is timed."""
MAX_AGE = 24 * 3600.0
"""sysprompt's ``max_age`` for the cached client, the same reason: no revalidation."""


# --- the Langfuse peer ---------------------------------------------------------------


class FakeLangfuse:
    """A Langfuse API that knows only text prompts, on 127.0.0.1, in a thread."""

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake._record("GET", self.path)
                path = urlsplit(self.path).path
                name = unquote(path[len(PROMPT_PATH) :]) if path.startswith(PROMPT_PATH) else ""
                text = fake.prompts.get(name)
                if not (self.headers.get("Authorization") or "").startswith("Basic "):
                    self._answer(401, {"message": "no Basic authorization"})
                elif text is None:
                    self._answer(404, {"message": f"no prompt at {self.path}"})
                else:
                    self._answer(200, fake.prompt_json(name, text))

            def do_POST(self) -> None:
                fake._record("POST", self.path)
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self._answer(404, {"message": "this fake serves prompts only"})

            def _answer(self, status: int, data: dict[str, Any]) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="fake-langfuse", daemon=True
        )

    @staticmethod
    def prompt_json(name: str, text: str) -> dict[str, Any]:
        return {
            "type": "text",
            "name": name,
            "version": 1,
            "config": {},
            "labels": ["production", "latest"],
            "tags": [],
            "prompt": text,
        }

    def _record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> FakeLangfuse:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class LangfusePeer:
    """Langfuse's ``get_prompt`` against :class:`FakeLangfuse`, tracing off (no span
    processor, no exporter thread, nothing flushed), one cache TTL longer than the run."""

    def __init__(self, fake: FakeLangfuse) -> None:
        from langfuse import Langfuse  # an optional dev dependency: imported here

        self.fake = fake
        self.version = metadata.version("langfuse")
        self.client = Langfuse(
            public_key="pk-lf-bench",
            secret_key="sk-lf-bench",
            base_url=fake.url,
            tracing_enabled=False,
            timeout=5,
        )

    def prime(self, name: str, text: str) -> None:
        """Serve ``text`` as ``name`` and let the first ``get_prompt`` fetch it."""
        self.fake.prompts[name] = text
        before = self.fake.count()
        prompt = self.client.get_prompt(name, cache_ttl_seconds=LANGFUSE_TTL, max_retries=0)
        if prompt.is_fallback or prompt.prompt != text or self.fake.count() != before + 1:
            raise RuntimeError(
                f"get_prompt({name!r}) did not fetch the prompt once from the fake server "
                f"(requests: {self.fake.requests[before:]})"
            )
        again = self.client.get_prompt(name, cache_ttl_seconds=LANGFUSE_TTL, max_retries=0)
        if again is not prompt or self.fake.count() != before + 1:
            raise RuntimeError(f"the second get_prompt({name!r}) was not answered from the cache")

    def batch(self, name: str, calls: int) -> int:
        """Nanoseconds for ``calls`` cached ``get_prompt`` calls."""
        get = self.client.get_prompt
        ttl = LANGFUSE_TTL
        start = time.perf_counter_ns()
        for _ in repeat(None, calls):
            get(name, cache_ttl_seconds=ttl)
        return time.perf_counter_ns() - start

    def close(self) -> None:
        self.client.shutdown()


def make_langfuse_peer(fake: FakeLangfuse) -> LangfusePeer | str:
    """The peer, or why it cannot run here (the reason is printed with the report)."""
    try:
        peer = LangfusePeer(fake)
        peer.prime("sysprompt-bench-probe", "probe")
    except ImportError as error:
        return f"the langfuse package is not installed ({error})"
    except Exception as error:
        return f"Langfuse's get_prompt did not work offline: {type(error).__name__}: {error}"
    return peer


# --- sysprompt's side ----------------------------------------------------------------


class CountingTransport(httpx.BaseTransport):
    """httpx's own transport, counting the requests that go through it."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def sync_batch(client: Client, conversation_id: str, cwd: str, model: str, calls: int) -> int:
    """Nanoseconds for ``calls`` cached turns, called as a host calls them."""
    turn = client.system_prompt
    start = time.perf_counter_ns()
    for _ in repeat(None, calls):
        turn(conversation_id, cwd=cwd, model=model)
    return time.perf_counter_ns() - start


async def _async_batch(
    client: AsyncClient, conversation_id: str, cwd: str, model: str, calls: int
) -> int:
    turn = client.system_prompt
    start = time.perf_counter_ns()
    for _ in repeat(None, calls):
        await turn(conversation_id, cwd=cwd, model=model)
    return time.perf_counter_ns() - start


def async_batch(
    loop: asyncio.AbstractEventLoop,
    client: AsyncClient,
    conversation_id: str,
    cwd: str,
    model: str,
    calls: int,
) -> int:
    """Nanoseconds for ``calls`` awaited cached turns (timed inside the event loop)."""
    return loop.run_until_complete(_async_batch(client, conversation_id, cwd, model, calls))


def dict_batch(cache: dict[str, PromptResult], conversation_id: str, calls: int) -> int:
    """Nanoseconds for ``calls`` lookups in a plain dict: the floor of any cache."""
    get = cache.get
    start = time.perf_counter_ns()
    for _ in repeat(None, calls):
        get(conversation_id)
    return time.perf_counter_ns() - start


@contextlib.contextmanager
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    try:
        yield loop
    finally:
        loop.close()


# --- statistics ----------------------------------------------------------------------


def p50(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    """The 95th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(0.95 * len(ordered)) - 1))]

"""What the upgrade test's two sides share: the environment both run the app under, and
how one recorded request is sent and its answer written down.

The fixture maker (old code) and the test's replay (new code) each serve the app
in-process through ``httpx.WSGITransport`` — Django's whole WSGI stack, middleware and
authentication included — so a request is the same bytes on both sides and an answer is
compared as the client sees it. Pipeline: an :class:`Exchange` (method, path, the actor
whose token it carries, headers, body) → :func:`send` → :func:`answer_of`: the status,
the headers clients read (:data:`HEADERS`), and the body as JSON, text, a zip's members
or, for an HTML page, nothing but its type.

Nothing here imports the app: the maker runs this file under the old code.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

BASE_URL = "http://127.0.0.1"

SECRET_KEY = "upgrade-fixture-only-not-a-secret"
ADMIN_PASSWORD = "upgrade-fixture-admin-password"

ENVIRONMENT = {
    # As scripts/serve runs it: the editor's pages find their static files without a
    # collectstatic (the answers compared are the same with DEBUG off).
    "DEBUG": "true",
    "SECRET_KEY": SECRET_KEY,
    "LOG_LEVEL": "ERROR",
    # A central deployment: a cwd is only a value (no directory of this machine is read),
    # so the stored conversations' cwds answer a later turn on any machine.
    "SYSPROMPT_SERVER_RESOLVES": "prompt,system",
    "SYSPROMPT_TASKS_BACKEND": "database",
    # The fixture maker's webhook receiver listens on 127.0.0.1.
    "SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS": "127.0.0.1",
    "SYSPROMPT_WEBHOOK_ALLOW_PRIVATE": "127.0.0.1",
    "SYSPROMPT_WEBHOOK_TIMEOUT": "2",
    "SYSPROMPT_WEBHOOK_CONNECT_TIMEOUT": "1",
    "SYSPROMPT_ADMIN_PASSWORD": ADMIN_PASSWORD,
}
"""The app's settings on both sides (``DATABASE_URL`` is each side's own)."""

UNSET = (
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_PROXY_SSL_HEADER",
    "TRUSTED_PROXY_COUNT",
    "STATIC_ROOT",
    "REDIS_URL",
)
UNSET_PREFIXES = ("SYSPROMPT_", "AXES_")
"""Variables that could change answers: both sides run without them (the app's own
settings all start with ``SYSPROMPT_``), then with :data:`ENVIRONMENT`."""

HEADERS = (
    "content-type",
    "etag",
    "content-disposition",
    "location",
    "www-authenticate",
    "allow",
)
"""The answer headers compared: what the routes document and clients read."""

SENT_HEADERS_DROPPED = ("host", "content-length", "accept-encoding", "connection", "authorization")
"""Headers of a recorded client request that the transport sets itself (and the token,
which the actor stands for)."""


def environment(base: Mapping[str, str], database_url: str) -> dict[str, str]:
    """``base`` with the shared settings and ``database_url``."""
    env = {
        key: value
        for key, value in base.items()
        if key not in UNSET and not key.startswith(UNSET_PREFIXES)
    }
    env.update(ENVIRONMENT)
    env["DATABASE_URL"] = database_url
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return env


@dataclass(frozen=True)
class Exchange:
    """One request as both sides send it.

    ``actor`` names whose API token it carries (``None``: none; ``"session"``: the
    session cookie the client holds, from an earlier login). ``body`` is JSON, ``form``
    a form's fields, ``raw`` a body given as base64 bytes (with its ``Content-Type`` in
    ``headers``). ``write``: it changes the database (writes come after every read).
    ``page``: an HTML page, compared by status and headers only. ``at``: the instant
    the app's clock shows while it answers (:func:`stopped_clock`). The method ``CLIENT`` is a
    call of the Python client (``body``: its arguments; see ``replay.py``)."""

    name: str
    method: str
    path: str
    actor: str | None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    form: dict[str, str] | None = None
    raw: str | None = None
    write: bool = False
    page: bool = False
    at: str = ""

    def as_json(self) -> dict[str, Any]:
        kept = ("name", "method", "path", "actor")
        return {
            key: value
            for key, value in asdict(self).items()
            if key in kept or (value is not None and value != {} and value is not False)
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        return cls(**data)


CLOCK_IGNORED = ("asyncio", "anyio", "concurrent", "selectors", "socket", "ssl", "httpcore")
"""Modules that keep the real clock while the app's is stopped: event loops and
transports wait on real time (a stopped loop clock would never wake)."""


@contextmanager
def stopped_clock() -> Iterator[Callable[[str], None]]:
    """The app's clock stopped (freezegun, started once: each start walks every module);
    the function given sets it to an ISO time. Each exchange is answered at the instant
    it was recorded, so what an answer says about "now" (a write's timestamps, the
    impact report's window) is the same on both sides."""
    from freezegun import freeze_time

    with freeze_time("2000-01-01", tick=False, ignore=list(CLOCK_IGNORED)) as clock:

        def set_at(at: str) -> None:
            clock.move_to(at)

        yield set_at


def request_headers(exchange: Exchange, tokens: Mapping[str, str]) -> dict[str, str]:
    headers = dict(exchange.headers)
    if exchange.actor is not None and exchange.actor != "session":
        headers["Authorization"] = f"Token {tokens[exchange.actor]}"
    return headers


def send(http: httpx.Client, exchange: Exchange, tokens: Mapping[str, str]) -> dict[str, Any]:
    """Send ``exchange`` with ``http`` (its cookies: the session, the CSRF token that
    every write without an API token sends back); the answer as :func:`answer_of`
    writes it."""
    headers = request_headers(exchange, tokens)
    typed = any(name.lower() == "content-type" for name in headers)
    content: bytes | None = None
    if exchange.raw is not None:
        content = base64.b64decode(exchange.raw)
    elif exchange.form is not None:
        content = urlencode(exchange.form).encode()
        if not typed:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif exchange.body is not None:
        content = json.dumps(exchange.body).encode()
        if not typed:
            headers["Content-Type"] = "application/json"
    if exchange.actor in (None, "session") and exchange.method not in ("GET", "HEAD"):
        headers["X-CSRFToken"] = http.cookies.get("csrftoken") or ""
    response = http.request(exchange.method, exchange.path, headers=headers, content=content)
    return answer_of(response, page=exchange.page)


def answer_of(response: httpx.Response, *, page: bool = False) -> dict[str, Any]:
    """Status, :data:`HEADERS` and the body: ``json`` when the answer is JSON (an MCP
    event stream's data too), ``jsonl`` (each line's value) for JSON lines, ``zip``
    (each member's text) for a zip, ``text`` for other text; an HTML page (``page``)
    keeps only its status and headers. JSON is kept as values, not text: PostgreSQL's
    ``jsonb`` keeps an object's keys in an order of its own."""
    headers = {name: response.headers[name] for name in HEADERS if name in response.headers}
    answer: dict[str, Any] = {"status": response.status_code, "headers": headers}
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    body = response.content
    if page or not body:
        return answer
    if kind == "application/json" or kind.endswith("+json"):
        answer["json"] = json.loads(body)
    elif kind == "application/x-ndjson":
        answer["jsonl"] = [json.loads(line) for line in body.decode().splitlines() if line]
    elif kind == "text/event-stream":
        answer["json"] = [
            json.loads(line[len("data:") :])
            for line in body.decode().splitlines()
            if line.startswith("data:")
        ]
    elif kind in ("application/zip", "application/octet-stream") and body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            answer["zip"] = {
                name: archive.read(name).decode() for name in sorted(archive.namelist())
            }
    else:
        answer["text"] = body.decode()
    return answer


class Recording(httpx.BaseTransport):
    """A transport that keeps every request it passes on and the answer: what the Python
    client sent, to replay as plain requests."""

    def __init__(self, inner: httpx.BaseTransport, actor: str, name: str, at: str) -> None:
        self.inner = inner
        self.actor = actor
        self.name = name
        self.at = at
        self.exchanges: list[tuple[Exchange, dict[str, Any]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        sent = {
            name: value
            for name, value in request.headers.items()
            if name.lower() not in SENT_HEADERS_DROPPED
        }
        content = request.read()
        body = json.loads(content) if content else None
        target = request.url.raw_path.decode()
        exchange = Exchange(
            f"{self.name} #{len(self.exchanges) + 1}",
            request.method,
            target,
            self.actor,
            headers=sent,
            body=body,
            at=self.at,
        )
        answer = answer_of(
            httpx.Response(response.status_code, headers=response.headers, content=response.content)
        )
        self.exchanges.append((exchange, answer))
        return httpx.Response(
            response.status_code, headers=response.headers, content=response.content
        )

    def close(self) -> None:
        self.inner.close()

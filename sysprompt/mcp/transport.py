"""One MCP request over HTTP, served by the SDK's Streamable HTTP transport inside a
Django view.

The SDK's transport is an ASGI application; the server runs Django under gunicorn's
threaded WSGI workers. Each POST to ``/mcp`` is one self-contained exchange (stateless,
JSON answers: no session, no stream outlives the request), so the view hands the
request, body already read, to a fresh stateless
:class:`~mcp.server.streamable_http_manager.StreamableHTTPSessionManager` and collects
its answer (:func:`exchange`):

* ``asgiref``'s ``async_to_sync`` runs the exchange on an event loop of its own while
  the worker thread waits; the backend's database work is handed back to that worker
  thread through ``sync_to_async(thread_sensitive=True)`` (:func:`on_request_thread`;
  the waiting thread serves such calls): the request's own database connection, as
  every other view's, and no connection per thread of a pool.
* The manager's lifespan and task group are entered and left around this one request
  (``run()``): nothing is shared between requests or threads, nothing is left running.
* The SDK's DNS-rebinding protection (``TransportSecuritySettings``) is given the
  request's Host only when it is one of Django's ``ALLOWED_HOSTS`` (Django's own
  matching, ``.example.com`` and ``*`` included), and its Origin only when that is the
  request's own, a ``CSRF_TRUSTED_ORIGINS`` entry or names a host ``ALLOWED_HOSTS``
  lists (not through ``*``) (:func:`security_settings`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port, validate_host
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class Answer:
    """What the transport answered: status, headers (names lowercase) and the body."""

    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)


def on_request_thread(function: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``function`` (sync, using the database) as a coroutine function that runs it on
    the thread serving the request (see the module's description)."""
    return sync_to_async(function, thread_sensitive=True)


def _allowed_origin(origin: str, host: str) -> bool:
    """An ``Origin`` the SDK may let through: a trusted origin, the request's own
    (scheme aside), or one naming a host ``ALLOWED_HOSTS`` lists by name or pattern
    (``*``, which allows any Host, allows no other origin)."""
    if origin in (getattr(settings, "CSRF_TRUSTED_ORIGINS", None) or ()):
        return True
    parts = urlsplit(origin)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return False
    if parts.netloc == host:
        return True
    domain, _port = split_domain_port(parts.netloc)
    named = [allowed for allowed in settings.ALLOWED_HOSTS or [] if allowed != "*"]
    return bool(domain) and validate_host(domain, named)


def _host(request: HttpRequest) -> str:
    """The Host header, or for a request without one (HTTP/1.0) the server's name, as
    Django takes it (``get_host``)."""
    return str(request.META.get("HTTP_HOST") or request.get_host())


def security_settings(request: HttpRequest) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks, fed from Django's ``ALLOWED_HOSTS``: this
    request's Host is allowed when Django's matching allows it, its Origin (when it
    sends one) as :func:`_allowed_origin` says. Anything else is refused by the SDK
    (421 for the Host, 403 for the Origin)."""
    host = _host(request)
    domain, _port = split_domain_port(host)
    allowed_hosts = [host] if domain and validate_host(domain, settings.ALLOWED_HOSTS or []) else []
    origin = request.META.get("HTTP_ORIGIN", "")
    allowed_origins = [origin] if origin and _allowed_origin(origin, host) else []
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


def _scope(request: HttpRequest) -> dict[str, Any]:
    headers = [
        (name.lower().encode("latin-1"), str(value).encode("latin-1"))
        for name, value in request.headers.items()
    ]
    if "HTTP_HOST" not in request.META:
        headers.append((b"host", _host(request).encode("latin-1")))
    port = request.META.get("SERVER_PORT") or "80"
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method or "POST",
        "scheme": request.scheme or "http",
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.META.get("SERVER_NAME", ""), int(port) if port.isdigit() else 80),
    }


async def _exchange(
    server: Server[Any],
    scope: dict[str, Any],
    body: bytes,
    security: TransportSecuritySettings,
    max_body_bytes: int,
) -> Answer:
    answer = Answer()
    answered = anyio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client is there until the whole answer is sent
        return {"type": "http.disconnect"}

    chunks: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = int(message["status"])
            answer.headers = [
                (bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
                for name, value in message.get("headers", [])
            ]
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        security_settings=security,
        max_request_body_size=max_body_bytes,
    )
    async with manager.run():
        await manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
    answer.body = b"".join(chunks)
    return answer


def exchange(
    server: Server[Any], request: HttpRequest, body: bytes, *, max_body_bytes: int
) -> Answer:
    """Serve one MCP request (its ``body`` already read) with ``server``; blocks the
    calling (worker) thread, which runs the handlers' database work meanwhile."""
    return async_to_sync(_exchange)(
        server, _scope(request), body, security_settings(request), max_body_bytes
    )

"""The client against a real server: pytest-django's live server (a thread of this
process, on the test database: SQLite or PostgreSQL), an agent host with a token, and
the client's requests counted by a transport that wraps httpx's real one."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import Permission, User
from pytest_django.live_server_helper import LiveServer
from rest_framework.authtoken.models import Token

from sysprompt.accounts.services import agent_host_ensure
from sysprompt_client import AsyncClient, Client
from tests.client.isolated import run_isolated

TEMPLATE = "You work in [prompt:cwd].\n[file:AGENTS.md]\n"
REFERENCES = ("GET", "/api/system-prompt/references")
"""The request a new default client sends before its first build: which host-local
types the server leaves to the host (none, from this server: it is not asked again for
five minutes)."""


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """An ``async def`` test runs on an event loop of its own, in a thread of its own:
    Playwright's sync API leaves a loop running on the main thread, where another loop
    cannot start (after a browser test, a test run by anyio's plugin would fail)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    run_isolated(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True


class Counting(httpx.BaseTransport):
    """httpx's real transport, recording ``(method, path)`` of every request (and the
    requests themselves in ``sent``)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests: list[tuple[str, str]] = []
        self.sent: list[httpx.Request] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.requests.append((request.method, request.url.path))
            self.sent.append(request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class AsyncCounting(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[tuple[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Server:
    url: str
    token: str
    author_token: str
    cwd: str

    def api(self, method: str, path: str, *, author: bool = False, **kwargs: Any) -> Any:
        """One request to the server outside the client under test (another host, or
        a prompt author); the decoded answer, asserting success."""
        token = self.author_token if author else self.token
        response = httpx.request(
            method, self.url + path, headers={"Authorization": f"Token {token}"}, **kwargs
        )
        assert response.is_success, response.text
        return response.json() if response.content else None

    def set_template(self, text: str) -> None:
        self.api("PUT", "/api/system-prompt", author=True, json={"template": text})


@pytest.fixture
def server(live_server: LiveServer, transactional_db: None, workdir: Path) -> Server:
    host = agent_host_ensure(name="client-host")
    author = User.objects.create_user("client-author")
    author.user_permissions.add(Permission.objects.get(codename="change_templateversion"))
    author_token, _ = Token.objects.get_or_create(user=author)
    served = Server(live_server.url, host.token, author_token.key, str(workdir))
    served.set_template(TEMPLATE)
    return served


MakeClient = Callable[..., tuple[Client, Counting]]


@pytest.fixture
def make_client(server: Server) -> Iterator[MakeClient]:
    """``make_client(**options)`` → a client of the live server and its counter."""
    made: list[Client] = []

    def make(**options: Any) -> tuple[Client, Counting]:
        counting = Counting()
        options.setdefault("base_url", server.url)
        options.setdefault("token", server.token)
        client = Client(transport=counting, **options)
        made.append(client)
        return client, counting

    yield make
    for client in made:
        client.close()


def async_client(server: Server, **options: Any) -> tuple[AsyncClient, AsyncCounting]:
    counting = AsyncCounting()
    return AsyncClient(server.url, server.token, transport=counting, **options), counting


def expected_prompt(server: Server) -> str:
    return f"You work in {server.cwd}.\nRun the tests before you commit.\n"

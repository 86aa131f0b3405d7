"""A default ``Client`` does the right thing on either deployment (agent-hosts.md,
"Host-local values"): the server's references answer says which host-local types it
leaves to the host (``host_resolves``), and the client resolves exactly those on the
host and sends them; against a server that resolves everything itself, it sends no
values, and after the first build it does not even ask. ``resolve_locally=True`` and
``False`` force either direction.

The server is a real ``manage.py runserver`` process (``tests/client/served.py``),
restarted with each ``SERVER_RESOLVES``; the agent host works in a real git repository
of its own on a branch, with a modified file and an ``AGENTS.md``
(``test_central_deployment.host_project``). As a central deployment the server's
``ALLOWED_ROOTS`` is a directory it cannot read, so whatever of the host's reaches the
prompt came from the host.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from sysprompt_client import Client
from tests.client.served import RealServer
from tests.client.test_central_deployment import BRANCH, RULES, TEMPLATE, host_project, on_the_host

REFERENCES = "/api/system-prompt/references"


class Recording(httpx.BaseTransport):
    """httpx's real transport, keeping ``(method, path, JSON body or None)`` of each request."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[tuple[str, str, Any]] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        with self.lock:
            self.sent.append((request.method, request.url.path, body))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _ in self.sent]

    def values(self) -> list[set[str] | None]:
        """The ``values`` keys of each build request (None: no ``values`` sent)."""
        return [
            None if "values" not in body else set(body["values"])
            for method, path, body in self.sent
            if method == "POST" and isinstance(body, dict)
        ]


@dataclass
class Deployment:
    server: RealServer
    host: Path
    unreadable: Path
    running: tuple[str | None] | None = None

    def start(self, server_resolves: str | None) -> None:
        """Restart the server: ``None`` is the default (one machine: it may read the
        host's directory); anything else a central deployment that reads nothing of it.
        A server already running so is kept (the tests are ordered to restart rarely)."""
        if self.running == (server_resolves,):
            return
        self.running = (server_resolves,)
        self.server.stop()
        if server_resolves is None:
            self.server.env.pop("SYSPROMPT_SERVER_RESOLVES", None)
            self.server.env["SYSPROMPT_ALLOWED_ROOTS"] = str(self.host.parent)
        else:
            self.server.env["SYSPROMPT_SERVER_RESOLVES"] = server_resolves
            self.server.env["SYSPROMPT_ALLOWED_ROOTS"] = str(self.unreadable)
        self.server.start()

    def client(self, **options: Any) -> tuple[Client, Recording]:
        recording = Recording()
        client = Client(self.server.url, self.server.token, transport=recording, **options)
        return client, recording


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("default-host-values")
    server = RealServer(folder / "server")
    server.manage(
        "shell",
        "-c",
        f"from sysprompt.prompts.services import template_save; template_save(text={TEMPLATE!r})",
    )
    unreadable = folder / "server-roots"
    unreadable.mkdir(mode=0)
    try:
        yield Deployment(server, host_project(folder / "host"), unreadable)
    finally:
        server.close()
        unreadable.chmod(0o700)


def test_default_client_on_a_central_server_sends_the_hosts_values(
    deployment: Deployment,
) -> None:
    deployment.start(server_resolves="")
    client, recording = deployment.client()

    with client:
        result = client.system_prompt("central-default", cwd=str(deployment.host), model="m")

    assert result.text == on_the_host(deployment.host)
    assert result.text is not None
    assert f"on the branch {BRANCH}." in result.text
    assert "Uncommitted changes:\n M app.py\n" in result.text
    assert RULES in result.text
    assert recording.paths() == [
        f"GET {REFERENCES}",
        "POST /api/conversations/central-default/system-prompt/resolve",
    ]
    # Exactly the references of the types the server leaves to the host: not prompt:cwd,
    # which is the request's cwd whatever the setting.
    assert recording.values() == [{"system:os", "git:branch", "git:status", "file:AGENTS.md"}]


def test_resolve_locally_false_never_asks_nor_sends(deployment: Deployment) -> None:
    deployment.start(server_resolves="")
    client, recording = deployment.client(resolve_locally=False)

    with client:
        result = client.system_prompt("central-never", cwd=str(deployment.host), model="m")

    assert recording.paths() == ["POST /api/conversations/central-never/system-prompt/resolve"]
    assert recording.values() == [None]
    assert result.text is not None and BRANCH not in result.text and RULES not in result.text


def test_default_client_resolves_only_the_types_the_server_leaves_to_it(
    deployment: Deployment,
) -> None:
    deployment.start(server_resolves="system")
    client, recording = deployment.client()

    with client:
        result = client.system_prompt("central-system", cwd=str(deployment.host), model="m")

    assert result.text == on_the_host(deployment.host)
    assert recording.values() == [{"git:branch", "git:status", "file:AGENTS.md"}]


def test_default_client_on_a_one_machine_server_sends_nothing_it_need_not(
    deployment: Deployment,
) -> None:
    deployment.start(server_resolves=None)
    client, recording = deployment.client()

    with client:
        first = client.system_prompt("one-machine-1", cwd=str(deployment.host), model="m")
        second = client.system_prompt("one-machine-2", cwd=str(deployment.host), model="m")
        later = client.system_prompt("one-machine-2", cwd=str(deployment.host), model="m")

    assert first.text == second.text == later.text == on_the_host(deployment.host)
    assert recording.values() == [None, None]  # no values: the server read them itself
    # One references request, on the first build only: it said it resolves everything.
    assert recording.paths() == [
        f"GET {REFERENCES}",
        "POST /api/conversations/one-machine-1/system-prompt/resolve",
        "POST /api/conversations/one-machine-2/system-prompt/resolve",
    ]


def test_resolve_locally_true_sends_every_host_local_value(deployment: Deployment) -> None:
    deployment.start(server_resolves=None)
    client, recording = deployment.client(resolve_locally=True)

    with client:
        client.system_prompt("always-1", cwd=str(deployment.host), model="m")
        result = client.system_prompt("always-2", cwd=str(deployment.host), model="m")

    assert result.text == on_the_host(deployment.host)
    every = {"prompt:cwd", "system:os", "git:branch", "git:status", "file:AGENTS.md"}
    assert recording.values() == [every, every]
    assert [path for path in recording.paths() if path.endswith(REFERENCES)] == [
        f"GET {REFERENCES}",
        f"GET {REFERENCES}",
    ]

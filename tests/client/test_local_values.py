"""Host-local values (agent-hosts.md §0): resolved on the host, sent as ``values``.

The live-server tests need the server's side of §0 (``GET
/api/system-prompt/references`` and ``values`` in resolve); they are skipped while the
server answers 404 there, and run by themselves once it is built.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from pytest_django import Settings

from sysprompt_client import Client, is_host_local, resolve_host_values
from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated


def test_host_local_keys() -> None:
    local = ["prompt:cwd", "git:branch", "git:status", "file:AGENTS.md", "system:time"]
    remote = ["prompt:model", "prompt:provider", "var:x", "tool:shell", "fragment:core", "git:"]
    assert all(map(is_host_local, local))
    assert not any(map(is_host_local, remote))


def test_resolve_host_values_with_the_core_resolvers(workdir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    values = resolve_host_values(
        [
            "prompt:cwd",
            "prompt:model",
            "file:AGENTS.md",
            f"file:{outside}",
            "git:branch",
            "system:os",
            "var:x",
        ],
        cwd=str(workdir),
        model="m",
    )
    assert set(values) == {
        "prompt:cwd",
        "file:AGENTS.md",
        f"file:{outside}",
        "git:branch",
        "system:os",
    }
    assert values["prompt:cwd"] == str(workdir)
    assert values["file:AGENTS.md"] == "Run the tests before you commit."
    assert values[f"file:{outside}"] is None  # outside the allowed roots (the cwd)
    assert values["git:branch"] is None  # not a repository
    assert values["system:os"]
    wider = resolve_host_values([f"file:{outside}"], cwd=str(workdir), allowed_roots=[tmp_path])
    assert wider == {f"file:{outside}": "secret"}


PROMPT = {"conversation_id": "c", "system_prompt": "P", "sha256": None, "template_version": 1}


def test_values_sent_with_references_cached_by_etag(workdir: Path) -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/references"):
            if request.headers.get("if-none-match") == '"r1"':
                return httpx.Response(304)
            refs = ["file:AGENTS.md", "prompt:model", "system:os"]
            return httpx.Response(200, json={"references": refs}, headers={"ETag": '"r1"'})
        return httpx.Response(201, json={**PROMPT, "system_prompt": None})

    transport = httpx.MockTransport(handle)
    with Client("http://s.test", "t", transport=transport, resolve_locally=True) as client:
        client.system_prompt("c1", cwd=str(workdir), provider="openai", model="gpt")
        client.system_prompt("c2", cwd=str(workdir), provider="openai", model="gpt")
    refs, resolve = "/api/system-prompt/references", "/api/conversations/{}/system-prompt/resolve"
    assert [r.url.path for r in seen] == [refs, resolve.format("c1"), refs, resolve.format("c2")]
    assert dict(seen[0].url.params) == {"provider": "openai", "model": "gpt"}
    assert seen[2].headers["if-none-match"] == '"r1"'
    for body in (json.loads(seen[1].content), json.loads(seen[3].content)):
        assert set(body["values"]) == {"file:AGENTS.md", "system:os"}
        assert body["values"]["file:AGENTS.md"] == "Run the tests before you commit."


def test_without_references_on_the_server_nothing_is_sent(workdir: Path) -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/references"):
            return httpx.Response(404, json={"detail": "Not found."})
        return httpx.Response(201, json=PROMPT)

    transport = httpx.MockTransport(handle)
    with Client("http://s.test", "t", transport=transport, resolve_locally=True) as client:
        assert client.system_prompt("c1", cwd=str(workdir)).text == "P"
        client.system_prompt("c2", cwd=str(workdir))
    assert "values" not in json.loads(seen[1].content)
    assert len(seen) == 3  # the 404 is remembered: no second references request


@pytest.fixture
def references_served(server: Server) -> None:
    response = httpx.get(
        f"{server.url}/api/system-prompt/references",
        headers={"Authorization": f"Token {server.token}"},
    )
    if response.status_code == 404:
        pytest.skip(
            "the server answers 404 for GET /api/system-prompt/references: its side of "
            "host-local values (agent-hosts.md §0) is not built yet"
        )


def test_host_values_reach_the_prompt_when_the_server_may_not_read(
    server: Server, make_client: MakeClient, references_served: None, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "SERVER_RESOLVES": ["system"]}
    local, counting = make_client(resolve_locally=True)
    result = local.system_prompt("conv-local", cwd=server.cwd)
    assert result.text == f"You work in {server.cwd}.\nRun the tests before you commit.\n"
    resolve = counting.sent[-1]
    # As the server's own file resolver gives it: one trailing line ending removed.
    assert json.loads(resolve.content)["values"]["file:AGENTS.md"] == (
        "Run the tests before you commit."
    )
    # Without the host's values the server does not read the file itself,
    never, _ = make_client(resolve_locally=False)
    assert "Run the tests" not in (never.system_prompt("conv-never", cwd=server.cwd).text or "")
    # and a default client sends them: the server says it leaves file: to the host.
    default, _ = make_client()
    assert default.system_prompt("conv-default", cwd=server.cwd).text == result.text


def test_references_list_and_etag(
    server: Server, make_client: MakeClient, references_served: None
) -> None:
    client, counting = make_client(resolve_locally=True)
    refs = client.references(provider="anthropic", model="claude")
    assert {"prompt:cwd", "file:AGENTS.md"} <= set(refs)
    first = counting.sent[-1]
    assert client.references(provider="anthropic", model="claude") == refs
    etag_sent = counting.sent[-1].headers.get("if-none-match")
    assert first is not counting.sent[-1] and etag_sent


def test_default_async_client_sends_what_the_server_leaves_to_the_host(
    server: Server, references_served: None, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "SERVER_RESOLVES": ["system"]}

    async def main() -> str | None:
        client, counting = async_client(server)
        async with client:
            result = await client.system_prompt("conv-async-default", cwd=server.cwd)
        assert counting.requests[0] == ("GET", "/api/system-prompt/references")
        return result.text

    assert run_isolated(main()) == f"You work in {server.cwd}.\nRun the tests before you commit.\n"

"""``/mcp`` against a real server: gunicorn from ``gunicorn.conf.py`` (threaded WSGI
workers, DEBUG off, a SQLite file of its own), driven by the official MCP SDK's
Streamable HTTP client (``mcp.client.streamable_http``) and, for what a client would
not send, by plain HTTP requests.

One server without ``SYSPROMPT_MCP_WRITE`` (read-only tools) and one with it, on the
same database. The attacks: no token, a bad token, another host's conversation, a write
tool by a host, a forged Host or Origin header, an oversized body, other methods.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from tests.client.isolated import run_isolated
from tests.mcp.served import Deployment, Server, deploy, gunicorn, mcp_session

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a gunicorn server process")

T = TypeVar("T")
READ_TOOLS = {
    "get_system_prompt",
    "compact_system_prompt",
    "list_fragments",
    "get_fragment",
    "list_prompts",
    "list_labels",
}
WRITE_TOOLS = {"save_fragment", "delete_fragment", "create_release", "set_label"}
HOST_TOOLS = READ_TOOLS - {"list_labels"}
"""What an agent host's token may use: neither the labels nor any write."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    return deploy(tmp_path_factory.mktemp("mcp-http"))


@pytest.fixture(scope="module")
def server(deployment: Deployment) -> Iterator[Server]:
    with gunicorn(deployment, "read-only") as running:
        yield running


@pytest.fixture(scope="module")
def write_server(deployment: Deployment) -> Iterator[Server]:
    with gunicorn(deployment, "write", SYSPROMPT_MCP_WRITE="true") as running:
        yield running


def session_run(
    server: Server, token: str | None, work: Callable[[ClientSession], Awaitable[T]]
) -> T:
    """``work`` with an initialized SDK session, on an event loop of its own."""

    async def main() -> T:
        async with mcp_session(server, token) as session:
            return await work(session)

    return run_isolated(main())


def mcp_failure(work: Callable[[], object]) -> MCPError:
    """The MCPError ``work`` fails with (the SDK raises it inside exception groups)."""
    with pytest.raises(BaseException) as caught:
        work()
    found: list[MCPError] = []

    def walk(error: BaseException) -> None:
        if isinstance(error, MCPError):
            found.append(error)
        for inner in getattr(error, "exceptions", ()):
            walk(inner)

    walk(caught.value)
    assert found, f"no MCPError in {caught.value!r}"
    return found[0]


def rest(server: Server, token: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(
        method,
        f"{server.url}{path}",
        headers={"Authorization": f"Token {token}"},
        timeout=60,
        **kwargs,
    )


def text_of(result: types.GetPromptResult) -> str:
    assert len(result.messages) == 1
    message = result.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


def tool_json(result: types.CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return dict(result.structured_content)


# --- authentication -----------------------------------------------------------------------


def test_mcp_without_token_is_401_json(server: Server) -> None:
    answer = httpx.post(server.mcp, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)

    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert answer.json()["error"]["message"] == "Authentication credentials were not provided."


def test_mcp_sdk_client_without_token_fails_with_the_api_message(server: Server) -> None:
    error = mcp_failure(lambda: session_run(server, None, lambda s: s.list_prompts()))

    assert error.message == "Authentication credentials were not provided."


def test_mcp_bad_token_is_401(server: Server) -> None:
    error = mcp_failure(lambda: session_run(server, "0" * 40, lambda s: s.list_prompts()))

    assert error.message == "Invalid token."


def test_mcp_session_cookie_alone_is_401(server: Server, deployment: Deployment) -> None:
    answer = httpx.post(
        server.mcp,
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Cookie": "sessionid=whatever; csrftoken=x"},
        timeout=30,
    )

    assert answer.status_code == 401


def test_mcp_token_keyword_is_accepted_as_the_api_takes_it(
    server: Server, deployment: Deployment
) -> None:
    answer = httpx.post(
        server.mcp,
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Token {deployment.tokens['host-a']}"},
        timeout=30,
    )

    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["serverInfo"]["name"] == "sysprompt"


# --- prompts --------------------------------------------------------------------------------


def test_mcp_prompts_list_has_the_system_prompt_and_each_fragment(
    server: Server, deployment: Deployment
) -> None:
    listed = session_run(server, deployment.tokens["host-a"], lambda s: s.list_prompts())

    names = [prompt.name for prompt in listed.prompts]
    assert names[0] == "system-prompt"
    assert "fragment/greeting" in names
    system = listed.prompts[0]
    assert {a.name: a.required for a in system.arguments or []} == {
        "conversation_id": True,
        "cwd": False,
        "model": False,
        "provider": False,
        "label": False,
        "prompt": False,
    }


def test_mcp_system_prompt_first_and_later_turns_answer_the_same_bytes(
    server: Server, deployment: Deployment
) -> None:
    token = deployment.tokens["host-a"]
    arguments = {"conversation_id": "mcp-turns", "cwd": deployment.cwd, "model": "gpt-5"}

    async def turns(session: ClientSession) -> list[types.GetPromptResult]:
        first = await session.get_prompt("system-prompt", arguments)
        later = await session.get_prompt("system-prompt", arguments)
        without_cwd = await session.get_prompt("system-prompt", {"conversation_id": "mcp-turns"})
        return [first, later, without_cwd]

    first, later, without_cwd = session_run(server, token, turns)

    stored = rest(server, token, "GET", "/api/conversations/mcp-turns/system-prompt").json()
    assert text_of(first) == stored["system_prompt"]
    assert "Served over MCP." in stored["system_prompt"]
    assert deployment.cwd in stored["system_prompt"]
    assert text_of(later) == text_of(first)
    assert text_of(without_cwd) == text_of(first)
    assert first.description == later.description == without_cwd.description
    assert first.description is not None and stored["sha256"] in first.description


def test_mcp_later_turn_keeps_the_frozen_prompt_after_the_template_changes(
    server: Server, deployment: Deployment
) -> None:
    host, author = deployment.tokens["host-a"], deployment.tokens["author"]
    arguments = {"conversation_id": "mcp-frozen", "cwd": deployment.cwd}
    first = session_run(server, host, lambda s: s.get_prompt("system-prompt", arguments))
    saved = rest(
        server, author, "PUT", "/api/system-prompt", json={"template": "A new template.\n"}
    )
    assert saved.status_code == 200, saved.text

    later = session_run(server, host, lambda s: s.get_prompt("system-prompt", arguments))
    fresh = session_run(
        server,
        host,
        lambda s: s.get_prompt(
            "system-prompt", {"conversation_id": "mcp-frozen-2", "cwd": deployment.cwd}
        ),
    )

    assert text_of(later) == text_of(first)
    assert text_of(fresh) == "A new template.\n"


def test_mcp_sdk_default_client_on_the_2026_protocol_gets_the_same_bytes(
    server: Server, deployment: Deployment
) -> None:
    """The SDK's ``Client`` negotiates the newest protocol (2026-07-28: one
    self-contained POST per request, no handshake) where the server speaks it: the
    stateless endpoint answers it too, with the prompt the handshake session froze."""
    token = deployment.tokens["host-a"]
    arguments = {"conversation_id": "mcp-two-eras", "cwd": deployment.cwd}
    legacy = session_run(server, token, lambda s: s.get_prompt("system-prompt", arguments))

    async def modern() -> tuple[str, types.GetPromptResult]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(server.mcp, http_client=http), mode="auto") as client,
        ):
            answer = await client.get_prompt("system-prompt", arguments)
            return str(client.protocol_version), answer

    version, answer = run_isolated(modern())

    assert version == "2026-07-28"
    assert text_of(answer) == text_of(legacy)
    assert answer.description == legacy.description


def test_mcp_concurrent_turns_of_two_hosts_each_get_their_own(
    server: Server, deployment: Deployment
) -> None:
    """Sixteen sessions at once on one worker of four threads, two hosts: every first
    turn stores one prompt per conversation, every later turn answers its own bytes."""
    hosts = ("host-a", "host-b")

    async def one(index: int, texts: dict[int, list[str]]) -> None:
        host = hosts[index % 2]
        arguments = {"conversation_id": f"mcp-burst-{index % 4}", "cwd": deployment.cwd}
        async with mcp_session(server, deployment.tokens[host]) as session:
            for _ in range(3):
                answer = await session.get_prompt("system-prompt", arguments)
                texts.setdefault(index % 4, []).append(text_of(answer))

    async def burst() -> dict[int, list[str]]:
        texts: dict[int, list[str]] = {}
        async with anyio.create_task_group() as group:
            for index in range(16):
                group.start_soon(one, index, texts)
        return texts

    texts = run_isolated(burst())

    assert sorted(texts) == [0, 1, 2, 3]
    for conversation, answers in texts.items():
        assert len(answers) == 12
        assert len(set(answers)) == 1, conversation
    for conversation in range(4):
        owner = deployment.tokens[hosts[conversation % 2]]
        stored = rest(
            server, owner, "GET", f"/api/conversations/mcp-burst-{conversation}/system-prompt"
        )
        assert stored.status_code == 200
        assert stored.json()["system_prompt"] == texts[conversation][0]


def test_mcp_first_turn_without_cwd_is_refused_naming_cwd(
    server: Server, deployment: Deployment
) -> None:
    error = mcp_failure(
        lambda: session_run(
            server,
            deployment.tokens["host-a"],
            lambda s: s.get_prompt("system-prompt", {"conversation_id": "mcp-no-cwd"}),
        )
    )

    assert error.code == types.INVALID_PARAMS
    assert error.message.startswith("cwd: ")
    assert (
        rest(
            server,
            deployment.tokens["host-a"],
            "GET",
            "/api/conversations/mcp-no-cwd/system-prompt",
        ).status_code
        == 404
    )


def test_mcp_other_hosts_conversation_is_hidden_and_its_id_free_as_in_the_api(
    server: Server, deployment: Deployment
) -> None:
    arguments = {"conversation_id": "mcp-owned-by-a", "cwd": deployment.cwd}
    theirs = session_run(
        server, deployment.tokens["host-a"], lambda s: s.get_prompt("system-prompt", arguments)
    )

    def attempt(given: dict[str, str]) -> MCPError:
        return mcp_failure(
            lambda: session_run(
                server,
                deployment.tokens["host-b"],
                lambda s: s.get_prompt("system-prompt", given),
            )
        )

    # Without cwd: as for a conversation that does not exist (no existence oracle).
    without_cwd = attempt({"conversation_id": "mcp-owned-by-a"})
    assert without_cwd.message.startswith("cwd: ")
    assert without_cwd.message == attempt(
        {"conversation_id": "mcp-owned-by-nobody"}
    ).message.replace("mcp-owned-by-nobody", "mcp-owned-by-a")
    tool = session_run(
        server,
        deployment.tokens["host-b"],
        lambda s: s.call_tool("get_system_prompt", {"conversation_id": "mcp-owned-by-a"}),
    )
    api = rest(
        server,
        deployment.tokens["host-b"],
        "GET",
        "/api/conversations/mcp-owned-by-a/system-prompt",
    )
    assert api.status_code == 404
    assert tool.is_error
    assert tool_json(tool) == {"error": without_cwd.message, "status": 400}
    # Ids are scoped to the agent host: host-b's first turn on the id is its own conversation.
    mine = session_run(
        server, deployment.tokens["host-b"], lambda s: s.get_prompt("system-prompt", arguments)
    )
    later = rest(
        server,
        deployment.tokens["host-b"],
        "POST",
        "/api/conversations/mcp-owned-by-a/system-prompt/resolve",
        json={"cwd": deployment.cwd},
    )
    assert later.status_code == 200
    assert text_of(mine) == later.json()["system_prompt"]
    again = session_run(
        server, deployment.tokens["host-a"], lambda s: s.get_prompt("system-prompt", arguments)
    )
    assert text_of(again) == text_of(theirs)


def test_mcp_fragment_prompt_answers_the_variant_provider_and_model_get(
    server: Server, deployment: Deployment
) -> None:
    async def variants(session: ClientSession) -> list[str]:
        plain = await session.get_prompt("fragment/greeting", {})
        openai = await session.get_prompt(
            "fragment/greeting", {"provider": "openai", "model": "gpt-5"}
        )
        other = await session.get_prompt("fragment/greeting", {"provider": "anthropic"})
        return [text_of(plain), text_of(openai), text_of(other)]

    answers = session_run(server, deployment.tokens["host-a"], variants)

    assert answers == [
        "Hello from the library.",
        "Hello, OpenAI models.",
        "Hello from the library.",
    ]


def test_mcp_fragment_prompt_is_rendered_with_its_includes(
    server: Server, deployment: Deployment
) -> None:
    answer = session_run(
        server,
        deployment.tokens["host-a"],
        lambda s: s.get_prompt("fragment/outer", {"provider": "openai", "model": "gpt-5"}),
    )

    assert text_of(answer) == "Outer for gpt-5: Hello, OpenAI models."
    assert answer.description is not None and "version 1" in answer.description


def test_mcp_unknown_fragment_is_an_error_with_the_api_message(
    server: Server, deployment: Deployment
) -> None:
    token = deployment.tokens["host-a"]
    api = rest(
        server,
        token,
        "POST",
        "/api/library/preview",
        json={"cwd": deployment.cwd, "fragment": "no-such-fragment"},
    )

    error = mcp_failure(
        lambda: session_run(server, token, lambda s: s.get_prompt("fragment/no-such-fragment", {}))
    )

    assert api.status_code == 400
    assert error.code == types.INVALID_PARAMS
    assert error.message == f"fragment: {api.json()['fragment'][0]}"
    assert error.data == {"status": 400}


# --- tools ----------------------------------------------------------------------------------


def test_mcp_tools_are_read_only_without_the_operator_setting(
    server: Server, deployment: Deployment
) -> None:
    async def tools(session: ClientSession) -> tuple[set[str], types.CallToolResult | MCPError]:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        try:
            called: types.CallToolResult | MCPError = await session.call_tool(
                "save_fragment", {"name": "greeting", "text": "Overwritten."}
            )
        except MCPError as error:
            called = error
        return listed, called

    listed, called = session_run(server, deployment.tokens["author"], tools)

    assert listed == READ_TOOLS
    assert isinstance(called, MCPError) or called.is_error
    fragment = rest(server, deployment.tokens["author"], "GET", "/api/library/fragments/greeting")
    assert fragment.json()["text"] == "Hello from the library."


def test_mcp_get_system_prompt_tool_gives_text_and_metadata(
    server: Server, deployment: Deployment
) -> None:
    token = deployment.tokens["host-a"]
    arguments = {"conversation_id": "mcp-tool", "cwd": deployment.cwd, "provider": "openai"}

    result = session_run(server, token, lambda s: s.call_tool("get_system_prompt", arguments))

    stored = rest(server, token, "GET", "/api/conversations/mcp-tool/system-prompt").json()
    assert not result.is_error
    data = tool_json(result)
    assert data["text"] == stored["system_prompt"]
    assert data["sha256"] == stored["sha256"]
    assert data["template_version"] == stored["template_version"]
    assert data["label"] == stored["label"]
    assert data["provider"] == "openai"
    content = result.content[0]
    assert isinstance(content, types.TextContent) and content.text == stored["system_prompt"]


def test_mcp_compact_tool_stores_the_fresh_prompt_and_adds_the_instructions(
    server: Server, deployment: Deployment
) -> None:
    token = deployment.tokens["host-a"]
    arguments = {"conversation_id": "mcp-compact", "cwd": deployment.cwd}

    async def compact(session: ClientSession) -> types.CallToolResult:
        await session.get_prompt("system-prompt", arguments)
        return await session.call_tool("compact_system_prompt", arguments)

    result = session_run(server, token, compact)

    stored = rest(server, token, "GET", "/api/conversations/mcp-compact/system-prompt").json()
    data = tool_json(result)
    assert data["text"] == stored["system_prompt"]
    assert data["compaction_prompt"].startswith(stored["system_prompt"] + "\n\n")
    assert "compacted" in data["compaction_prompt"]


def test_mcp_compact_with_only_the_conversation_id_keeps_the_frozen_context(
    server: Server, deployment: Deployment
) -> None:
    """The first turn is for gpt-5 on openai; a compaction naming only the conversation
    keeps that model (and its variant of the fragment), the provider and the cwd, and
    says so; the next turn with the same model is no mismatch."""
    host, author = deployment.tokens["host-a"], deployment.tokens["author"]
    template = {"template": "[prompt:model] [prompt:provider]: [fragment:greeting]"}
    assert rest(server, author, "PUT", "/api/system-prompt", json=template).status_code == 200
    context = {"cwd": deployment.cwd, "model": "gpt-5", "provider": "openai"}
    conversation = {"conversation_id": "mcp-compact-kept"}

    async def turns(session: ClientSession) -> list[types.CallToolResult]:
        first = await session.call_tool("get_system_prompt", {**conversation, **context})
        compacted = await session.call_tool("compact_system_prompt", conversation)
        later = await session.call_tool("get_system_prompt", {**conversation, **context})
        return [first, compacted, later]

    first, compacted, later = session_run(server, host, turns)

    data = tool_json(compacted)
    assert not compacted.is_error, data
    assert tool_json(first)["text"] == "gpt-5 openai: Hello, OpenAI models."
    assert data["text"] == tool_json(first)["text"]
    assert {key: data[key] for key in context} == context
    assert data["context_kept"] == ["cwd", "model", "provider", "tools", "variables", "override"]
    stored = rest(server, host, "GET", "/api/conversations/mcp-compact-kept/system-prompt").json()
    assert (stored["model"], stored["provider"]) == ("gpt-5", "openai")
    assert tool_json(later)["context_mismatch"] == []


def test_mcp_fragment_tools_list_and_get(server: Server, deployment: Deployment) -> None:
    async def fragments(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any]]:
        listed = await session.call_tool("list_fragments", {})
        got = await session.call_tool("get_fragment", {"name": "greeting", "provider": "OpenAI"})
        return tool_json(listed), tool_json(got)

    listed, got = session_run(server, deployment.tokens["host-a"], fragments)

    greeting = next(f for f in listed["fragments"] if f["name"] == "greeting")
    assert {"provider": None, "model": None} in greeting["variants"]
    assert {"provider": "openai", "model": None} in greeting["variants"]
    assert got["text"] == "Hello, OpenAI models."
    assert (got["provider"], got["model"]) == ("openai", None)


def test_mcp_list_labels_is_for_authors(server: Server, deployment: Deployment) -> None:
    async def tools(session: ClientSession) -> set[str]:
        return {tool.name for tool in (await session.list_tools()).tools}

    listed = session_run(server, deployment.tokens["host-a"], tools)
    by_host = session_run(
        server, deployment.tokens["host-a"], lambda s: s.call_tool("list_labels", {})
    )
    by_author = session_run(
        server, deployment.tokens["author"], lambda s: s.call_tool("list_labels", {})
    )

    api = rest(server, deployment.tokens["host-a"], "GET", "/api/labels")
    assert api.status_code == 403
    assert listed == HOST_TOOLS  # not listed to a host; refused if called all the same
    assert by_host.is_error
    assert tool_json(by_host) == {"error": api.json()["detail"], "status": 403}
    assert not by_author.is_error
    names = [label["name"] for label in tool_json(by_author)["labels"]]
    assert "production" in names


# --- write tools (SYSPROMPT_MCP_WRITE=true) ---------------------------------------------------


def test_mcp_write_tools_listed_when_enabled_and_work_for_an_author(
    write_server: Server, deployment: Deployment
) -> None:
    async def save(session: ClientSession) -> tuple[set[str], types.CallToolResult]:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        saved = await session.call_tool(
            "save_fragment", {"name": "mcp/written", "text": "Written over MCP."}
        )
        return listed, saved

    listed, saved = session_run(write_server, deployment.tokens["author"], save)

    assert listed == READ_TOOLS | WRITE_TOOLS
    assert not saved.is_error, saved.content
    fragment = rest(
        write_server, deployment.tokens["author"], "GET", "/api/library/fragments/mcp/written"
    )
    assert fragment.status_code == 200
    assert fragment.json()["text"] == "Written over MCP."
    assert tool_json(saved)["version"] == fragment.json()["version"]


def test_mcp_write_tools_are_refused_to_a_host_without_the_permission(
    write_server: Server, deployment: Deployment
) -> None:
    token = deployment.tokens["host-a"]

    async def attempts(session: ClientSession) -> tuple[set[str], list[types.CallToolResult]]:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        results = [
            await session.call_tool("save_fragment", {"name": "greeting", "text": "Hijacked."}),
            await session.call_tool("delete_fragment", {"name": "greeting"}),
            await session.call_tool("create_release", {"message": "by a host"}),
            await session.call_tool("set_label", {"name": "production", "target": "latest"}),
        ]
        return listed, results

    listed, results = session_run(write_server, token, attempts)

    assert listed == HOST_TOOLS  # listed: only what the token may use
    api = rest(
        write_server,
        token,
        "PUT",
        "/api/library/fragments/greeting",
        json={"text": "Hijacked."},
    )
    assert api.status_code == 403
    for result in results:
        assert result.is_error
        assert tool_json(result)["status"] == 403
    assert tool_json(results[0])["error"] == api.json()["detail"]
    author = deployment.tokens["author"]
    fragment = rest(write_server, author, "GET", "/api/library/fragments/greeting").json()
    assert (fragment["text"], fragment["deleted"]) == ("Hello from the library.", False)
    assert rest(write_server, author, "GET", "/api/releases").json()["results"] == []


# --- the transport's protections -----------------------------------------------------------


def test_mcp_wrong_host_header_is_refused_as_json(server: Server, deployment: Deployment) -> None:
    answer = httpx.post(
        server.mcp,
        json=INITIALIZE,
        headers={
            **MCP_HEADERS,
            "Host": "attacker.example",
            "Authorization": f"Bearer {deployment.tokens['host-a']}",
        },
        timeout=30,
    )

    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    assert "Invalid Host header" in answer.json()["error"]["message"]


def test_mcp_sdk_client_with_a_forged_host_fails(server: Server, deployment: Deployment) -> None:
    async def forged() -> object:
        async with mcp_session(
            server, deployment.tokens["host-a"], Host="attacker.example"
        ) as session:
            return await session.list_prompts()

    error = mcp_failure(lambda: run_isolated(forged()))

    assert "Invalid Host header" in error.message


def test_mcp_cross_origin_request_is_refused(server: Server, deployment: Deployment) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {deployment.tokens['host-a']}"}

    foreign = httpx.post(
        server.mcp,
        json=INITIALIZE,
        headers={**headers, "Origin": "http://attacker.example"},
        timeout=30,
    )
    same = httpx.post(
        server.mcp, json=INITIALIZE, headers={**headers, "Origin": server.url}, timeout=30
    )

    assert foreign.status_code == 403
    assert foreign.headers["content-type"] == "application/json"
    assert foreign.json()["error"]["message"] == "Invalid Origin header"
    assert same.status_code == 200, same.text


def test_mcp_oversized_body_is_refused_before_it_is_read(
    server: Server, deployment: Deployment
) -> None:
    headers = {
        **MCP_HEADERS,
        "Authorization": f"Bearer {deployment.tokens['host-a']}",
        "Content-Type": "application/json",
    }
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * 3_000_000 + b'"}'

    answer = httpx.post(server.mcp, content=huge, headers=headers, timeout=60)

    assert answer.status_code == 413
    assert answer.headers["content-type"] == "application/json"
    assert "limit" in answer.json()["error"]["message"]


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_mcp_other_methods_are_405_json(
    server: Server, deployment: Deployment, method: str
) -> None:
    answer = httpx.request(
        method,
        server.mcp,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {deployment.tokens['host-a']}"},
        timeout=30,
    )

    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"
    assert answer.headers["content-type"] == "application/json"


def test_mcp_invalid_json_is_a_json_rpc_error(server: Server, deployment: Deployment) -> None:
    answer = httpx.post(
        server.mcp,
        content=b"{not json",
        headers={
            **MCP_HEADERS,
            "Authorization": f"Bearer {deployment.tokens['host-a']}",
            "Content-Type": "application/json",
        },
        timeout=30,
    )

    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == types.PARSE_ERROR


@pytest.mark.parametrize(
    "database_url",
    ["postgres://postgres@127.0.0.1:1/none", "sqlite:////nonexistent-dir/db.sqlite3"],
)
def test_mcp_database_unreachable_is_503_json(
    deployment: Deployment, database_url: str, tmp_path: Path
) -> None:
    dead = Deployment(
        env={**deployment.env, "DATABASE_URL": database_url},
        folder=tmp_path,
        cwd=deployment.cwd,
        tokens=deployment.tokens,
    )

    with gunicorn(dead, "dead-database") as running:
        answer = httpx.post(
            running.mcp,
            json=INITIALIZE,
            headers={**MCP_HEADERS, "Authorization": f"Bearer {deployment.tokens['host-a']}"},
            timeout=30,
        )
        log = running.log.read_text(errors="replace")

    assert answer.status_code == 503
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["retry-after"].isdigit()
    assert answer.json()["error"]["message"] == "The database is unavailable; try again shortly."
    assert "Traceback" not in log
    assert "database unavailable" in log


MALFORMED = [
    ("a JSON-RPC batch", b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', {}, 400),
    ("a bare string", b'"tools/list"', {}, 400),
    ("no such method", b'{"jsonrpc":"2.0","id":1,"method":"nope"}', {}, 200),
    ("text/plain", b"{}", {"Content-Type": "text/plain"}, 400),
    (
        "accepting HTML only",
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        {"Accept": "text/html"},
        406,
    ),
]


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_mcp_malformed_requests_answer_a_json_rpc_error(
    server: Server, deployment: Deployment, body: bytes, headers: dict[str, str], status: int
) -> None:
    sent = {
        **MCP_HEADERS,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
        "Authorization": f"Bearer {deployment.tokens['host-a']}",
        **headers,
    }

    answer = httpx.post(server.mcp, content=body, headers=sent, timeout=30)

    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["message"]


def test_mcp_bad_arguments_answer_the_api_validation(
    server: Server, deployment: Deployment, tmp_path: Path
) -> None:
    token = deployment.tokens["host-a"]
    outside = str(tmp_path)  # a directory, not in SYSPROMPT_ALLOWED_ROOTS
    api = rest(
        server,
        token,
        "POST",
        "/api/conversations/mcp-outside/system-prompt/resolve",
        json={"cwd": outside},
    )

    bad_id = mcp_failure(
        lambda: session_run(
            server,
            token,
            lambda s: s.get_prompt(
                "system-prompt", {"conversation_id": "../etc", "cwd": deployment.cwd}
            ),
        )
    )
    tool = session_run(
        server,
        token,
        lambda s: s.call_tool(
            "get_system_prompt", {"conversation_id": "mcp-outside", "cwd": outside}
        ),
    )

    assert api.status_code == 400
    assert bad_id.data == {"status": 400}
    assert bad_id.message.startswith("conversation_id: ")
    assert tool.is_error
    assert tool_json(tool) == {"error": f"cwd: {api.json()['cwd'][0]}", "status": 400}


def test_mcp_server_log_has_no_traceback(server: Server, deployment: Deployment) -> None:
    """After the requests above (module order), the server logged no error but Django's
    own report of each forged Host header (``django.security.DisallowedHost``)."""
    lines = Path(server.log).read_text(errors="replace").splitlines()

    for number, line in enumerate(lines):
        if line.startswith("Traceback"):
            assert "django.security.DisallowedHost" in lines[number - 1], "\n".join(
                lines[max(0, number - 5) : number + 30]
            )
    assert not [line for line in lines if " ERROR " in line and "DisallowedHost" not in line]

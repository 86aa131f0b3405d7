"""``sysprompt-mcp`` over stdio, driven by the official ``mcp`` SDK's client, against a
real sysprompt server process set up as a central deployment.

The server (``tests/client/served.py``: ``manage.py runserver`` on a SQLite file of its
own) resolves no host-local value itself (``SERVER_RESOLVES`` empty) and may read
nothing of the host (``ALLOWED_ROOTS`` a directory of mode 000); the agent host's
working directory is a git repository on a branch of its own with an ``AGENTS.md``,
elsewhere. The MCP server is ``python -m sysprompt_client.mcp`` (what the
``sysprompt-mcp`` console script runs), launched by ``mcp.client.stdio`` with that
directory as ``SYSPROMPT_CWD``: the prompt it answers holds the host's branch and rules,
so the values were resolved on the host, by the client under the MCP server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from sysprompt_client.mcp import READ_TOOLS, WRITE_TOOLS
from tests.client.served import REPO, RealServer, free_port

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX agent host")

TEMPLATE = (
    "You are the team's coding assistant.\n"
    "You work on the branch [git:branch].\n"
    "[if file:AGENTS.md]\n"
    "[file:AGENTS.md]\n"
    "[endif]\n"
    "Model: [prompt:model].\n"
    "[fragment:mcp/for-model]\n"
)
BRANCH = "feature/mcp-host"
RULES = "Host-only rules: answer in haiku.\n"
PYTHONPATH = os.pathsep.join(
    str(REPO / part) for part in ("packages/core/src", "packages/client/src", ".")
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


@dataclass
class Deployment:
    server: RealServer
    author: str
    other_host: str
    host_dir: Path

    def api(self, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> Any:
        response = httpx.request(
            method,
            self.server.url + path,
            headers={"Authorization": f"Token {token or self.author}"},
            timeout=30,
            **kwargs,
        )
        assert response.is_success, response.text
        return response.json() if response.content else None

    def env(self, token: str | None = None, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", ""),
            "PYTHONPATH": PYTHONPATH,
            "SYSPROMPT_URL": self.server.url,
            "SYSPROMPT_TOKEN": token or self.server.token,
            "SYSPROMPT_CWD": str(self.host_dir),
            **extra,
        }

    def params(self, token: str | None = None, **extra: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "sysprompt_client.mcp"],
            env=self.env(token, **extra),
            cwd=str(self.host_dir),
        )


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("mcp-central")
    server = RealServer(folder / "server")
    server.manage(
        "shell",
        "-c",
        f"from sysprompt.prompts.services import template_save; template_save(text={TEMPLATE!r})",
    )
    author = server.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Permission, User\n"
        "from rest_framework.authtoken.models import Token\n"
        "user = User.objects.create_user('mcp-author')\n"
        "user.user_permissions.add(*Permission.objects.filter(codename__in="
        "['change_templateversion', 'publish_release']))\n"
        "print(Token.objects.create(user=user).key)",
    ).split()[-1]
    other_host = server.manage("create_agent_host", "other-host").strip().splitlines()[-1]
    unreadable = folder / "server-roots"
    unreadable.mkdir(mode=0)
    server.env["SYSPROMPT_ALLOWED_ROOTS"] = str(unreadable)
    server.env["SYSPROMPT_SERVER_RESOLVES"] = ""
    host_dir = tmp_path_factory.mktemp("agent-host") / "project"
    host_dir.mkdir()
    (host_dir / "AGENTS.md").write_text(RULES)
    git(host_dir, "init", "--quiet", f"--initial-branch={BRANCH}")
    git(host_dir, "add", "-A")
    git(host_dir, "commit", "--quiet", "-m", "first")
    server.start()
    try:
        yield Deployment(server, author, other_host, host_dir)
    finally:
        unreadable.chmod(0o700)
        server.close()


@asynccontextmanager
async def connected(params: StdioServerParameters, **options: Any) -> AsyncIterator[Client]:
    """The SDK's client on a new ``sysprompt-mcp`` process (its own response cache
    off: every call reaches the process)."""
    async with Client(params, cache=None, read_timeout_seconds=60, **options) as client:
        yield client


def text_of(result: types.GetPromptResult) -> str:
    assert len(result.messages) == 1
    message = result.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


def wire(result: types.GetPromptResult) -> dict[str, Any]:
    """What the client received, without the SDK's per-response server stamp."""
    data = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    data.pop("_meta", None)
    return data


# The command ---------------------------------------------------------------------------


def test_mcp_console_script_is_declared_for_the_stdio_main() -> None:
    project = tomllib.loads((REPO / "packages/client/pyproject.toml").read_text())
    assert project["project"]["scripts"]["sysprompt-mcp"] == "sysprompt_client.mcp.stdio:main"
    assert project["project"]["optional-dependencies"]["mcp"] == ["mcp>=2.3,<3"]
    from sysprompt_client.mcp import stdio

    assert callable(stdio.main)


def run_command(env: dict[str, str], *prelude: str) -> subprocess.CompletedProcess[str]:
    code = "; ".join(
        [*prelude, "from sysprompt_client.mcp.stdio import main", "raise SystemExit(main())"]
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_mcp_command_without_the_sdk_says_how_to_install_it(deployment: Deployment) -> None:
    done = run_command(deployment.env(), "import sys", "sys.modules['mcp'] = None")

    assert done.returncode == 2
    assert done.stdout == ""
    assert "pip install 'sysprompt-client[mcp]'" in done.stderr


def test_mcp_command_without_url_or_token_names_them_on_stderr(deployment: Deployment) -> None:
    env = deployment.env()
    del env["SYSPROMPT_URL"], env["SYSPROMPT_TOKEN"]
    done = run_command(env)

    assert done.returncode == 2
    assert done.stdout == ""
    assert "SYSPROMPT_URL and SYSPROMPT_TOKEN must be set" in done.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SYSPROMPT_MCP_WRITE", "maybe"),
        ("SYSPROMPT_MCP_POLL_SECONDS", "often"),
        ("SYSPROMPT_ROOTS", "relative/root"),
    ],
)
def test_mcp_command_with_a_bad_setting_names_it(
    deployment: Deployment, name: str, value: str
) -> None:
    done = run_command(deployment.env(**{name: value}))

    assert done.returncode == 2
    assert done.stdout == ""
    assert f"sysprompt-mcp: {name}" in done.stderr
    assert "must be" in done.stderr or "is not an absolute path" in done.stderr


def test_mcp_command_with_its_cwd_outside_its_roots_names_both(
    deployment: Deployment, tmp_path: Path
) -> None:
    done = run_command(deployment.env(SYSPROMPT_ROOTS=str(tmp_path)))

    assert done.returncode == 2
    assert done.stdout == ""
    assert f"SYSPROMPT_CWD {str(deployment.host_dir)!r} is outside SYSPROMPT_ROOTS" in done.stderr


async def test_mcp_first_turn_without_the_server_answers_the_fallback(
    deployment: Deployment,
) -> None:
    nowhere = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sysprompt_client.mcp"],
        env={
            **deployment.env(SYSPROMPT_FALLBACK="Offline prompt.\n"),
            "SYSPROMPT_URL": f"http://127.0.0.1:{free_port()}",
        },
        cwd=str(deployment.host_dir),
    )
    async with connected(nowhere) as client:
        answer = await client.get_prompt("system-prompt", {"conversation_id": "mcp-offline"})

    assert text_of(answer) == "Offline prompt.\n"
    assert answer.description is not None
    assert "the configured fallback" in answer.description


def test_mcp_stdout_carries_only_protocol(deployment: Deployment) -> None:
    """A raw session with logging at DEBUG: every line on stdout is a JSON-RPC message
    answering ours; the logging went to stderr. No ``SYSPROMPT_CWD``: the prompt is
    built for the directory the command starts in."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "prompts/get",
            "params": {"name": "system-prompt", "arguments": {"conversation_id": "mcp-raw-1"}},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}},
    ]
    env = deployment.env(SYSPROMPT_MCP_LOG_LEVEL="DEBUG", SYSPROMPT_MCP_POLL_SECONDS="0")
    del env["SYSPROMPT_CWD"]
    process = subprocess.Popen(
        [sys.executable, "-m", "sysprompt_client.mcp"],
        env=env,
        cwd=deployment.host_dir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killer = threading.Timer(60, process.kill)
    killer.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        process.stdin.flush()
        lines = [process.stdout.readline() for _ in range(4)]  # stdin open until answered
        rest, errors = process.communicate()  # closes stdin: the command ends
    finally:
        killer.cancel()

    assert process.returncode == 0, errors
    assert rest == ""
    answers = [json.loads(line) for line in lines]
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    assert sorted(answer["id"] for answer in answers) == [1, 2, 3, 4]
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[1]["result"]["capabilities"]["prompts"] == {"listChanged": True}
    text = by_id[3]["result"]["messages"][0]["content"]["text"]
    assert f"branch {BRANCH}" in text
    assert by_id[4]["error"]["message"] == "Unknown tool: nope"
    # The logging was on, and went to stderr.
    assert "DEBUG" in errors


# Prompts -------------------------------------------------------------------------------


async def test_mcp_system_prompt_later_turns_are_the_same_bytes_from_the_cache(
    deployment: Deployment,
) -> None:
    arguments = {"conversation_id": "mcp-turns-1", "model": "gpt-5", "provider": "openai"}
    async with connected(deployment.params(SYSPROMPT_MCP_POLL_SECONDS="0")) as client:
        first = await client.get_prompt("system-prompt", arguments)
        later = await client.get_prompt("system-prompt", arguments)
        # The server stops: a later turn is answered from the client's cache, no request.
        deployment.server.stop()
        try:
            offline = await client.get_prompt("system-prompt", arguments)
            tool = await client.call_tool("get_system_prompt", arguments)
            with pytest.raises(MCPError) as refused:  # a first turn does need the server
                await client.get_prompt("system-prompt", {"conversation_id": "mcp-turns-2"})
        finally:
            deployment.server.start()

    text = text_of(first)
    # Built on the host: its branch and its AGENTS.md, which the server cannot read.
    assert f"You work on the branch {BRANCH}.\n" in text
    assert RULES in text
    stored = deployment.api(
        "GET", "/api/conversations/mcp-turns-1/system-prompt", token=deployment.server.token
    )
    assert stored["system_prompt"] == text
    assert first.description is not None
    assert "system prompt" in first.description
    assert stored["sha256"] in first.description
    assert "label production" in first.description
    assert wire(later) == wire(first)
    assert wire(offline) == wire(first)
    assert not tool.is_error
    assert tool.structured_content["text"] == text
    assert tool.structured_content["sha256"] == stored["sha256"]
    assert tool.structured_content["label"] == "production"
    assert "could not be reached" in refused.value.message


async def test_mcp_system_prompt_of_another_hosts_conversation_id_is_its_own(
    deployment: Deployment,
) -> None:
    """Conversation ids are scoped to the agent host: another host asking for the same id
    never gets the first host's conversation; its first turn builds its own."""
    arguments = {"conversation_id": "mcp-owned-1"}
    async with connected(deployment.params()) as owner:
        first = await owner.get_prompt("system-prompt", arguments)
    async with connected(deployment.params(deployment.other_host)) as other:
        mine = await other.get_prompt("system-prompt", arguments)  # ids are scoped to the host

    # The API's answer to that host: its own conversation, made by its first turn above.
    api = httpx.post(
        f"{deployment.server.url}/api/conversations/mcp-owned-1/system-prompt/resolve",
        headers={"Authorization": f"Token {deployment.other_host}"},
        json={"cwd": str(deployment.host_dir)},
        timeout=30,
    )
    assert api.status_code == 200
    assert text_of(mine) == api.json()["system_prompt"]
    async with connected(deployment.params()) as owner:
        assert text_of(await owner.get_prompt("system-prompt", arguments)) == text_of(first)


async def test_mcp_prompts_list_pages_through_every_fragment(deployment: Deployment) -> None:
    for number in range(55):  # more than a page, whatever the library holds
        deployment.api(
            "PUT", f"/api/library/fragments/mcp/page-{number:02}", json={"text": f"{number}\n"}
        )
    expected = [item["name"] for item in pages(deployment, "/api/library")]
    async with connected(deployment.params()) as client:
        first = await client.list_prompts()
        names = [prompt.name for prompt in first.prompts]
        cursor = first.next_cursor
        while cursor is not None:
            page = await client.list_prompts(cursor=cursor)
            names += [prompt.name for prompt in page.prompts]
            cursor = page.next_cursor

    assert len(first.prompts) == 50
    assert first.next_cursor is not None
    assert names == ["system-prompt", *(f"fragment/{name}" for name in sorted(expected))]
    system = first.prompts[0]
    assert [(a.name, bool(a.required)) for a in system.arguments or []] == [
        ("conversation_id", True),
        ("cwd", False),
        ("model", False),
        ("provider", False),
        ("label", False),
        ("prompt", False),
    ]


def pages(deployment: Deployment, path: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    url: str | None = deployment.server.url + path
    while url is not None:
        page = deployment.api("GET", url.removeprefix(deployment.server.url))
        results += page["results"]
        url = page["next"]
    return results


async def test_mcp_fragment_prompt_is_the_variant_for_the_provider_rendered(
    deployment: Deployment,
) -> None:
    deployment.api("PUT", "/api/library/fragments/mcp/tone", json={"text": "Be brief.\n"})
    deployment.api(
        "PUT",
        "/api/library/fragments/mcp/tone",
        params={"provider": "anthropic"},
        json={"text": "Be brief, Claude; [prompt:model] it is.\n"},
    )
    async with connected(deployment.params()) as client:
        default = await client.get_prompt("fragment/mcp/tone")
        claude = await client.get_prompt(
            "fragment/mcp/tone", {"provider": "anthropic", "model": "claude-x"}
        )
        tool = await client.call_tool(
            "get_fragment", {"name": "mcp/tone", "provider": "anthropic", "model": "claude-x"}
        )
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("fragment/mcp/no-such-fragment")

    assert text_of(default) == "Be brief.\n"
    assert text_of(claude) == "Be brief, Claude; claude-x it is.\n"
    assert claude.description is not None and "provider anthropic" in claude.description
    assert tool.structured_content["text"] == text_of(claude)
    assert tool.structured_content["provider"] == "anthropic"
    assert missing.value.code == types.INVALID_PARAMS
    assert "fragment" in missing.value.message


# Tools ---------------------------------------------------------------------------------


HOST_TOOLS = [name for name in READ_TOOLS if name != "list_labels"]
"""What an agent host's token may use: neither the labels nor any write."""


async def test_mcp_write_tools_exist_only_when_enabled(deployment: Deployment) -> None:
    async with connected(deployment.params(deployment.author)) as client:
        default = [tool.name for tool in (await client.list_tools()).tools]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("save_fragment", {"name": "mcp/nope", "text": "x"})
    async with connected(
        deployment.params(deployment.author, SYSPROMPT_MCP_WRITE="true")
    ) as client:
        enabled = [tool.name for tool in (await client.list_tools()).tools]
        saved = await client.call_tool(
            "save_fragment", {"name": "mcp/written", "text": "Written over MCP.\n"}
        )
        release = await client.call_tool("create_release", {"message": "over MCP"})
        moved = await client.call_tool(
            "set_label",
            {
                "name": "mcp-staging",
                "target": {"release": release.structured_content["number"]},
            },
        )
        labels = await client.call_tool("list_labels", {})

    assert default == list(READ_TOOLS)
    assert "Unknown tool: save_fragment" in unknown.value.message
    assert enabled == [*READ_TOOLS, *WRITE_TOOLS]
    assert not saved.is_error
    assert saved.structured_content["name"] == "mcp/written"
    stored = deployment.api("GET", "/api/library/fragments/mcp/written")
    assert stored["text"] == "Written over MCP.\n"
    assert not moved.is_error
    assert moved.structured_content["target"] == {"release": release.structured_content["number"]}
    names = [label["name"] for label in labels.structured_content["labels"]]
    assert "mcp-staging" in names and "production" in names


@pytest.mark.parametrize("write", ["false", "true"])
async def test_mcp_host_token_is_listed_only_the_tools_it_may_use(
    deployment: Deployment, write: str
) -> None:
    """The token's permissions come from the server (``GET /api/me``): an agent host's
    token is listed neither ``list_labels`` nor a write tool, and one it calls anyway is
    the server's refusal."""
    async with connected(deployment.params(SYSPROMPT_MCP_WRITE=write)) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        again = [tool.name for tool in (await client.list_tools()).tools]
        labels = await client.call_tool("list_labels", {})
        if write == "true":
            refused = await client.call_tool("save_fragment", {"name": "mcp/nope", "text": "x"})
            assert refused.is_error and refused.structured_content["status"] == 403

    assert listed == again == HOST_TOOLS
    assert labels.is_error and labels.structured_content["status"] == 403
    me = deployment.api("GET", "/api/me", token=deployment.server.token)
    assert me["agent_host"] is True and not any(me["permissions"].values())


async def test_mcp_read_tools_answer_for_the_host(deployment: Deployment) -> None:
    deployment.api("PUT", "/api/library/fragments/mcp/listed", json={"text": "Listed.\n"})
    async with connected(deployment.params()) as client:
        fragments = await client.call_tool("list_fragments", {})
        labels = await client.call_tool("list_labels", {})
        compacted = await client.call_tool(
            "compact_system_prompt", {"conversation_id": "mcp-compact-1"}
        )
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    listed = {item["name"]: item for item in fragments.structured_content["fragments"]}
    assert listed["mcp/listed"]["variants"] == [{"provider": None, "model": None}]
    # Labels are the authors': not listed to an agent host, refused if called anyway.
    assert "list_labels" not in tools
    assert labels.is_error and labels.structured_content["status"] == 403
    assert not compacted.is_error
    assert f"branch {BRANCH}" in compacted.structured_content["text"]
    assert compacted.structured_content["compaction_prompt"].startswith(
        compacted.structured_content["text"]
    )
    annotations = tools["get_system_prompt"].annotations
    assert annotations is not None and annotations.read_only_hint is True


# Roots: where a call's cwd may point ---------------------------------------------------

SECRET = "Not for the agent: the host's private notes.\n"


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory of the host outside the command's roots, with an ``AGENTS.md`` the
    template would read there."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "AGENTS.md").write_text(SECRET)
    return outside


async def test_mcp_cwd_outside_the_roots_is_refused_and_nothing_is_read(
    deployment: Deployment, elsewhere: Path
) -> None:
    """The attack: the agent's model (steered by a template, or by a file it read) names
    another directory of the host as ``cwd``; the command would read its files and send
    them to the server. The roots default to ``SYSPROMPT_CWD``: the call is an MCP
    error, and nothing reaches the server."""
    steered = {"conversation_id": "mcp-steered-1", "cwd": str(elsewhere)}
    async with connected(deployment.params(SYSPROMPT_MCP_POLL_SECONDS="0")) as client:
        with pytest.raises(MCPError) as prompt:
            await client.get_prompt("system-prompt", steered)
        tool = await client.call_tool("get_system_prompt", steered)
        compacted = await client.call_tool("compact_system_prompt", steered)
        inside = await client.get_prompt(
            "system-prompt", {"conversation_id": "mcp-steered-2", "cwd": str(deployment.host_dir)}
        )

    assert prompt.value.code == types.INVALID_PARAMS
    assert prompt.value.message.startswith(f"cwd: {str(elsewhere)!r} is outside")
    assert "SYSPROMPT_ROOTS" in prompt.value.message
    assert prompt.value.data == {"status": 400}
    for result in (tool, compacted):
        assert result.is_error
        assert result.structured_content == {"error": prompt.value.message, "status": 400}
    missing = httpx.get(
        f"{deployment.server.url}/api/conversations/mcp-steered-1/system-prompt",
        headers={"Authorization": f"Token {deployment.server.token}"},
        timeout=30,
    )
    assert missing.status_code == 404
    assert RULES in text_of(inside)


async def test_mcp_roots_widen_with_the_setting_and_a_link_out_of_them_is_refused(
    deployment: Deployment, tmp_path: Path, elsewhere: Path
) -> None:
    roots = tmp_path / "roots"
    (roots / "project").mkdir(parents=True)
    (roots / "other").mkdir()
    (roots / "other" / "AGENTS.md").write_text("The other project's rules.\n")
    (roots / "escape").symlink_to(elsewhere, target_is_directory=True)
    params = deployment.params(
        SYSPROMPT_CWD=str(roots / "project"),
        SYSPROMPT_ROOTS=str(roots),
        SYSPROMPT_MCP_POLL_SECONDS="0",
    )
    async with connected(params) as client:
        other = await client.get_prompt(
            "system-prompt", {"conversation_id": "mcp-roots-1", "cwd": str(roots / "other")}
        )
        with pytest.raises(MCPError) as escaped:
            await client.get_prompt(
                "system-prompt", {"conversation_id": "mcp-roots-2", "cwd": str(roots / "escape")}
            )

    assert "The other project's rules.\n" in text_of(other)
    assert escaped.value.message.startswith(f"cwd: {str(roots / 'escape')!r} is outside")


# Compaction -----------------------------------------------------------------------------


async def test_mcp_compaction_with_only_the_conversation_id_keeps_the_frozen_context(
    deployment: Deployment,
) -> None:
    """The first turn is for gpt-5 on openai; a compaction naming only the conversation
    keeps the model (and so the fragment's gpt-5 variant), the provider and the cwd
    (the host's values resolved there again), and says so; the next turn with the same
    model is no mismatch."""
    fragment = "/api/library/fragments/mcp/for-model"
    deployment.api("PUT", fragment, json={"text": "Any model.\n"})
    deployment.api(
        "PUT",
        fragment,
        params={"provider": "openai", "model": "gpt-5"},
        json={"text": "Tuned for gpt-5.\n"},
    )
    turn = {"conversation_id": "mcp-compact-kept", "model": "gpt-5", "provider": "openai"}
    async with connected(deployment.params(SYSPROMPT_MCP_POLL_SECONDS="0")) as client:
        first = await client.call_tool("get_system_prompt", turn)
        compacted = await client.call_tool(
            "compact_system_prompt", {"conversation_id": "mcp-compact-kept"}
        )
        later = await client.call_tool("get_system_prompt", turn)

    data = compacted.structured_content
    assert not compacted.is_error, data
    text = first.structured_content["text"]
    assert "Model: gpt-5.\nTuned for gpt-5.\n" in text
    assert data["text"] == text  # the same context, built afresh: the same prompt
    assert f"branch {BRANCH}" in data["text"] and RULES in data["text"]
    assert (data["cwd"], data["model"], data["provider"]) == (
        str(deployment.host_dir),
        "gpt-5",
        "openai",
    )
    assert data["context_kept"] == ["cwd", "model", "provider", "tools", "variables", "override"]
    stored = deployment.api(
        "GET", "/api/conversations/mcp-compact-kept/system-prompt", token=deployment.server.token
    )
    assert (stored["model"], stored["provider"]) == ("gpt-5", "openai")
    assert stored["system_prompt"] == data["text"]
    assert later.structured_content["context_mismatch"] == []


# list_changed --------------------------------------------------------------------------


async def test_mcp_list_changed_is_sent_when_a_fragment_is_added(
    deployment: Deployment,
) -> None:
    """A 2025-11-25 client (the handshake) hears ``notifications/prompts/list_changed``;
    a 2026-07-28 client hears it on its ``subscriptions/listen`` stream."""
    heard = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            heard.set()

    params = deployment.params(SYSPROMPT_MCP_POLL_SECONDS="0.2")
    async with connected(params, mode="legacy", message_handler=handler) as legacy:
        assert legacy.server_capabilities.prompts is not None
        assert legacy.server_capabilities.prompts.list_changed is True
        await legacy.list_prompts()
        await anyio.sleep(0.6)  # the first poll has seen the list
        assert not heard.is_set()
        deployment.api("PUT", "/api/library/fragments/mcp/added-1", json={"text": "1\n"})
        with anyio.fail_after(20):
            await heard.wait()
        names = [prompt.name for prompt in (await legacy.list_prompts()).prompts]
    async with connected(params) as modern:
        async with modern.listen(prompts_list_changed=True) as subscription:
            await anyio.sleep(0.6)
            deployment.api("DELETE", "/api/library/fragments/mcp/added-1")
            with anyio.fail_after(20):
                event = await subscription.__anext__()
        after = [prompt.name for prompt in (await modern.list_prompts()).prompts]

    assert "fragment/mcp/added-1" in names
    assert type(event).__name__ == "PromptsListChanged"
    assert "fragment/mcp/added-1" not in after


# Named prompts --------------------------------------------------------------------------


def test_mcp_command_with_a_bad_prompt_name_names_the_setting(deployment: Deployment) -> None:
    done = run_command(deployment.env(SYSPROMPT_PROMPT="Support//Triage"))

    assert done.returncode == 2
    assert done.stdout == ""
    assert "sysprompt-mcp: SYSPROMPT_PROMPT 'Support//Triage' is not a prompt name" in done.stderr


async def test_mcp_sysprompt_prompt_is_the_default_and_the_argument_overrides_it(
    deployment: Deployment,
) -> None:
    deployment.server.manage(
        "shell",
        "-c",
        "from django.utils import timezone\n"
        "from sysprompt.prompts.models import Prompt\n"
        "from sysprompt.prompts.services import template_save\n"
        "now = timezone.now()\n"
        "made, _ = Prompt.objects.get_or_create(name='support/triage', "
        "defaults={'created_at': now, 'updated_at': now})\n"
        "template_save(text='Triage on [git:branch].', prompt=made)",
    )
    params = deployment.params(SYSPROMPT_MCP_POLL_SECONDS="0", SYSPROMPT_PROMPT="support/triage")
    async with connected(params) as client:
        triage = await client.get_prompt("system-prompt", {"conversation_id": "mcp-named-1"})
        plain = await client.get_prompt(
            "system-prompt", {"conversation_id": "mcp-named-2", "prompt": "default"}
        )
        tool = await client.call_tool("get_system_prompt", {"conversation_id": "mcp-named-1"})
        refused = await client.call_tool(
            "get_system_prompt", {"conversation_id": "mcp-named-1", "prompt": "default"}
        )

    # Built on the host from support/triage: the branch is the host's.
    assert text_of(triage) == f"Triage on {BRANCH}."
    assert "prompt support/triage" in (triage.description or "")
    assert f"You work on the branch {BRANCH}.\n" in text_of(plain)
    assert tool.structured_content is not None
    assert tool.structured_content["prompt"] == "support/triage"
    # mcp-named-1 under default is another cache entry: the server refuses it (409).
    assert refused.is_error and refused.structured_content == {
        "error": refused.structured_content["error"],
        "status": 409,
    }
    stored = deployment.api(
        "GET", "/api/conversations/mcp-named-1/system-prompt", token=deployment.server.token
    )
    assert stored["prompt"] == "support/triage"

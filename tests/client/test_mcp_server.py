"""The MCP declarations and handlers of ``sysprompt_client.mcp.server`` (what the stdio
command and the server's ``/mcp`` share), driven in-process by the official SDK's
``Client`` over a backend of this module: a small library held in memory that
implements the ``Backend`` protocol as the real ones do (the stdio command's backend
against a real server is ``test_mcp_stdio.py``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sysprompt_client.errors import InvalidRequest, NotFound, Unauthorized, Unavailable
from sysprompt_client.mcp import (
    READ_TOOLS,
    TOOL_PERMISSIONS,
    WRITE_TOOLS,
    Backend,
    FragmentSummary,
    FragmentText,
    PromptChanges,
    PromptSummary,
    Variant,
    build_server,
    watch_prompts,
)
from sysprompt_client.results import CompactResult, PromptResult, text_sha256
from tests.client.served import REPO


@dataclass
class Library:
    """A Backend over an in-memory library: fragments by name, prompts by id."""

    names: list[str] = field(default_factory=list)
    prompts: dict[str, str | None] = field(default_factory=dict)
    fallback: bool = False
    asked: list[str] = field(default_factory=list)
    down: bool = False
    granted: frozenset[str] = frozenset({"library", "releases"})
    """What the caller may do (an author's token by default)."""
    named: list[PromptSummary] | None = None
    """The named prompts the caller may use (``None``: the backend cannot say)."""
    asked_prompts: list[str | None] = field(default_factory=list)

    def system_prompt(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> PromptResult:
        self.asked.append(conversation_id)
        self.asked_prompts.append(prompt)
        if conversation_id not in self.prompts:
            raise NotFound(f"Conversation {conversation_id!r} has no stored prompt.", status=404)
        text = self.prompts[conversation_id]
        return PromptResult(
            text=text,
            sha256=text_sha256(text),
            template_version=3,
            conversation_id=conversation_id,
            label=None if self.fallback else "production",
            is_fallback=self.fallback,
        )

    def compact(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> CompactResult:
        frozen = self.system_prompt(conversation_id, prompt=prompt)
        return CompactResult(compaction_prompt=f"{frozen.text}Compact.\n", prompt=frozen)

    def named_prompts(self) -> Sequence[PromptSummary] | None:
        if self.down and self.named is not None:
            raise Unavailable("the sysprompt server could not be reached: refused")
        return self.named

    def fragments(self) -> Sequence[FragmentSummary]:
        if self.down:
            raise Unavailable("the sysprompt server could not be reached: refused")
        return [FragmentSummary(name=name, variants=(Variant(),)) for name in self.names]

    def fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> FragmentText:
        if name not in self.names:
            raise InvalidRequest(f"fragment: no fragment {name!r}.", status=400)
        return FragmentText(name=name, text=f"{name} for {provider}\n", provider=provider)

    def permissions(self) -> frozenset[str]:
        if self.down:
            raise Unavailable("the sysprompt server could not be reached: refused")
        return self.granted

    def labels(self) -> Sequence[Mapping[str, Any]]:
        return [{"name": "production", "target": "latest"}]

    def save_fragment(
        self, name: str, *, text: str, provider: str | None = None, model: str | None = None
    ) -> Mapping[str, Any]:
        self.names.append(name)
        return {"name": name, "text": text}

    def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> Mapping[str, Any]:
        self.names.remove(name)
        return {"name": name, "deleted": True}

    def create_release(self, *, message: str | None = None) -> Mapping[str, Any]:
        return {"number": 1, "message": message}

    def set_label(self, name: str, *, target: Any, message: str | None = None) -> Mapping[str, Any]:
        return {"name": name, "target": target}


def test_mcp_library_is_a_backend() -> None:
    assert isinstance(Library(), Backend)


def test_mcp_build_server_takes_exactly_one_backend() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        build_server()
    with pytest.raises(ValueError, match="exactly one"):
        build_server(Library(), backend_for=lambda ctx: Library())


async def test_mcp_pages_stay_right_while_fragments_come_and_go() -> None:
    library = Library(names=[f"f{n}" for n in range(5)])
    async with Client(build_server(library, page_size=3), cache=None) as client:
        first = await client.list_prompts()
        library.names.remove("f0")  # already listed
        library.names.append("e")  # sorts before the cursor: not on a later page
        library.names.append("g")
        second = await client.list_prompts(cursor=first.next_cursor)
        third = await client.list_prompts(cursor=second.next_cursor)
        with pytest.raises(MCPError) as bad:
            await client.list_prompts(cursor="%%%")

    assert [p.name for p in first.prompts] == ["system-prompt", "fragment/f0", "fragment/f1"]
    assert [p.name for p in second.prompts] == ["fragment/f2", "fragment/f3", "fragment/f4"]
    assert [p.name for p in third.prompts] == ["fragment/g"]
    assert third.next_cursor is None
    assert bad.value.code == types.INVALID_PARAMS
    assert bad.value.message == "Invalid cursor"


async def test_mcp_unknown_prompt_and_missing_argument_are_invalid_params() -> None:
    library = Library(prompts={"c1": "P\n"})
    async with Client(build_server(library), cache=None) as client:
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope")
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("system-prompt", {})
        with pytest.raises(MCPError) as absent:
            await client.get_prompt("fragment/none", {"provider": "openai"})

    assert unknown.value.code == types.INVALID_PARAMS
    assert unknown.value.message == "Unknown prompt: nope"
    assert missing.value.message == "conversation_id: this argument is required."
    assert absent.value.message == "fragment: no fragment 'none'."
    assert absent.value.data == {"status": 400}
    assert library.asked == []


async def test_mcp_prompt_without_text_answers_no_message() -> None:
    library = Library(prompts={"c1": None}, fallback=True)
    async with Client(build_server(library), cache=None) as client:
        answer = await client.get_prompt("system-prompt", {"conversation_id": "c1"})

    assert answer.messages == []
    assert answer.description == (
        "Conversation c1 has no system prompt: send none (the configured fallback: the "
        "sysprompt server could not be reached)."
    )


async def test_mcp_backend_for_gives_each_request_its_backend() -> None:
    libraries = {"a": Library(names=["only-a"]), "b": Library(names=["only-b"])}
    chosen: list[str] = []

    def backend_for(ctx: Any) -> Backend:
        which = "a" if not chosen else "b"
        chosen.append(which)
        return libraries[which]

    async with Client(build_server(backend_for=backend_for), cache=None) as client:
        first = await client.list_prompts()
        second = await client.list_prompts()

    assert [p.name for p in first.prompts][1:] == ["fragment/only-a"]
    assert [p.name for p in second.prompts][1:] == ["fragment/only-b"]


async def test_mcp_write_tool_arguments_are_checked_as_tool_errors() -> None:
    library = Library()
    async with Client(build_server(library, write=True), cache=None) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        no_text = await client.call_tool("save_fragment", {"name": "x"})
        no_target = await client.call_tool("set_label", {"name": "staging"})
        moved = await client.call_tool("set_label", {"name": "staging", "target": "latest"})

    assert tools == [*READ_TOOLS, *WRITE_TOOLS]
    assert no_text.is_error
    assert no_text.structured_content == {
        "error": "text: this argument is required (a string).",
        "status": 400,
    }
    assert no_target.is_error
    assert library.names == []
    assert moved.structured_content == {"name": "staging", "target": "latest"}


HOST_TOOLS = [
    "get_system_prompt",
    "compact_system_prompt",
    "list_fragments",
    "get_fragment",
    "list_prompts",
]


@pytest.mark.parametrize(
    ("granted", "write", "listed"),
    [
        (frozenset(), False, HOST_TOOLS),  # an agent host's token
        (frozenset(), True, HOST_TOOLS),
        (frozenset({"releases"}), False, [*HOST_TOOLS, "list_labels"]),
        (frozenset({"library"}), True, [*HOST_TOOLS, "save_fragment", "delete_fragment"]),
        (
            frozenset({"releases"}),
            True,
            [*HOST_TOOLS, "list_labels", "create_release", "set_label"],
        ),
        (frozenset({"library", "releases", "publish"}), True, [*READ_TOOLS, *WRITE_TOOLS]),
    ],
)
async def test_mcp_tools_listed_are_those_the_caller_may_use(
    granted: frozenset[str], write: bool, listed: list[str]
) -> None:
    library = Library(granted=granted)
    async with Client(build_server(library, write=write), cache=None) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]

    assert tools == listed
    assert set(TOOL_PERMISSIONS) == {"list_labels", *WRITE_TOOLS}


async def test_mcp_tools_list_while_the_server_is_down_is_what_every_caller_may_use() -> None:
    library = Library(down=True)
    async with Client(build_server(library, write=True), cache=None) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]

    assert tools == HOST_TOOLS


async def test_mcp_tools_list_with_a_refused_token_is_the_api_error() -> None:
    class Refused(Library):
        def permissions(self) -> frozenset[str]:
            raise Unauthorized("Invalid token.", status=401)

    async with Client(build_server(Refused()), cache=None) as client:
        with pytest.raises(MCPError) as refused:
            await client.list_tools()

    assert (refused.value.message, refused.value.data) == ("Invalid token.", {"status": 401})


async def test_mcp_list_without_the_server_is_system_prompt_then_changed_when_back() -> None:
    library = Library(names=["kept"], down=True)
    changes = PromptChanges()
    heard: list[object] = []
    changes.bus.subscribe(heard.append)
    async with Client(build_server(library, changes=changes), cache=None) as client:
        down = await client.list_prompts()
        library.down = False
        async with anyio.create_task_group() as group:
            group.start_soon(partial(watch_prompts, library, changes, interval=0.01))
            with anyio.fail_after(10):
                while not heard:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.1)  # later polls: the same names, nothing more
            group.cancel_scope.cancel()
        back = await client.list_prompts()

    assert [p.name for p in down.prompts] == ["system-prompt"]
    assert [type(event).__name__ for event in heard] == ["PromptsListChanged"]
    assert [p.name for p in back.prompts] == ["system-prompt", "fragment/kept"]


def test_mcp_builder_without_the_sdk_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "import sysprompt_client.mcp as m\n"
        "from sysprompt_client.mcp import Backend\n"  # the SDK-free part still imports
        "try:\n"
        "    m.build_server\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "",
            "PYTHONPATH": f"{REPO}/packages/core/src:{REPO}/packages/client/src",
        },
    )

    assert done.returncode == 0, done.stderr
    assert "pip install 'sysprompt-client[mcp]'" in done.stdout


async def test_mcp_system_prompt_and_its_tools_take_the_prompt_argument() -> None:
    library = Library(prompts={"c1": "Triage.\n"})
    async with Client(build_server(library), cache=None) as client:
        declared = (await client.list_prompts()).prompts[0]
        named = {"conversation_id": "c1", "prompt": "a/b"}
        await client.get_prompt("system-prompt", named)
        await client.get_prompt("system-prompt", {"conversation_id": "c1"})
        tool = await client.call_tool("get_system_prompt", named)
        await client.call_tool("compact_system_prompt", named)
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}

    assert declared.name == "system-prompt"
    assert [argument.name for argument in declared.arguments or ()][-1] == "prompt"
    assert library.asked_prompts == ["a/b", None, "a/b", "a/b"]
    assert not tool.is_error
    assert "prompt" in schemas["get_system_prompt"]["properties"]
    assert "prompt" in schemas["compact_system_prompt"]["properties"]


async def test_mcp_prompts_list_names_the_prompts_the_backend_offers() -> None:
    named = [
        PromptSummary(name="default"),
        PromptSummary(name="support/triage", description="Tickets.", tags=("support",)),
    ]
    library = Library(names=["f"], prompts={"c1": "Triage.\n"}, named=named)
    async with Client(build_server(library), cache=None) as client:
        listed = await client.list_prompts()
        answer = await client.get_prompt("prompt/support/triage", {"conversation_id": "c1"})
        tool = await client.call_tool("list_prompts", {})

    assert [p.name for p in listed.prompts] == [
        "system-prompt",
        "fragment/f",
        "prompt/default",
        "prompt/support/triage",
    ]
    triage = listed.prompts[-1]
    assert "Tickets." in (triage.description or "")
    assert "prompt" not in [argument.name for argument in triage.arguments or ()]
    assert answer.messages[0].content == types.TextContent(type="text", text="Triage.\n")
    assert library.asked_prompts == ["support/triage"]
    assert tool.structured_content == {
        "prompts": [
            {"name": "default", "description": "", "tags": []},
            {"name": "support/triage", "description": "Tickets.", "tags": ["support"]},
        ]
    }


@pytest.mark.parametrize("named", [None, [PromptSummary(name="default")]])
async def test_mcp_prompts_list_is_todays_without_named_prompts(
    named: list[PromptSummary] | None,
) -> None:
    library = Library(names=["f"], named=named)
    async with Client(build_server(library), cache=None) as client:
        listed = await client.list_prompts()
        tool = await client.call_tool("list_prompts", {})

    assert [p.name for p in listed.prompts] == ["system-prompt", "fragment/f"]
    assert tool.is_error is (named is None)

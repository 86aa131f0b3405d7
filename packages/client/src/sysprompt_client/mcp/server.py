"""The MCP prompts and tools of sysprompt, declared once, answered through a
:class:`~sysprompt_client.mcp.backend.Backend`, on the official ``mcp`` SDK's lowlevel
:class:`mcp.server.lowlevel.Server`.

:func:`build_server` makes the server; a transport runs it (``sysprompt-mcp`` over
stdio, the server's ``/mcp`` over Streamable HTTP). :class:`PromptChanges` tells
connected clients that the prompt list changed (``notifications/prompts/list_changed``
on a 2025 handshake connection, a ``subscriptions/listen`` event on a 2026 one);
:func:`watch_prompts` polls a backend and calls it when fragments come or go.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sysprompt_client.errors import InvalidRequest, NotFound, ServerError, SyspromptError
from sysprompt_client.mcp.backend import Backend, FragmentSummary, FragmentText, PromptSummary
from sysprompt_client.results import CompactResult, PromptResult

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FRAGMENT_PREFIX",
    "PROMPT_PREFIX",
    "READ_TOOLS",
    "SERVER_NAME",
    "SYSTEM_PROMPT",
    "TOOL_PERMISSIONS",
    "WRITE_TOOLS",
    "BackendFor",
    "PromptChanges",
    "build_server",
    "initialization_options",
    "prompt_meta",
    "watch_prompts",
]

log = logging.getLogger("sysprompt_client.mcp")

SERVER_NAME = "sysprompt"
SYSTEM_PROMPT = "system-prompt"
"""The prompt of a conversation's frozen system prompt."""
FRAGMENT_PREFIX = "fragment/"
"""``fragment/<name>``: one prompt per fragment of the library."""
PROMPT_PREFIX = "prompt/"
"""``prompt/<name>``: one MCP prompt per named prompt the caller may use (listed when the
backend can say which, and there is another than ``default``): ``system-prompt`` with
that ``prompt``."""
DEFAULT_PAGE_SIZE = 50
"""Prompts per ``prompts/list`` page."""
READ_TOOLS = (
    "get_system_prompt",
    "compact_system_prompt",
    "list_fragments",
    "get_fragment",
    "list_prompts",
    "list_labels",
)
WRITE_TOOLS = ("save_fragment", "delete_fragment", "create_release", "set_label")
"""Declared only with ``write=True`` (``SYSPROMPT_MCP_WRITE=true``)."""
TOOL_PERMISSIONS = {
    "list_labels": "releases",
    "save_fragment": "library",
    "delete_fragment": "library",
    "create_release": "releases",
    "set_label": "releases",
}
"""The permission (``Backend.permissions``, as ``GET /api/me`` names it) a tool needs to
be listed; the other tools are every caller's."""

BackendFor = Callable[[ServerRequestContext[Any, Any]], Backend]
"""A backend per request (the HTTP transport's: the calling user's)."""

_T = TypeVar("_T")

# Declarations ---------------------------------------------------------------------------

_CWD = (
    "The working directory the prompt is built for (sysprompt-mcp: default SYSPROMPT_CWD,"
    " inside its roots; at /mcp: needed on a first turn)."
)
_CONTEXT_ARGUMENTS = (
    types.PromptArgument(
        name="conversation_id",
        description="The conversation's id (the agent host's own, stable for the conversation).",
        required=True,
    ),
    types.PromptArgument(
        name="cwd",
        description=_CWD,
        required=False,
    ),
    types.PromptArgument(name="model", description="The model, e.g. gpt-5.", required=False),
    types.PromptArgument(
        name="provider", description="The provider, e.g. openai, anthropic.", required=False
    ),
    types.PromptArgument(
        name="label",
        description="The label to build from on the first turn (default: the host's).",
        required=False,
    ),
)
_PROMPT = (
    "The named prompt the conversation is built from, e.g. support/triage (default: "
    "sysprompt-mcp's SYSPROMPT_PROMPT, else the agent host's default prompt, else "
    "default); a later turn must name the same one."
)
_PROMPT_ARGUMENT = types.PromptArgument(name="prompt", description=_PROMPT, required=False)
_VARIANT_ARGUMENTS = (
    types.PromptArgument(
        name="provider", description="The provider whose variant to render.", required=False
    ),
    types.PromptArgument(
        name="model", description="The model whose variant to render.", required=False
    ),
)

_SYSTEM_PROMPT_DECLARATION = types.Prompt(
    name=SYSTEM_PROMPT,
    title="Conversation system prompt",
    description=(
        "The conversation's frozen system prompt, as one user message (MCP has no system "
        "role: use its text as the system prompt). Built on the first turn, the same bytes "
        "on every later one."
    ),
    arguments=[*_CONTEXT_ARGUMENTS, _PROMPT_ARGUMENT],
)


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_CONTEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "conversation_id": _string("The conversation's id."),
        "cwd": _string(_CWD),
        "model": _string("The model, e.g. gpt-5."),
        "provider": _string("The provider, e.g. openai, anthropic."),
        "label": _string("The label to build from (default: the host's)."),
        "prompt": _string(_PROMPT),
    },
    "required": ["conversation_id"],
    "additionalProperties": False,
}
_VARIANT_PROPERTIES: dict[str, Any] = {
    "provider": _string("The variant's provider (absent: any)."),
    "model": _string("The variant's model (absent: any; needs a provider)."),
}


def _tool(
    name: str,
    title: str,
    description: str,
    schema: dict[str, Any],
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool = True,
) -> types.Tool:
    return types.Tool(
        name=name,
        title=title,
        description=description,
        input_schema=schema,
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=read_only,
            destructive_hint=None if read_only else destructive,
            idempotent_hint=None if read_only else idempotent,
            open_world_hint=False,
        ),
    )


_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

_READ_TOOL_DECLARATIONS = (
    _tool(
        "get_system_prompt",
        "Get a conversation's system prompt",
        "The conversation's frozen system prompt (built on its first turn, the same bytes "
        "on every later one): the text, and its sha256, template version, label, release "
        "and context as structured content.",
        _CONTEXT_SCHEMA,
        read_only=True,
    ),
    _tool(
        "compact_system_prompt",
        "Compact a conversation",
        "Rebuild the conversation's prompt for a compaction turn: the text is the prompt "
        "of the compaction turn; later turns get the new frozen prompt. Arguments left "
        "out keep the conversation's frozen context (context_kept names them).",
        _CONTEXT_SCHEMA,
        read_only=False,
        destructive=False,
        idempotent=False,
    ),
    _tool(
        "list_fragments",
        "List fragments",
        "Every fragment of the library, with its variants (provider, model).",
        _EMPTY_SCHEMA,
        read_only=True,
    ),
    _tool(
        "get_fragment",
        "Get a fragment",
        "A fragment rendered as the variant for a provider and model gets it.",
        {
            "type": "object",
            "properties": {"name": _string("The fragment's name."), **_VARIANT_PROPERTIES},
            "required": ["name"],
            "additionalProperties": False,
        },
        read_only=True,
    ),
    _tool(
        "list_prompts",
        "List named prompts",
        "The named prompts this caller may use (support/triage, coding/reviewer…), with "
        "their descriptions and tags: the values of the prompt argument.",
        _EMPTY_SCHEMA,
        read_only=True,
    ),
    _tool(
        "list_labels",
        "List labels",
        "The labels (production, staging…) and what each serves (prompt authors only).",
        _EMPTY_SCHEMA,
        read_only=True,
    ),
)
_WRITE_TOOL_DECLARATIONS = (
    _tool(
        "save_fragment",
        "Save a fragment",
        "Save a new version of a fragment's variant in the working copy (prompt authors).",
        {
            "type": "object",
            "properties": {
                "name": _string("The fragment's name."),
                "text": _string("The variant's template source."),
                **_VARIANT_PROPERTIES,
            },
            "required": ["name", "text"],
            "additionalProperties": False,
        },
        read_only=False,
        destructive=False,
        idempotent=False,
    ),
    _tool(
        "delete_fragment",
        "Delete a fragment variant",
        "Delete a fragment's variant in the working copy (a deleted version; a save restores it).",
        {
            "type": "object",
            "properties": {"name": _string("The fragment's name."), **_VARIANT_PROPERTIES},
            "required": ["name"],
            "additionalProperties": False,
        },
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    _tool(
        "create_release",
        "Release the working copy",
        "Release the working copy (the template and every live fragment variant).",
        {
            "type": "object",
            "properties": {"message": _string("What the release changes.")},
            "additionalProperties": False,
        },
        read_only=False,
        destructive=False,
        idempotent=True,
    ),
    _tool(
        "set_label",
        "Move a label",
        'Create or move a label to a target: "latest", {"release": N} or a split '
        "(moving a protected label needs the publish permission).",
        {
            "type": "object",
            "properties": {
                "name": _string("The label's name."),
                "target": {
                    "description": 'The target: "latest", {"release": N} or '
                    '{"split": [{"release": N or "latest", "weight": basis points}, …]}.',
                    "anyOf": [{"type": "string"}, {"type": "object"}],
                },
                "message": _string("Why it moves."),
            },
            "required": ["name", "target"],
            "additionalProperties": False,
        },
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
)


# Answers --------------------------------------------------------------------------------


def prompt_meta(result: PromptResult) -> dict[str, Any]:
    """A frozen prompt's metadata as the tools' structured content shows it."""
    return {
        "conversation_id": result.conversation_id,
        "sha256": result.sha256,
        "template_version": result.template_version,
        "label": result.label,
        "release": result.release,
        "arm": result.arm,
        "constructed_at": (
            None if result.constructed_at is None else result.constructed_at.isoformat()
        ),
        "cwd": result.cwd,
        "model": result.model,
        "provider": result.provider,
        "prompt": result.prompt,
        "is_fallback": result.is_fallback,
        "context_mismatch": list(result.context_mismatch),
    }


def _release_words(result: PromptResult) -> str:
    if result.label is None:
        return "no label"
    served = "latest (the working copy)" if result.release is None else f"release {result.release}"
    return f"label {result.label}, {served}"


def _system_prompt_description(result: PromptResult) -> str:
    """The same words for the same frozen prompt (``from_cache`` and the turn's
    mismatch are not in them), so every later get answers the same bytes."""
    if result.text is None:
        why = (
            " (the configured fallback: the sysprompt server could not be reached)"
            if result.is_fallback
            else ""
        )
        return f"Conversation {result.conversation_id} has no system prompt: send none{why}."
    if result.is_fallback:
        return (
            f"The system prompt of conversation {result.conversation_id}: the configured "
            "fallback (the sysprompt server could not be reached). MCP has no system role: "
            "use this text as the system prompt."
        )
    version = "default" if result.template_version in (None, 0) else result.template_version
    named = "" if result.prompt in (None, "default") else f"prompt {result.prompt}, "
    return (
        f"The system prompt of conversation {result.conversation_id} (MCP has no system role: "
        f"use this text as the system prompt). sha256 {result.sha256}, {named}template "
        f"version {version}, {_release_words(result)}."
    )


def _system_prompt_answer(result: PromptResult) -> types.GetPromptResult:
    messages = (
        []
        if result.text is None
        else [
            types.PromptMessage(
                role="user", content=types.TextContent(type="text", text=result.text)
            )
        ]
    )
    return types.GetPromptResult(description=_system_prompt_description(result), messages=messages)


def _fragment_answer(fragment: FragmentText) -> types.GetPromptResult:
    variant = ", ".join(
        f"{key} {value}"
        for key, value in (("provider", fragment.provider), ("model", fragment.model))
        if value is not None
    )
    which = f"the {variant} variant" if variant else "the default variant"
    version = "" if fragment.version is None else f", version {fragment.version}"
    return types.GetPromptResult(
        description=f"Fragment {fragment.name}: {which}{version}, rendered.",
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(type="text", text=fragment.text)
            )
        ],
    )


def _prompt_declaration(summary: PromptSummary) -> types.Prompt:
    described = f": {summary.description}" if summary.description else ""
    return types.Prompt(
        name=PROMPT_PREFIX + summary.name,
        title=f"System prompt of {summary.name}",
        description=(
            f"A conversation's frozen system prompt built from the named prompt "
            f"{summary.name}{described} (as system-prompt with prompt={summary.name})."
        ),
        arguments=list(_CONTEXT_ARGUMENTS),
    )


def _prompts_listed(summaries: Sequence[PromptSummary] | None) -> list[PromptSummary]:
    """The named prompts ``prompts/list`` shows: none when the backend cannot say or
    ``default`` is the only one (the list a deployment had before named prompts)."""
    if summaries is None or all(summary.name == "default" for summary in summaries):
        return []
    return list(summaries)


def _fragment_declaration(summary: FragmentSummary) -> types.Prompt:
    variants = ", ".join(
        "default"
        if variant.provider is None
        else variant.provider + ("" if variant.model is None else f"/{variant.model}")
        for variant in summary.variants
    )
    return types.Prompt(
        name=FRAGMENT_PREFIX + summary.name,
        title=f"Fragment {summary.name}",
        description=(
            f"The library fragment {summary.name}, rendered for a provider and model"
            + (f" (variants: {variants})." if variants else ".")
        ),
        arguments=list(_VARIANT_ARGUMENTS),
    )


def _tool_result(text: str, structured: Mapping[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(structured),
    )


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _error_text(error: SyspromptError) -> str:
    return error.message


def _mcp_error(error: SyspromptError) -> MCPError:
    """The MCP error of a backend failure: the API's sentence; a caller's error
    (4xx) is invalid params, the server's failure an internal error."""
    code = types.INTERNAL_ERROR if isinstance(error, ServerError) else types.INVALID_PARAMS
    return MCPError(code, _error_text(error), {"status": error.status})


# Cursors --------------------------------------------------------------------------------


def _cursor(after: str) -> str:
    return base64.urlsafe_b64encode(after.encode("utf-8")).decode("ascii")


def _after(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
        return raw.decode("utf-8")
    except (UnicodeError, ValueError, binascii.Error):
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor") from None


def _order(name: str) -> tuple[bool, str]:
    """The order of ``prompts/list``: ``system-prompt`` first, then by name."""
    return (name != SYSTEM_PROMPT, name)


def _page(
    prompts: Sequence[types.Prompt], cursor: str | None, page_size: int
) -> types.ListPromptsResult:
    """Prompts by name after the cursor's (the name the last page ended with: a page is
    stable while prompts come and go)."""
    after = _after(cursor)
    rest = [prompt for prompt in prompts if after is None or _order(prompt.name) > _order(after)]
    page = rest[:page_size]
    following = _cursor(page[-1].name) if len(rest) > page_size else None
    return types.ListPromptsResult(prompts=page, next_cursor=following)


# Arguments ------------------------------------------------------------------------------


def _optional(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{name}: must be a string.", status=400)
    return value


def _required(arguments: Mapping[str, Any], name: str) -> str:
    value = _optional(arguments, name)
    if value is None:
        raise InvalidRequest(f"{name}: this argument is required.", status=400)
    return value


@dataclass(frozen=True, slots=True)
class _Context:
    conversation_id: str
    cwd: str | None
    model: str | None
    provider: str | None
    label: str | None
    prompt: str | None


def _context(arguments: Mapping[str, Any], prompt: str | None = None) -> _Context:
    """The context arguments of a call; ``prompt`` (the MCP prompt's own, for
    ``prompt/<name>``) wins over the ``prompt`` argument."""
    return _Context(
        _required(arguments, "conversation_id"),
        _optional(arguments, "cwd"),
        _optional(arguments, "model"),
        _optional(arguments, "provider"),
        _optional(arguments, "label"),
        prompt or _optional(arguments, "prompt"),
    )


# Change notifications -------------------------------------------------------------------


class PromptChanges:
    """Tells the clients connected to a server that its prompt list changed: a
    ``notifications/prompts/list_changed`` on each 2025 handshake connection the server
    has seen a request on, and a ``PromptsListChanged`` event to every 2026
    ``subscriptions/listen`` stream. Pass it to :func:`build_server`."""

    def __init__(self, *, max_connections: int = 64) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._sessions: dict[int, ServerSession] = {}
        self._max_connections = max_connections
        self.partial = False
        """A ``prompts/list`` answered without the fragments (the server could not
        answer): the next poll that lists them tells the clients."""

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Remember the connection of every handshake-era request (the newest
        ``max_connections``)."""
        session = ctx.session
        if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            key = id(getattr(session, "_connection", session))
            self._sessions.pop(key, None)
            self._sessions[key] = session
            while len(self._sessions) > self._max_connections:
                del self._sessions[next(iter(self._sessions))]
        return await call_next(ctx)

    def forget_all(self) -> None:
        self._sessions.clear()

    async def changed(self) -> None:
        """Notify every connected client (a closed connection is forgotten)."""
        await self.bus.publish(PromptsListChanged())
        for key, session in list(self._sessions.items()):
            try:
                await session.send_prompt_list_changed()
            except Exception:  # closed or broken: it will not hear anything again
                log.debug("sysprompt-mcp: a connection is gone; forgotten", exc_info=True)
                self._sessions.pop(key, None)


async def watch_prompts(
    backend: Backend,
    changes: PromptChanges,
    *,
    interval: float,
    on_error: Callable[[Exception], None] | None = None,
) -> None:
    """Poll ``backend.fragments()`` every ``interval`` seconds and call
    ``changes.changed()`` when a fragment was added or removed (its name came or went),
    or when a ``prompts/list`` was answered without the fragments since; a failed poll
    is logged and the next one compares with the last list seen. Runs until
    cancelled."""
    known: frozenset[str] | None = None
    while True:
        try:
            names = frozenset(
                summary.name for summary in await anyio.to_thread.run_sync(backend.fragments)
            )
        except Exception as error:
            if on_error is not None:
                on_error(error)
            else:
                log.warning("sysprompt-mcp: polling the fragments failed: %s", error)
        else:
            if (known is not None and names != known) or changes.partial:
                log.info("sysprompt-mcp: the fragments changed; telling the clients")
                changes.partial = False
                await changes.changed()
            known = names
        await anyio.sleep(interval)


# The server -----------------------------------------------------------------------------


def build_server(
    backend: Backend | None = None,
    *,
    backend_for: BackendFor | None = None,
    write: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    changes: PromptChanges | None = None,
    name: str = SERVER_NAME,
    version: str = "0.1.0",
    instructions: str | None = None,
) -> Server[Any]:
    """The MCP server of sysprompt's prompts and tools.

    ``backend`` answers every request, or ``backend_for(ctx)`` gives the backend of each
    request (exactly one of them). ``write`` declares the tools that change the working
    copy or move labels (``WRITE_TOOLS``); without it they do not exist (not listed, an
    unknown tool when called). ``tools/list`` lists to each caller only the tools its
    permissions allow (:data:`TOOL_PERMISSIONS`); a declared tool called without them
    answers the API's refusal (403) as a tool error. ``page_size`` prompts a ``prompts/list`` page.
    ``changes``: the notifier the server's connections are registered with (a server
    that sends ``list_changed``; see :func:`initialization_options`).
    """
    if (backend is None) == (backend_for is None):
        raise ValueError("pass exactly one of backend and backend_for")
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    fixed = backend

    def resolve(ctx: ServerRequestContext[Any, Any]) -> Backend:
        if fixed is not None:
            return fixed
        assert backend_for is not None
        return backend_for(ctx)

    tools = _READ_TOOL_DECLARATIONS + (_WRITE_TOOL_DECLARATIONS if write else ())
    tool_names = frozenset(tool.name for tool in tools)

    async def call(function: Callable[[], _T]) -> _T:
        return await anyio.to_thread.run_sync(function)

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        chosen = resolve(ctx)
        try:
            summaries = await call(chosen.fragments)
        except ServerError as error:
            # The server cannot answer: system-prompt still works from the cache, so
            # it is listed alone; the fragments come back with a list_changed.
            log.warning("sysprompt-mcp: listing the fragments failed: %s", error)
            summaries = ()
            if changes is not None:
                changes.partial = True
        except SyspromptError as error:
            raise _mcp_error(error) from None
        try:
            named = _prompts_listed(await call(chosen.named_prompts))
        except SyspromptError as error:
            # The server cannot say which: the list it had before named prompts.
            log.info("sysprompt-mcp: listing the named prompts failed: %s", error)
            named = []
        prompts = [_SYSTEM_PROMPT_DECLARATION]
        prompts += (_prompt_declaration(summary) for summary in named)
        prompts += (_fragment_declaration(summary) for summary in summaries)
        prompts.sort(key=lambda prompt: _order(prompt.name))
        return _page(prompts, None if params is None else params.cursor, page_size)

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        chosen = resolve(ctx)
        arguments = params.arguments or {}
        try:
            if params.name == SYSTEM_PROMPT or params.name.startswith(PROMPT_PREFIX):
                own = params.name[len(PROMPT_PREFIX) :] if params.name != SYSTEM_PROMPT else None
                context = _context(arguments, own)
                result = await call(
                    lambda: chosen.system_prompt(
                        context.conversation_id,
                        cwd=context.cwd,
                        model=context.model,
                        provider=context.provider,
                        label=context.label,
                        prompt=context.prompt,
                    )
                )
                return _system_prompt_answer(result)
            if params.name.startswith(FRAGMENT_PREFIX):
                fragment_name = params.name[len(FRAGMENT_PREFIX) :]
                provider = _optional(arguments, "provider")
                model = _optional(arguments, "model")
                fragment = await call(
                    lambda: chosen.fragment(fragment_name, provider=provider, model=model)
                )
                return _fragment_answer(fragment)
        except SyspromptError as error:
            raise _mcp_error(error) from None
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The tools this caller may use: each that needs a permission
        (:data:`TOOL_PERMISSIONS`) only when the backend says the caller has it."""
        chosen = resolve(ctx)
        try:
            granted = await call(chosen.permissions)
        except ServerError as error:
            # The server cannot say: the tools every caller may use, and no more.
            log.warning("sysprompt-mcp: asking what the token may do failed: %s", error)
            granted = frozenset()
        except SyspromptError as error:
            raise _mcp_error(error) from None
        listed = [
            tool
            for tool in tools
            if tool.name not in TOOL_PERMISSIONS or TOOL_PERMISSIONS[tool.name] in granted
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in tool_names:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        chosen = resolve(ctx)
        arguments = params.arguments or {}
        try:
            return await _answer_tool(chosen, params.name, arguments, call)
        except SyspromptError as error:
            # A tool's failure is a result the model reads (the spec's tool execution
            # error), carrying the API's sentence and status.
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=_error_text(error))],
                structured_content={"error": _error_text(error), "status": error.status},
                is_error=True,
            )

    server: Server[Any] = Server(
        name,
        version=version,
        title="sysprompt",
        description="Frozen system prompts, the prompt library and its labels.",
        instructions=instructions,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=None if changes is None else changes.listen,
    )
    if changes is not None:
        server.middleware.append(changes.middleware)
    return server


def initialization_options(
    server: Server[Any], *, changes: PromptChanges | None = None
) -> InitializationOptions:
    """The options a connection of ``server`` starts with: ``prompts.listChanged``
    when ``changes`` notifies its clients."""
    return server.create_initialization_options(
        NotificationOptions(prompts_changed=changes is not None)
    )


async def _answer_tool(
    backend: Backend,
    name: str,
    arguments: Mapping[str, Any],
    call: Callable[[Callable[[], Any]], Awaitable[Any]],
) -> types.CallToolResult:
    if name in ("get_system_prompt", "compact_system_prompt"):
        context = _context(arguments)
        function = backend.system_prompt if name == "get_system_prompt" else backend.compact
        answer = await call(
            lambda: function(
                context.conversation_id,
                cwd=context.cwd,
                model=context.model,
                provider=context.provider,
                label=context.label,
                prompt=context.prompt,
            )
        )
        if isinstance(answer, CompactResult):
            meta = prompt_meta(answer.prompt)
            text = answer.compaction_prompt or ""
            return _tool_result(
                text,
                {
                    "compaction_prompt": answer.compaction_prompt,
                    "text": answer.prompt.text,
                    **meta,
                    "context_kept": list(answer.context_kept),
                },
            )
        assert isinstance(answer, PromptResult)
        return _tool_result(answer.text or "", {"text": answer.text, **prompt_meta(answer)})
    if name == "list_fragments":
        summaries: Sequence[FragmentSummary] = await call(backend.fragments)
        fragments = [
            {
                "name": summary.name,
                "variants": [
                    {"provider": variant.provider, "model": variant.model}
                    for variant in summary.variants
                ],
            }
            for summary in summaries
        ]
        return _tool_result(_json_text(fragments), {"fragments": fragments})
    if name == "get_fragment":
        fragment_name = _required(arguments, "name")
        provider = _optional(arguments, "provider")
        model = _optional(arguments, "model")
        fragment: FragmentText = await call(
            lambda: backend.fragment(fragment_name, provider=provider, model=model)
        )
        return _tool_result(
            fragment.text,
            {
                "name": fragment.name,
                "text": fragment.text,
                "provider": fragment.provider,
                "model": fragment.model,
                "version": fragment.version,
            },
        )
    if name == "list_prompts":
        found = await call(backend.named_prompts)
        if found is None:
            raise NotFound("This sysprompt server has no named prompts to list.", status=404)
        listed = [
            {"name": summary.name, "description": summary.description, "tags": list(summary.tags)}
            for summary in found
        ]
        return _tool_result(_json_text(listed), {"prompts": listed})
    if name == "list_labels":
        labels = [dict(label) for label in await call(backend.labels)]
        return _tool_result(_json_text(labels), {"labels": labels})
    if name == "save_fragment":
        fragment_name = _required(arguments, "name")
        given = arguments.get("text")
        if not isinstance(given, str):
            raise InvalidRequest("text: this argument is required (a string).", status=400)
        source: str = given
        provider = _optional(arguments, "provider")
        model = _optional(arguments, "model")
        saved = await call(
            lambda: backend.save_fragment(
                fragment_name, text=source, provider=provider, model=model
            )
        )
        return _tool_result(_json_text(saved), dict(saved))
    if name == "delete_fragment":
        fragment_name = _required(arguments, "name")
        provider = _optional(arguments, "provider")
        model = _optional(arguments, "model")
        deleted = await call(
            lambda: backend.delete_fragment(fragment_name, provider=provider, model=model)
        )
        return _tool_result(_json_text(deleted), dict(deleted))
    if name == "create_release":
        message = _optional(arguments, "message")
        release = await call(lambda: backend.create_release(message=message))
        return _tool_result(_json_text(release), dict(release))
    if name == "set_label":
        label_name = _required(arguments, "name")
        if "target" not in arguments:
            raise InvalidRequest("target: this argument is required.", status=400)
        target = arguments["target"]
        message = _optional(arguments, "message")
        moved = await call(lambda: backend.set_label(label_name, target=target, message=message))
        return _tool_result(_json_text(moved), dict(moved))
    raise NotFound(f"Unknown tool: {name}")

"""sysprompt over the Model Context Protocol.

:class:`Backend` (what the prompts and tools ask of the place they are served from) and
its value types import nothing of the ``mcp`` SDK. :func:`build_server`,
:class:`PromptChanges`, :func:`watch_prompts` and the declarations come from
:mod:`sysprompt_client.mcp.server` and need the SDK (``pip install
'sysprompt-client[mcp]'``); they are loaded when first used, so a missing SDK is a
clear ``ImportError`` naming the extra. ``sysprompt-mcp`` (``python -m
sysprompt_client.mcp``) serves them over stdio (:mod:`sysprompt_client.mcp.stdio`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sysprompt_client.mcp.backend import (
    Backend,
    FragmentSummary,
    FragmentText,
    PromptSummary,
    Variant,
)

if TYPE_CHECKING:
    from sysprompt_client.mcp.server import (
        DEFAULT_PAGE_SIZE,
        FRAGMENT_PREFIX,
        PROMPT_PREFIX,
        READ_TOOLS,
        SERVER_NAME,
        SYSTEM_PROMPT,
        TOOL_PERMISSIONS,
        WRITE_TOOLS,
        BackendFor,
        PromptChanges,
        build_server,
        initialization_options,
        prompt_meta,
        watch_prompts,
    )

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FRAGMENT_PREFIX",
    "INSTALL_HINT",
    "PROMPT_PREFIX",
    "READ_TOOLS",
    "SERVER_NAME",
    "SYSTEM_PROMPT",
    "TOOL_PERMISSIONS",
    "WRITE_TOOLS",
    "Backend",
    "BackendFor",
    "FragmentSummary",
    "FragmentText",
    "PromptChanges",
    "PromptSummary",
    "Variant",
    "build_server",
    "initialization_options",
    "prompt_meta",
    "watch_prompts",
]

INSTALL_HINT = (
    "sysprompt's MCP server needs the official MCP Python SDK, an optional extra of "
    "sysprompt-client: pip install 'sysprompt-client[mcp]'  (or: pip install 'mcp>=2.3,<3')"
)

_FROM_SERVER = frozenset(__all__) - {
    "INSTALL_HINT",
    "Backend",
    "FragmentSummary",
    "FragmentText",
    "PromptSummary",
    "Variant",
}


def __getattr__(name: str) -> Any:
    if name not in _FROM_SERVER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        server = importlib.import_module("sysprompt_client.mcp.server")
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] in ("mcp", "mcp_types"):
            raise ImportError(INSTALL_HINT) from error
        raise
    return getattr(server, name)

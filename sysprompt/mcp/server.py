"""The MCP server ``/mcp`` serves: the shared declaration of sysprompt's prompts and
tools (``sysprompt_client.mcp.build_server``, the same as the ``sysprompt-mcp``
command's), answered by :class:`~sysprompt.mcp.backend.DjangoBackend` for the calling
user. One server per request: it costs a few objects, and the user is the request's."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractUser
from mcp.server import Server

from sysprompt.mcp.backend import DjangoBackend
from sysprompt_client.mcp import build_server

INSTRUCTIONS = (
    "sysprompt serves each conversation's frozen system prompt: get the prompt "
    "system-prompt (or call get_system_prompt) with the conversation's id on every turn "
    "and use its text as the system prompt; the first turn needs cwd. The library's "
    "fragments are the prompts fragment/<name>."
)


def mcp_server(*, user: AbstractUser, write: bool) -> Server[Any]:
    """The MCP server for ``user``; ``write``: the write tools are declared
    (``SYSPROMPT_MCP_WRITE``; each still needs the user's permission)."""
    return build_server(DjangoBackend(user), write=write, instructions=INSTRUCTIONS)

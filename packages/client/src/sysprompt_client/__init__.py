"""sysprompt-client: the agent host's side of sysprompt.

:class:`Client` (and :class:`AsyncClient`, the same calls awaited) gives each
conversation its frozen system prompt: the server's ``resolve`` on the first turn, the
cache on every later one (no request), revalidated in the background once older than
``max_age``; a configured fallback when the server cannot answer a first turn.
"""

from sysprompt_client.aio import AsyncClient
from sysprompt_client.cache import DirectoryCache, MemoryCache
from sysprompt_client.client import Client
from sysprompt_client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PreconditionFailed,
    ServerError,
    SyspromptError,
    Unauthorized,
    Unavailable,
)
from sysprompt_client.local import is_host_local, resolve_host_values
from sysprompt_client.results import CompactResult, PromptResult, Template

__all__ = [
    "AsyncClient",
    "Client",
    "CompactResult",
    "Conflict",
    "DirectoryCache",
    "Forbidden",
    "InvalidRequest",
    "MemoryCache",
    "NotFound",
    "PreconditionFailed",
    "PromptResult",
    "ServerError",
    "SyspromptError",
    "Template",
    "Unauthorized",
    "Unavailable",
    "is_host_local",
    "resolve_host_values",
]

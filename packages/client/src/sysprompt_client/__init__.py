"""sysprompt-client: the agent host's side of sysprompt.

:class:`Client` (and :class:`AsyncClient`, the same calls awaited) gives each
conversation its frozen system prompt: the server's ``resolve`` on the first turn, the
cache on every later one (no request), revalidated in the background once older than
``max_age``; a configured fallback when the server cannot answer a first turn.

The message functions that put the prompt into a provider request
(:func:`openai_chat`, :func:`openai_responses`, :func:`anthropic_messages`,
:func:`apply_system_prompt`, :func:`with_system_prompt`, …) are those of
``sysprompt_core.messages``, exported here too with their types: everything that
module exports, the same objects.
"""

from sysprompt_client.aio import AsyncClient
from sysprompt_client.cache import DirectoryCache, MemoryCache
from sysprompt_client.client import Client
from sysprompt_client.errors import (
    Conflict,
    Forbidden,
    Gone,
    InvalidRequest,
    NotFound,
    PreconditionFailed,
    ServerError,
    SyspromptError,
    Unauthorized,
    Unavailable,
)
from sysprompt_client.local import is_host_local, resolve_host_values
from sysprompt_client.results import Caller, CompactResult, PromptResult, Template
from sysprompt_core.messages import (
    DEFAULT_MIN_SPLIT_CHARS,
    LOCK_KEY,
    PROMPT_CACHE_KEY_MAX_LENGTH,
    PROMPT_CACHE_KEY_PREFIX,
    SYSTEM_ROLES,
    CacheTTL,
    LockedPolicy,
    MessageError,
    Prompt,
    PromptLike,
    Role,
    anthropic_messages,
    anthropic_system_blocks,
    apply_system_prompt,
    is_locked,
    is_system,
    lock,
    openai_chat,
    openai_responses,
    prompt_cache_key,
    prompt_text,
    strip_markers,
    with_system_prompt,
)

__all__ = [
    "DEFAULT_MIN_SPLIT_CHARS",
    "LOCK_KEY",
    "PROMPT_CACHE_KEY_MAX_LENGTH",
    "PROMPT_CACHE_KEY_PREFIX",
    "SYSTEM_ROLES",
    "AsyncClient",
    "CacheTTL",
    "Caller",
    "Client",
    "CompactResult",
    "Conflict",
    "DirectoryCache",
    "Forbidden",
    "Gone",
    "InvalidRequest",
    "LockedPolicy",
    "MemoryCache",
    "MessageError",
    "NotFound",
    "PreconditionFailed",
    "Prompt",
    "PromptLike",
    "PromptResult",
    "Role",
    "ServerError",
    "SyspromptError",
    "Template",
    "Unauthorized",
    "Unavailable",
    "anthropic_messages",
    "anthropic_system_blocks",
    "apply_system_prompt",
    "is_host_local",
    "is_locked",
    "is_system",
    "lock",
    "openai_chat",
    "openai_responses",
    "prompt_cache_key",
    "prompt_text",
    "resolve_host_values",
    "strip_markers",
    "with_system_prompt",
]

"""Message assembly: a conversation's system prompt into a provider request (agent hosts §3).

Pure functions, no I/O, no provider SDK: they build the plain lists and dicts the SDKs
take, and never mutate what they are given.

* ``assembly`` — into the messages: :func:`with_system_prompt` (prepend, never stored),
  :func:`apply_system_prompt` (replace the content of the first system or developer
  message, its role kept, or insert one, idempotent; a message marked locked with
  :func:`lock` is never replaced) and :func:`strip_markers` (the lock marker never
  reaches a provider);
* ``shapes`` — into a request, where the provider caches it: :func:`openai_chat`
  (``system`` or ``developer`` message), :func:`openai_responses` (``instructions`` on
  every call), :func:`anthropic_messages` (``system`` blocks with ``cache_control``, split
  at the shared prefix when it is long enough), and :func:`prompt_cache_key` (OpenAI's
  routing key, from the shared prefix).

The prompt is a string, an object with ``text`` (and ``shared_prefix_chars``) such as
the client's result, or ``None`` for no prompt.
"""

from __future__ import annotations

from sysprompt_core.messages.assembly import (
    LOCK_KEY,
    SYSTEM_ROLES,
    LockedPolicy,
    MessageError,
    Prompt,
    PromptLike,
    Role,
    apply_system_prompt,
    is_locked,
    is_system,
    lock,
    prompt_text,
    strip_markers,
    with_system_prompt,
)
from sysprompt_core.messages.shapes import (
    DEFAULT_MIN_SPLIT_CHARS,
    PROMPT_CACHE_KEY_MAX_LENGTH,
    PROMPT_CACHE_KEY_PREFIX,
    CacheTTL,
    anthropic_messages,
    anthropic_system_blocks,
    openai_chat,
    openai_responses,
    prompt_cache_key,
)

__all__ = [
    "DEFAULT_MIN_SPLIT_CHARS",
    "LOCK_KEY",
    "PROMPT_CACHE_KEY_MAX_LENGTH",
    "PROMPT_CACHE_KEY_PREFIX",
    "SYSTEM_ROLES",
    "CacheTTL",
    "LockedPolicy",
    "MessageError",
    "Prompt",
    "PromptLike",
    "Role",
    "anthropic_messages",
    "anthropic_system_blocks",
    "apply_system_prompt",
    "is_locked",
    "is_system",
    "lock",
    "openai_chat",
    "openai_responses",
    "prompt_cache_key",
    "prompt_text",
    "strip_markers",
    "with_system_prompt",
]

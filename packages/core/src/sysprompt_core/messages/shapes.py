"""Request shapes: a provider call's keyword arguments, with the system prompt where that
provider caches it (agent hosts §3).

    client.chat.completions.create(model=m, **openai_chat(messages, prompt))
    client.responses.create(model=m, **openai_responses(input, prompt))
    client.messages.create(model=m, max_tokens=n, **anthropic_messages(messages, prompt))

* **OpenAI Chat Completions** — :func:`openai_chat`: ``messages`` with the prompt
  applied (:func:`~sysprompt_core.messages.assembly.apply_system_prompt`: the first
  system or developer message's content replaced, its role kept, or one inserted first
  with ``role``: ``"developer"`` for models that want it), and a ``prompt_cache_key``.
* **OpenAI Responses** — :func:`openai_responses`: the prompt as ``instructions``, sent
  on every call (the API does not carry instructions over from a
  ``previous_response_id``), ``input`` as given, and a ``prompt_cache_key``. A system
  message the host keeps in ``input`` stays there: ``instructions`` is a slot of its
  own, it replaces nothing.
* **Anthropic Messages** — :func:`anthropic_messages`: ``system`` as text blocks
  (:func:`anthropic_system_blocks`), ``messages`` without system messages (Anthropic
  has no system role): the prompt applied as for OpenAI, then every system or developer
  message moved, in order, into ``system`` after the prompt's blocks.

Every shape strips the lock marker, and leaves out what has no value: no ``system`` or
``instructions`` without a prompt, no key unless one is derived or given. Nothing is
mutated; the messages the shapes do not change are the caller's own objects.

**The shared prefix.** ``shared_prefix_chars`` (spec §1) is how many code points at the
start of the prompt are the same in every conversation of the agent host, provider and
model. Each shape takes it as an argument or, when that is ``None``, from the prompt
object's ``shared_prefix_chars`` (the client's result has one); else it is unknown.

* :func:`prompt_cache_key` is ``"sysprompt-"`` and the SHA-256 of the shared prefix
  (hex, cut to 64 characters in all: OpenAI's limit), so conversations that share the
  prefix are routed to the same cache machine, and every turn of a conversation with
  them. When the prefix is unknown or empty the key is the whole prompt's: nothing is
  shared, and one key for every prompt would pile unrelated conversations onto one
  machine for nothing.
* Anthropic caches at the blocks that carry ``cache_control``: two blocks, the shared
  prefix and the rest, each with it, let a new conversation read the prefix from the
  cache while each conversation's later turns read the whole prompt. Anthropic caches no
  prefix shorter than the model's minimum (1024 tokens on Sonnet and Opus, more on some
  models; about 4 characters a token of English, so ``DEFAULT_MIN_SPLIT_CHARS`` = 4096),
  and silently: below it the first breakpoint would be spent (a request has four) on a
  prefix that is never cached, so the prompt stays one block with ``cache_control``.
  A host whose tools (cached before the system prompt) or model change the sums passes
  its own ``min_split_chars``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from hashlib import sha256
from typing import Any, Literal, TypeAlias

from sysprompt_core.messages.assembly import (
    LockedPolicy,
    MessageError,
    Prompt,
    Role,
    apply_at,
    is_system,
    prompt_text,
    strip_markers,
)

PROMPT_CACHE_KEY_PREFIX = "sysprompt-"
PROMPT_CACHE_KEY_MAX_LENGTH = 64
"""OpenAI's limit on ``prompt_cache_key``, in characters."""
DEFAULT_MIN_SPLIT_CHARS = 4096
"""The shortest shared prefix, in code points, worth its own Anthropic cache block
(about 1024 tokens, Anthropic's smallest cacheable prompt on Sonnet and Opus)."""

CacheTTL: TypeAlias = Literal["5m", "1h"]


def prompt_cache_key(prompt: Prompt, shared_prefix_chars: int | None = None) -> str:
    """``"sysprompt-"`` and the SHA-256 (hex) of the prompt's shared prefix, 64
    characters in all; of the whole prompt when the prefix is unknown or empty.

    ``shared_prefix_chars`` beyond the prompt's length means all of it. Raises
    :class:`MessageError` when there is no prompt (a key needs a text).
    """
    text = prompt_text(prompt)
    if text is None:
        raise MessageError("There is no prompt, so there is no prompt_cache_key to derive.")
    shared = _shared_chars(prompt, shared_prefix_chars)
    prefix = text[:shared] if shared else text
    digest = sha256(prefix.encode("utf-8", "surrogatepass")).hexdigest()
    return (PROMPT_CACHE_KEY_PREFIX + digest)[:PROMPT_CACHE_KEY_MAX_LENGTH]


def openai_chat(
    messages: Iterable[object],
    prompt: Prompt,
    *,
    role: Role = "system",
    locked_policy: LockedPolicy = "insert",
    shared_prefix_chars: int | None = None,
    prompt_cache_key: bool | str = True,
) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create``: ``messages`` (and
    ``prompt_cache_key``).

    ``messages`` is :func:`~sysprompt_core.messages.assembly.apply_system_prompt`'s list
    without lock markers: a replaced message keeps its role; ``role`` is that of an
    inserted one. ``prompt_cache_key``: ``True`` derives it from the shared
    prefix (:func:`prompt_cache_key`; none without a prompt, or when the prompt is left
    out for a locked message: the request does not start with it), ``False`` sends
    none, a string is sent as it is.
    """
    text = prompt_text(prompt)
    applied, at = apply_at(messages, text, role=role, locked_policy=locked_policy)
    kwargs: dict[str, Any] = {"messages": strip_markers(applied)}
    sent = text if at is not None else None  # a prompt left out keys nothing
    _add_cache_key(kwargs, prompt, sent, shared_prefix_chars, prompt_cache_key)
    return kwargs


def openai_responses(
    input: str | Iterable[object],
    prompt: Prompt,
    *,
    shared_prefix_chars: int | None = None,
    prompt_cache_key: bool | str = True,
) -> dict[str, Any]:
    """The keyword arguments of ``client.responses.create``: ``input``, and
    ``instructions`` and ``prompt_cache_key`` when there is a prompt.

    ``input`` is a string as it is, or a list without lock markers. ``prompt_cache_key``
    as for :func:`openai_chat`.
    """
    text = prompt_text(prompt)
    kwargs: dict[str, Any] = {}
    if text is not None:
        kwargs["instructions"] = text
    kwargs["input"] = input if isinstance(input, str) else strip_markers(input)
    _add_cache_key(kwargs, prompt, text, shared_prefix_chars, prompt_cache_key)
    return kwargs


def anthropic_system_blocks(
    prompt: Prompt,
    *,
    shared_prefix_chars: int | None = None,
    ttl: CacheTTL | None = None,
    min_split_chars: int = DEFAULT_MIN_SPLIT_CHARS,
) -> list[dict[str, Any]]:
    """The prompt as Anthropic ``system`` text blocks, each with ``cache_control``.

    Two blocks — the shared prefix, then the rest — when the prefix has at least
    ``min_split_chars`` code points and both parts hold more than whitespace (Anthropic
    refuses a blank text block); otherwise one. No block at all without a prompt or for
    a blank one. ``ttl`` (``"5m"``, ``"1h"``) goes into every ``cache_control``.
    """
    if min_split_chars < 1:
        raise MessageError(f"min_split_chars is at least 1, not {min_split_chars!r}.")
    shared = _shared_chars(prompt, shared_prefix_chars)
    text = prompt_text(prompt)
    if text is None or not text.strip():
        return []
    control: dict[str, str] = {"type": "ephemeral"}
    if ttl is not None:
        control["ttl"] = ttl
    parts = [text]
    if shared is not None and min_split_chars <= shared < len(text):
        head, tail = text[:shared], text[shared:]
        if head.strip() and tail.strip():
            parts = [head, tail]
    return [{"type": "text", "text": part, "cache_control": dict(control)} for part in parts]


def anthropic_messages(
    messages: Iterable[object],
    prompt: Prompt,
    *,
    shared_prefix_chars: int | None = None,
    ttl: CacheTTL | None = None,
    min_split_chars: int = DEFAULT_MIN_SPLIT_CHARS,
    locked_policy: LockedPolicy = "insert",
) -> dict[str, Any]:
    """The keyword arguments of ``client.messages.create``: ``messages``, and ``system``
    when there is any system text.

    The prompt is applied as for OpenAI (the first system or developer message replaced,
    or the prompt put first; a locked one kept, the prompt before it or left out), then
    every system or developer message leaves ``messages`` for ``system``, in order: the
    prompt as :func:`anthropic_system_blocks`, the others' content as text blocks (a
    string becomes one block, a blank one none; a list of blocks is kept as it is),
    without ``cache_control`` of their own. The host's other messages are untouched.
    """
    text = prompt_text(prompt)
    applied, at = apply_at(messages, text, locked_policy=locked_policy)
    system: list[Any] = []
    rest: list[Any] = []
    for index, message in enumerate(applied):
        if index == at:
            system += anthropic_system_blocks(
                prompt,
                shared_prefix_chars=shared_prefix_chars,
                ttl=ttl,
                min_split_chars=min_split_chars,
            )
        elif is_system(message):
            system += _blocks(message.get("content"))
        else:
            rest.append(message)
    kwargs: dict[str, Any] = {}
    if system:
        kwargs["system"] = system
    kwargs["messages"] = strip_markers(rest)
    return kwargs


def _blocks(content: object) -> list[Any]:
    """A system message's content as Anthropic text blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if isinstance(content, Iterable) and not isinstance(content, Mapping):
        blocks: list[Any] = []
        for part in content:
            blocks += _blocks(part) if isinstance(part, str) else [part]
        return blocks
    return [content]


def _shared_chars(prompt: Prompt, explicit: int | None) -> int | None:
    shared = explicit if explicit is not None else getattr(prompt, "shared_prefix_chars", None)
    if shared is None:
        return None
    if isinstance(shared, bool) or not isinstance(shared, int) or shared < 0:
        raise MessageError(
            f"shared_prefix_chars is a count of characters (0 or more), not {shared!r}."
        )
    return shared


def _add_cache_key(
    kwargs: dict[str, Any],
    prompt: Prompt,
    text: str | None,
    shared_prefix_chars: int | None,
    option: bool | str,
) -> None:
    if isinstance(option, str):
        if not 0 < len(option) <= PROMPT_CACHE_KEY_MAX_LENGTH:
            raise MessageError(
                f"A prompt_cache_key has 1 to {PROMPT_CACHE_KEY_MAX_LENGTH} characters; "
                f"this one has {len(option)}."
            )
        kwargs["prompt_cache_key"] = option
    elif option and text is not None:
        kwargs["prompt_cache_key"] = prompt_cache_key(
            text, _shared_chars(prompt, shared_prefix_chars)
        )

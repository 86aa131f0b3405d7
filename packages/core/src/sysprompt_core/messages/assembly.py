"""Putting a conversation's system prompt into its messages (agent hosts §3).

Two ways, both pure: each returns a new list, and neither mutates the caller's list or
any of its messages, so a host that stores ``messages`` never stores the prompt.

* **prepend** — :func:`with_system_prompt` puts ``{"role": "system", "content":
  prompt}`` first, in front of whatever the messages are. For a host whose history holds
  no system prompt and that adds it on every call (never stored).
* **replace or insert** — :func:`apply_system_prompt` replaces the content of the first
  system (or developer) message — its role and other keys stay as they are — or inserts
  one at index 0 when there is none; applying it twice gives the same list as once. A
  message marked **locked** (``LOCK_KEY`` true, see :func:`lock`: the host's own planner
  prompt, for example) is never replaced: the prompt is inserted at index 0, before it,
  or left out if the host asks (``locked_policy="omit"``).
* :func:`strip_markers` removes the lock marker, which must never reach a provider. The
  request shapes (:mod:`sysprompt_core.messages.shapes`) strip it themselves, and so does
  :func:`with_system_prompt`, whose list is meant to be sent as it is;
  :func:`apply_system_prompt` keeps it (its result must still say which message is
  locked for a second application to give the same list), so a host sending that list
  itself strips it first.

A message is a mapping in the provider's shape (``{"role": ..., "content": ...}``); a
*system message* is one whose role is ``system`` or ``developer``. Any other item — an
SDK object the host appended from a response, a Responses API item without a role — is
passed through as it is and is never taken for a system message. Messages are copied
only where something changes (the replaced one, a locked one losing its marker); the
others are the caller's own objects in a new list (a shallow copy).

A *prompt* is the text, or anything with a ``text`` attribute (and, for the request
shapes, ``shared_prefix_chars``) such as the client's result; ``None``, or a ``text``
that is ``None``, means there is no prompt: nothing is inserted and nothing replaced.
An empty text is a prompt like any other (an empty template renders to ``""``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, TypeAlias, TypeGuard

from sysprompt_core.errors import CoreError

LOCK_KEY = "sysprompt_locked"
"""The key that marks a message locked: ``{"role": "system", "content": ...,
"sysprompt_locked": True}``. Any true value locks; the key never reaches a provider."""

SYSTEM_ROLES = frozenset({"system", "developer"})
"""The roles of a system message (OpenAI's ``developer`` is the newer name)."""

Role: TypeAlias = Literal["system", "developer"]
LockedPolicy: TypeAlias = Literal["insert", "omit"]


class MessageError(CoreError, ValueError):
    """A message-assembly argument is refused (a role, a policy, a length); the message
    says which values are accepted."""


class PromptLike(Protocol):
    """A prompt with its metadata, such as the client's result (agent hosts §2): its
    ``text``, and ``shared_prefix_chars`` read when the object has it."""

    @property
    def text(self) -> str | None: ...


Prompt: TypeAlias = str | PromptLike | None
"""What the functions accept as the prompt: its text, an object with ``text``, or
``None`` for no prompt."""


_MISSING = object()


def prompt_text(prompt: Prompt) -> str | None:
    """The text of ``prompt``: the string itself, its ``text`` attribute, or ``None``."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    text = getattr(prompt, "text", _MISSING)
    if text is None or isinstance(text, str):
        return text
    raise TypeError(
        f"A prompt is a string, None, or an object whose 'text' is a string or None; "
        f"got {type(prompt).__name__}."
    )


def is_system(message: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``message`` is a system message: a mapping whose role is ``system`` or
    ``developer``."""
    if not isinstance(message, Mapping):
        return False
    role = message.get("role")
    return isinstance(role, str) and role in SYSTEM_ROLES


def is_locked(message: object) -> bool:
    """Whether ``message`` is a mapping marked locked (``LOCK_KEY`` true)."""
    return isinstance(message, Mapping) and bool(message.get(LOCK_KEY))


def lock(message: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``message`` marked locked: :func:`apply_system_prompt` never replaces it."""
    return {**message, LOCK_KEY: True}


def strip_markers(messages: Iterable[object]) -> list[Any]:
    """A new list without the lock marker: a marked message is copied without
    ``LOCK_KEY``; every other item is the caller's own object."""
    return [_unmarked(message) for message in messages]


def with_system_prompt(
    messages: Iterable[object], prompt: Prompt, *, role: Role = "system"
) -> list[Any]:
    """A new list: the system message ``{"role": role, "content": text}`` first, then
    ``messages``; with no prompt (``None``) just a copy of ``messages``.

    The prepend way: it does not look for a system message already there (a history
    that may hold one wants :func:`apply_system_prompt`), so applying it twice prepends
    twice. Its list is meant for the provider as it is, so lock markers are stripped.
    """
    role = _role(role)
    text = prompt_text(prompt)
    rest = strip_markers(messages)
    if text is None:
        return rest
    return [{"role": role, "content": text}, *rest]


def apply_system_prompt(
    messages: Iterable[object],
    prompt: Prompt,
    *,
    role: Role = "system",
    locked_policy: LockedPolicy = "insert",
) -> list[Any]:
    """A new list with the prompt as its system message, idempotent: twice is once.

    * The first system (or developer) message, wherever it is, gets the prompt as its
      content; its role stays (a ``developer`` message stays one, as OpenAI's reasoning
      models want it) and so do its other keys.
    * If there is none, ``{"role": role, "content": text}`` is inserted at index 0:
      ``role`` is the role of an inserted message only.
    * If the first system message is locked (:func:`lock`), it is kept as it is and the
      prompt is inserted at index 0, before it (``locked_policy="insert"``) — so a
      second application finds the inserted message first and replaces it with itself —
      or left out (``"omit"``).
    * With no prompt (``None``), nothing is replaced and nothing inserted: a copy.

    Lock markers are kept (see the module's docstring): strip them
    (:func:`strip_markers`) before sending the list yourself.
    """
    result, _ = apply_at(messages, prompt_text(prompt), role=role, locked_policy=locked_policy)
    return result


def apply_at(
    messages: Iterable[object],
    text: str | None,
    *,
    role: Role = "system",
    locked_policy: LockedPolicy = "insert",
) -> tuple[list[Any], int | None]:
    """:func:`apply_system_prompt` with the text, also answering the index of the prompt's
    message in the new list (``None`` when there is none: no prompt, or left out)."""
    role = _role(role)
    if locked_policy not in ("insert", "omit"):
        raise MessageError(
            f"locked_policy is 'insert' or 'omit' (what to do with the prompt when the "
            f"first system message is locked), not {locked_policy!r}."
        )
    result = list(messages)
    if text is None:
        return result, None
    for index, item in enumerate(result):
        if not is_system(item):
            continue
        if is_locked(item):
            if locked_policy == "omit":
                return result, None
            break
        result[index] = {**item, "content": text}
        return result, index
    result.insert(0, {"role": role, "content": text})
    return result, 0


def _role(role: str) -> Role:
    if role == "system":
        return "system"
    if role == "developer":
        return "developer"
    raise MessageError(f"The prompt's role is 'system' or 'developer', not {role!r}.")


def _unmarked(message: object) -> object:
    if isinstance(message, Mapping) and LOCK_KEY in message:
        return {key: value for key, value in message.items() if key != LOCK_KEY}
    return message

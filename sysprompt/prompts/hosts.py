"""An agent host's prompts: the one its conversations get when a call names none, and
the ones it may use (named prompts §2, §4).

A first turn (or the construct of a new conversation) → :func:`new_conversation_prompt`
(the body's name, else the owner's default, else ``default``; a prompt outside the
owner's ``allowed`` list is unknown to it: 404; an archived one starts nothing: 410).
Authors read and set a host's prompts with :func:`host_prompts_state` and
:func:`host_prompts_set`. A later turn never comes here: its prompt is frozen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.utils import timezone

from sysprompt.errors import InvalidInput, PromptArchived, PromptNotFound
from sysprompt.events import records
from sysprompt.library.selectors import agent_host_id
from sysprompt.prompts.catalog import default_prompt, prompt_get, prompt_or_default
from sysprompt.prompts.models import HostPrompts, Prompt, PromptAlias
from sysprompt_core.prompt_names import (
    DEFAULT_PROMPT,
    InvalidPromptName,
    folder_check,
    in_folder,
    prompt_name_check,
)

ALLOWED_MAX_ITEMS = 1000
"""How many names and folders one host's ``allowed`` list may hold."""


def prompt_allowed(name: str, allowed: Sequence[str] | None) -> bool:
    """Whether the prompt ``name`` is in ``allowed`` (names, or folders ending in
    ``/`` that hold it at any depth); ``None`` allows every prompt."""
    if allowed is None:
        return True
    return any(
        in_folder(name, entry) if entry.endswith("/") else name == entry for entry in allowed
    )


def host_prompts(owner_id: int | None) -> HostPrompts | None:
    """The agent host ``owner_id``'s row (with its default prompt), or None."""
    if owner_id is None:
        return None
    return HostPrompts.objects.select_related("default").filter(user_id=owner_id).first()


def new_conversation_prompt(name: str | None, *, owner_id: int | None) -> Prompt:
    """The prompt a new conversation of the agent host ``owner_id`` is built from: the
    call's ``name`` (an alias followed), else the host's default, else ``default``.

    :class:`InvalidInput` (field ``prompt``) for a name that breaks the rule;
    :class:`PromptNotFound` for an unknown name or one outside the host's ``allowed``
    list (the same answer: a host learns nothing of prompts it may not use);
    :class:`PromptArchived` for an archived prompt."""
    settings = host_prompts(owner_id)
    if name is not None:
        prompt = prompt_get(name, field="prompt")
    elif settings is not None and settings.default is not None:
        prompt = settings.default
    else:
        prompt = default_prompt()
    if settings is not None and not prompt_allowed(prompt.name, settings.allowed):
        raise PromptNotFound(prompt.name if name is None else name)
    if prompt.archived:
        raise PromptArchived(prompt.name)
    return prompt


def caller_prompt(name: str | None, *, user_id: int | None) -> Prompt:
    """The prompt ``name`` as the caller ``user_id`` may use it (``None``: its default
    prompt, else ``default``): :class:`PromptNotFound` outside its ``allowed`` list.
    Archived prompts are found (reading them starts nothing)."""
    settings = host_prompts(user_id)
    if name is not None:
        prompt = prompt_get(name, field="prompt")
    elif settings is not None and settings.default is not None:
        prompt = settings.default
    else:
        prompt = default_prompt()
    if settings is not None and not prompt_allowed(prompt.name, settings.allowed):
        raise PromptNotFound(prompt.name if name is None else name)
    return prompt


@dataclass(frozen=True)
class HostPromptsState:
    """An agent host's prompts as the API shows them (``default`` None: ``default``;
    ``allowed`` None: every prompt)."""

    username: str
    default: str | None = None
    allowed: list[str] | None = None
    updated_at: datetime | None = None
    updated_by: str | None = None


def host_prompts_state(username: str) -> HostPromptsState:
    """The agent host ``username``'s prompts; :class:`AgentHostNotFound`."""
    user_id = agent_host_id(username)
    row = host_prompts(user_id)
    if row is None:
        return HostPromptsState(username=username)
    return _state(username, row)


def _state(username: str, row: HostPrompts) -> HostPromptsState:
    return HostPromptsState(
        username=username,
        default=None if row.default is None else row.default.name,
        allowed=None if row.allowed is None else list(row.allowed),
        updated_at=row.updated_at,
        updated_by=row.updated_by.get_username() if row.updated_by else None,
    )


def _allowed_valid(allowed: object) -> list[str] | None:
    """``allowed`` checked: null, or a list of prompt names and folders (``x/``) that
    exist (a folder need not hold a prompt yet); :class:`InvalidInput` naming it."""
    if allowed is None:
        return None
    if not isinstance(allowed, list):
        raise InvalidInput("allowed", "Give a list of prompt names and folders, or null.")
    if len(allowed) > ALLOWED_MAX_ITEMS:
        raise InvalidInput("allowed", f"At most {ALLOWED_MAX_ITEMS} names and folders.")
    checked: list[str] = []
    for index, entry in enumerate(allowed):
        field = f"allowed[{index}]"
        try:
            if isinstance(entry, str) and entry.endswith("/"):
                checked.append(folder_check(entry, field))
                continue
            name = prompt_name_check(entry, field)
        except InvalidPromptName as error:
            raise InvalidInput("allowed", f"{error.field}: {error.message}") from None
        if not _prompt_exists(name):
            raise InvalidInput("allowed", f"{field}: there is no prompt named {name!r}.")
        checked.append(name)
    return list(dict.fromkeys(checked))


def _prompt_exists(name: str) -> bool:
    if name == DEFAULT_PROMPT:
        return True
    return (
        Prompt.objects.filter(name=name).exists() or PromptAlias.objects.filter(name=name).exists()
    )


def _default_valid(name: object) -> Prompt | None:
    if name is None:
        return None
    if not isinstance(name, str):
        raise InvalidInput("default", "Give a prompt's name, or null for default.")
    try:
        return prompt_get(name, field="default")
    except PromptNotFound:
        raise InvalidInput("default", f"There is no prompt named {name!r}.") from None


@transaction.atomic
def host_prompts_set(
    *,
    username: str,
    default: object,
    allowed: object,
    author: AbstractBaseUser | AnonymousUser | None,
) -> HostPromptsState:
    """Set the agent host ``username``'s default prompt (``None``: ``default``) and the
    prompts it may use (``None``: every one). Unknown names are refused naming the field
    (``default`` or ``allowed``), as is a default outside ``allowed``; nothing is
    written then. Conversations already stored keep their prompt. A change is audited
    (``host.prompts_set``; the same values again record nothing).
    :class:`AgentHostNotFound` first."""
    user_id = agent_host_id(username)
    prompt = _default_valid(default)
    checked = _allowed_valid(allowed)
    shown = prompt_or_default(prompt)
    if not prompt_allowed(shown.name, checked):
        raise InvalidInput(
            "default", f"The default prompt {shown.name!r} is not in allowed: add it there."
        )
    author_id = author.pk if isinstance(author, AbstractBaseUser) else None
    before = host_prompts(user_id)
    was = (None, None) if before is None else (before.default_id, before.allowed)
    row, _ = HostPrompts.objects.update_or_create(
        user_id=user_id,
        defaults={
            "default": prompt,
            "allowed": checked,
            "updated_at": timezone.now(),
            "updated_by_id": author_id,
        },
    )
    row = HostPrompts.objects.select_related("default", "updated_by").get(pk=row.pk)
    state = _state(username, row)
    if (row.default_id, row.allowed) != was:  # what writes nothing records nothing
        records.host_prompts(
            actor=author, host=username, default=state.default, allowed=state.allowed
        )
    return state

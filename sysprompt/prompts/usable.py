"""The named prompts a user may use, for the lists that offer them (``/mcp``'s
``prompts/list`` and ``list_prompts``): not archived, and for an agent host limited to
a list (its ``allowed`` names and folders), those on it."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from sysprompt.prompts.hosts import host_prompts, prompt_allowed
from sysprompt.prompts.models import Prompt

USABLE_LISTED = 1_000
"""The most prompts such a list shows (by name): a list an MCP host reads whole."""


def prompts_usable(user: AbstractBaseUser | AnonymousUser) -> list[Prompt]:
    """The prompts ``user`` may start a conversation from, by name (at most
    :data:`USABLE_LISTED`)."""
    settings = host_prompts(user.pk if isinstance(user.pk, int) else None)
    allowed = None if settings is None else settings.allowed
    rows = Prompt.objects.filter(archived=False).order_by("name")
    if allowed is None:
        return list(rows[:USABLE_LISTED])
    usable = []
    for prompt in rows.iterator():
        if prompt_allowed(prompt.name, allowed):
            usable.append(prompt)
            if len(usable) >= USABLE_LISTED:
                break
    return usable

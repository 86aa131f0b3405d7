"""The named prompts a user may use, for the lists that offer them (``/mcp``'s
``prompts/list`` and ``list_prompts``): not archived, and for an agent host limited to
a list (``HostPrompts.allowed``: names or folders ``"support/"``), those on it."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from sysprompt.prompts.models import HostPrompts, Prompt
from sysprompt_core.prompt_names import in_folder

USABLE_LISTED = 1_000
"""The most prompts such a list shows (by name): a list an MCP host reads whole."""


def allowed_match(name: str, allowed: list[str] | None) -> bool:
    """Whether ``name`` is on an allowed list (``None``: every prompt is)."""
    if allowed is None:
        return True
    return any(name == item or (item.endswith("/") and in_folder(name, item)) for item in allowed)


def prompts_usable(user: AbstractBaseUser | AnonymousUser) -> list[Prompt]:
    """The prompts ``user`` may start a conversation from, by name (at most
    :data:`USABLE_LISTED`)."""
    allowed: list[str] | None = None
    if user.pk is not None:
        limits = HostPrompts.objects.filter(user_id=user.pk).values_list("allowed", flat=True)
        found = limits.first()
        if isinstance(found, list):
            allowed = [item for item in found if isinstance(item, str)]
    rows = Prompt.objects.filter(archived=False).order_by("name")
    if allowed is None:
        return list(rows[:USABLE_LISTED])
    usable = []
    for prompt in rows.iterator():
        if allowed_match(prompt.name, allowed):
            usable.append(prompt)
            if len(usable) >= USABLE_LISTED:
                break
    return usable

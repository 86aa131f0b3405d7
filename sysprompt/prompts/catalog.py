"""Named prompts, looked up: by name or a former name, the one every deployment has, and
who may change one.

name (a route's or a body's ``prompt``) → :func:`prompt_get` (the rule checked, an alias
followed, an archived prompt refused where a new conversation would start) →
:class:`~sysprompt.prompts.models.Prompt`; :func:`default_prompt` is ``default``, made
when missing (a fresh or flushed database); :func:`prompt_editors_check` refuses a
change of a prompt restricted to groups the user is in none of.
"""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, Group
from django.utils import timezone

from sysprompt.errors import InvalidInput, PromptArchived, PromptForbidden, PromptNotFound
from sysprompt.prompts.models import FolderRestriction, Prompt, PromptAlias
from sysprompt_core.prompt_names import (
    DEFAULT_PROMPT,
    InvalidPromptName,
    folders_of,
    prompt_name_check,
)


def default_prompt() -> Prompt:
    """The prompt ``default``: what today's routes and clients mean."""
    prompt = Prompt.objects.filter(name=DEFAULT_PROMPT).first()
    if prompt is not None:
        return prompt
    now = timezone.now()
    prompt, _ = Prompt.objects.get_or_create(
        name=DEFAULT_PROMPT, defaults={"created_at": now, "updated_at": now}
    )
    return prompt


def prompt_or_default(prompt: Prompt | None) -> Prompt:
    """``prompt``, or ``default`` for ``None`` (what a caller naming no prompt means)."""
    return default_prompt() if prompt is None else prompt


def prompt_name_valid(name: object, field: str = "prompt") -> str:
    """``name`` when it follows the rule; :class:`InvalidInput` naming ``field``."""
    try:
        return prompt_name_check(name, field)
    except InvalidPromptName as error:
        raise InvalidInput(error.field, error.message) from None


def prompt_get(
    name: str | None, *, field: str = "prompt", for_new_conversation: bool = False
) -> Prompt:
    """The prompt ``name`` (``default`` for None), or the one that had that name.

    :class:`InvalidInput` for a name that breaks the rule, :class:`PromptNotFound` for
    none, :class:`PromptArchived` for an archived one when a conversation would start."""
    if name is None or name == DEFAULT_PROMPT:
        prompt = default_prompt()
    else:
        prompt_name_valid(name, field)
        found = Prompt.objects.filter(name=name).first()
        if found is None:
            alias = PromptAlias.objects.select_related("prompt").filter(name=name).first()
            if alias is None:
                raise PromptNotFound(name)
            found = alias.prompt
        prompt = found
    if for_new_conversation and prompt.archived:
        raise PromptArchived(prompt.name)
    return prompt


def folder_editor_groups(name: str) -> list[list[str]]:
    """The restrictions of the folders ``name`` sits (or would sit) in, outermost first:
    each a list of group names (a change needs a membership in every one)."""
    restrictions = (
        FolderRestriction.objects.filter(folder__in=folders_of(name))
        .prefetch_related("editor_groups")
        .order_by("folder")
    )
    levels = [
        sorted(group.name for group in restriction.editor_groups.all())
        for restriction in restrictions
    ]
    return [level for level in levels if level]


def prompt_editor_groups(prompt: Prompt) -> list[list[str]]:
    """The restrictions over ``prompt``: its folders', outermost first, then its own."""
    own = sorted(group.name for group in prompt.editor_groups.all())
    return [*folder_editor_groups(prompt.name), *([own] if own else [])]


def prompt_may_edit(user: AbstractBaseUser | AnonymousUser | None, prompt: Prompt) -> bool:
    """Whether ``user`` passes every group restriction over ``prompt`` (superusers do)."""
    return member_of_every(user, prompt_editor_groups(prompt))


def member_of_every(user: AbstractBaseUser | AnonymousUser | None, levels: list[list[str]]) -> bool:
    """Whether ``user`` is in a group of each of ``levels`` (superusers are)."""
    if not levels:
        return True
    if user is None or not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    mine = set(Group.objects.filter(user__pk=user.pk).values_list("name", flat=True))
    return all(mine.intersection(level) for level in levels)


def prompt_editors_check(
    user: AbstractBaseUser | AnonymousUser | None, prompt: Prompt, *, action: str
) -> None:
    """:class:`PromptForbidden` when ``user`` may not ``action`` on ``prompt`` because it
    (or a folder above it) is restricted to groups the user is in none of."""
    if not prompt_may_edit(user, prompt):
        raise PromptForbidden(prompt.name, action, prompt_editor_groups(prompt))

"""The named prompts an export carries and an import writes (beside the library's tree):
read every prompt but ``default``, find one by its exact name, create one, or change its
description, tags and archived flag. The working copy is saved through
``prompts.services.template_save``.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from sysprompt.prompts.models import Prompt
from sysprompt_core.prompt_names import DEFAULT_PROMPT

Author = AbstractBaseUser | AnonymousUser | None

CHUNK = 500


def prompts_other_than_default() -> Iterator[Prompt]:
    """Every prompt but ``default`` (archived ones too), by name."""
    return Prompt.objects.exclude(name=DEFAULT_PROMPT).order_by("name").iterator(chunk_size=CHUNK)


def prompt_named(name: str) -> Prompt | None:
    """The prompt called ``name`` now (not a former name: an import writes the prompt
    the archive names)."""
    return Prompt.objects.filter(name=name).first()


def _user_id(author: Author) -> int | None:
    return int(author.pk) if author is not None and author.is_authenticated else None


def prompt_import_create(
    *, name: str, description: str, tags: list[str], archived: bool, author: Author
) -> Prompt:
    """A new prompt from an import (its name checked by the caller)."""
    now = timezone.now()
    return Prompt.objects.create(
        name=name,
        description=description,
        tags=tags,
        archived=archived,
        created_at=now,
        updated_at=now,
        updated_by_id=_user_id(author),
    )


def prompt_import_update(
    *,
    prompt: Prompt,
    description: str | None,
    tags: list[str] | None,
    archived: bool | None,
    author: Author,
) -> list[str]:
    """Set what an import gives of ``prompt`` (``None``: left as it is); the fields it
    changed."""
    changed = []
    for field, value in (("description", description), ("tags", tags), ("archived", archived)):
        if value is not None and getattr(prompt, field) != value:
            setattr(prompt, field, value)
            changed.append(field)
    if changed:
        prompt.updated_at = timezone.now()
        prompt.updated_by_id = _user_id(author)
        prompt.save(update_fields=["description", "tags", "archived", "updated_at", "updated_by"])
    return changed

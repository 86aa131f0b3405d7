"""The named prompts an export carries and an import writes (beside the library's tree):
list every prompt but ``default`` with its working copy (no text read), find one by its
exact name, create one, or change its description, tags and archived flag. The working
copy is saved through ``prompts.services.template_save``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Length
from django.utils import timezone

from sysprompt.prompts.models import Prompt, TemplateVersion
from sysprompt_core.prompt_names import DEFAULT_PROMPT

Author = AbstractBaseUser | AnonymousUser | None

CHUNK = 500


@dataclass(frozen=True)
class PromptListed:
    """A prompt an export writes: its working copy as the id and length of its newest
    template version (``None``: it has none, and exports the built-in default), and that
    version's compress setting; no text read."""

    prompt: Prompt
    version_id: int | None
    characters: int
    compress: bool


def prompts_listed() -> Iterator[PromptListed]:
    """Every prompt but ``default`` by name, each with its working copy listed (two
    queries a chunk of :data:`CHUNK` prompts, whatever the size of their texts)."""
    newest = (
        TemplateVersion.objects.filter(prompt=OuterRef("pk")).order_by("-number").values("pk")[:1]
    )
    prompts = (
        Prompt.objects.exclude(name=DEFAULT_PROMPT)
        .annotate(newest_id=Subquery(newest))
        .order_by("name")
    )
    chunk: list[Prompt] = []
    for prompt in prompts.iterator(chunk_size=CHUNK):
        chunk.append(prompt)
        if len(chunk) == CHUNK:
            yield from _listed(chunk)
            chunk = []
    yield from _listed(chunk)


def _listed(prompts: list[Prompt]) -> Iterator[PromptListed]:
    ids = [prompt.newest_id for prompt in prompts if prompt.newest_id is not None]  # type: ignore[attr-defined]
    found = {
        pk: (characters, compress)
        for pk, characters, compress in TemplateVersion.objects.filter(pk__in=ids)
        .annotate(characters=Length("text"))
        .values_list("pk", "characters", "compress")
    }
    for prompt in prompts:
        version_id = prompt.newest_id  # type: ignore[attr-defined]
        characters, compress = found.get(version_id, (0, False))
        yield PromptListed(prompt, version_id, characters, compress)


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

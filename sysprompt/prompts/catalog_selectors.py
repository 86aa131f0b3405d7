"""Reads of the catalog of prompts: the list (filtered, in name order for cursor
pages), one page's rows with their working-copy version and labels fetched in bulk,
one prompt in full, a folder's restriction and the folder tree with counts.

A page costs the same queries whatever its place in the list: the list is a queryset
ordered by the unique name (keyset pages: ``name > the cursor``), and
:func:`prompt_rows` reads the versions and labels of that page's prompts only.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Max, Q, QuerySet, TextField
from django.db.models.functions import Cast

from sysprompt.errors import InvalidInput
from sysprompt.prompts.models import FolderRestriction, Prompt, PromptAlias, TemplateVersion
from sysprompt_core.prompt_names import InvalidPromptName, folder_check, folders_of


@dataclass(frozen=True)
class PromptRow:
    """A prompt as lists show it."""

    id: int
    name: str
    description: str
    tags: list[str]
    archived: bool
    version: int
    updated_at: datetime
    labels: dict[str, Any]


@dataclass(frozen=True)
class PromptDetail:
    """One prompt in full: its row, its former names and its own restriction."""

    row: PromptRow
    aliases: list[str]
    editor_groups: list[str]
    restricted_by: list[str] = field(default_factory=list)


def folder_valid(folder: object, field: str = "folder") -> str:
    """``folder`` with its trailing ``/``; :class:`InvalidInput` naming ``field``."""
    try:
        return folder_check(folder, field)
    except InvalidPromptName as error:
        raise InvalidInput(error.field, error.message) from None


def _tags_text() -> Cast:
    return Cast("tags", output_field=TextField())


def prompts_query(
    *,
    folder: str | None = None,
    search: str | None = None,
    tag: str | None = None,
    label: str | None = None,
    archived: bool = False,
) -> QuerySet[Prompt]:
    """The prompts in name order: in ``folder`` (whole segments, any depth), whose name,
    description or a tag contains ``search`` (any case), tagged ``tag``, that have a
    label row named ``label``; archived ones only with ``archived``."""
    prompts = Prompt.objects.order_by("name").only(
        "id", "name", "description", "tags", "archived", "updated_at"
    )
    if not archived:
        prompts = prompts.filter(archived=False)
    if folder:
        prompts = prompts.filter(name__startswith=folder_valid(folder))
    if search:
        prompts = prompts.annotate(tags_text=_tags_text()).filter(
            Q(name__icontains=search)
            | Q(description__icontains=search)
            | Q(tags_text__icontains=search)
        )
    if tag:
        if connection.vendor == "postgresql":
            prompts = prompts.filter(tags__contains=[tag])
        else:  # SQLite stores the list as JSON text: the tag with its quotes is one element
            prompts = prompts.annotate(tags_json=_tags_text()).filter(
                tags_json__contains=json.dumps(tag)
            )
    if label:
        prompts = prompts.filter(labels__name=label)
    return prompts


def prompt_rows(prompts: list[Prompt]) -> list[PromptRow]:
    """``prompts`` as rows: each one's working-copy version (0: none saved, the built-in
    default) and its labels' targets, read in two queries for the whole list."""
    ids = [prompt.pk for prompt in prompts]
    versions = dict(
        TemplateVersion.objects.filter(prompt_id__in=ids)
        .values("prompt_id")
        .annotate(newest=Max("number"))
        .values_list("prompt_id", "newest")
    )
    labels: dict[int, dict[str, Any]] = {pk: {} for pk in ids}
    for pk, name, target in (
        Prompt.objects.filter(pk__in=ids, labels__isnull=False)
        .order_by("pk", "labels__name")
        .values_list("pk", "labels__name", "labels__target")
    ):
        labels[pk][name] = target
    return [
        PromptRow(
            id=prompt.pk,
            name=prompt.name,
            description=prompt.description,
            tags=list(prompt.tags or []),
            archived=prompt.archived,
            version=versions.get(prompt.pk) or 0,
            updated_at=prompt.updated_at,
            labels=labels[prompt.pk],
        )
        for prompt in prompts
    ]


def prompt_detail(prompt: Prompt) -> PromptDetail:
    """``prompt`` in full (the restrictions of its folders are listed separately)."""
    (row,) = prompt_rows([prompt])
    restricted = FolderRestriction.objects.filter(
        folder__in=folders_of(prompt.name), editor_groups__isnull=False
    ).distinct()
    return PromptDetail(
        row=row,
        aliases=list(prompt.aliases.order_by("name").values_list("name", flat=True)),
        editor_groups=sorted(group.name for group in prompt.editor_groups.all()),
        restricted_by=list(restricted.order_by("folder").values_list("folder", flat=True)),
    )


def prompt_name_taken(name: str, *, by_other_than: Prompt | None = None) -> str | None:
    """Why ``name`` cannot be given: a prompt has it, or it is another prompt's alias."""
    holder = Prompt.objects.filter(name=name).first()
    if holder is not None and holder != by_other_than:
        return f"A prompt named {name!r} exists."
    alias = PromptAlias.objects.select_related("prompt").filter(name=name).first()
    if alias is not None and alias.prompt != by_other_than:
        return (
            f"{name!r} is a former name of the prompt {alias.prompt.name!r}, which it still "
            "answers."
        )
    return None


def folder_groups(folder: str) -> list[str]:
    """The groups ``folder`` is restricted to (none: unrestricted)."""
    restriction = FolderRestriction.objects.filter(folder=folder_valid(folder)).first()
    if restriction is None:
        return []
    return sorted(group.name for group in restriction.editor_groups.all())


GROUP_CHOICES_LIMIT = 500


def group_names(*, limit: int = GROUP_CHOICES_LIMIT) -> list[str]:
    """The groups a folder may be restricted to, by name (the first ``limit``)."""
    return list(Group.objects.order_by("name").values_list("name", flat=True)[:limit])


@dataclass(frozen=True)
class FolderCount:
    """A folder of the tree: its path, depth and how many prompts it holds (any depth)."""

    folder: str
    name: str
    depth: int
    count: int
    restricted: bool


def folder_tree(*, archived: bool = False) -> tuple[list[FolderCount], int]:
    """Every folder in tree order with its count of prompts, and the count of all.

    One read of the names; each name is counted once in the folder it sits in directly,
    then each folder's count is added to the folders above it (a few hundred folders,
    whatever the number of prompts)."""
    names = Prompt.objects.all() if archived else Prompt.objects.filter(archived=False)
    direct: Counter[str] = Counter(
        name.rpartition("/")[0] for name in names.values_list("name", flat=True)
    )
    total = sum(direct.values())
    counts: Counter[str] = Counter()
    for parent, count in direct.items():
        if not parent:
            continue
        for folder in folders_of(parent + "/x"):
            counts[folder] += count
    restricted = set(
        FolderRestriction.objects.filter(editor_groups__isnull=False).values_list(
            "folder", flat=True
        )
    )
    tree = [
        FolderCount(
            folder=folder,
            name=folder.rstrip("/").rsplit("/", 1)[-1],
            depth=folder.count("/") - 1,
            count=count,
            restricted=folder in restricted,
        )
        for folder, count in sorted(counts.items())
    ]
    return tree, total


def prompts_exist_beyond_default() -> bool:
    """Whether any prompt other than ``default`` exists (archived ones count)."""
    return Prompt.objects.exclude(name="default").exists()


def prompt_names(*, limit: int = 200) -> list[str]:
    """The first ``limit`` prompt names in order (archived ones left out): the switcher."""
    return list(
        Prompt.objects.filter(archived=False)
        .order_by("name")
        .values_list("name", flat=True)[:limit]
    )

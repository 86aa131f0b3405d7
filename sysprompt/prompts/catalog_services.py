"""Writes of the catalog of prompts: create, change, rename, archive, duplicate and
delete a prompt, and restrict a folder. Each is audited (``prompt_records``) in the
transaction of its change.

Who may write: the caller (a view) checks the template's change permission; these
services check the group restrictions (:func:`~sysprompt.prompts.catalog.
prompt_editors_check`) — a refusal is recorded in the audit log in a transaction of its
own (it changed nothing else) and raised as :class:`PromptForbidden`. Giving a prompt or
a folder editor groups needs :data:`FOLDER_RESTRICT_PERMISSION` (or a superuser).
Checks come before validation of the body, as everywhere (issue 31.11); nothing is
written by a refused call.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from sysprompt.errors import InvalidInput, PromptConflict, PromptForbidden
from sysprompt.events import prompt_records, records
from sysprompt.events.services import Actor
from sysprompt.library.models import HostOverride
from sysprompt.prompts.catalog import (
    folder_editor_groups,
    member_of_every,
    prompt_editor_groups,
    prompt_may_edit,
    prompt_name_valid,
)
from sysprompt.prompts.catalog_selectors import folder_valid, prompt_name_taken
from sysprompt.prompts.models import (
    FolderRestriction,
    HostPrompts,
    Prompt,
    PromptAlias,
    TemplateVersion,
)
from sysprompt.prompts.validation import template_size_check
from sysprompt_core.prompt_names import DEFAULT_PROMPT

FOLDER_RESTRICT_PERMISSION = "sysprompt.change_folderrestriction"
"""What giving a prompt or a folder editor groups takes (superusers have it)."""

DESCRIPTION_MAX_LENGTH = 2000
TAG_MAX_LENGTH = 50
TAGS_MAX = 20
_ATTEMPTS = 1000


# --- checks ---------------------------------------------------------------------------------


def editors_check(user: Actor, prompt: Prompt, *, action: str) -> None:
    """:class:`PromptForbidden` (and a ``prompt.refused`` record) unless ``user`` passes
    every restriction over ``prompt``."""
    if not prompt_may_edit(user, prompt):
        with transaction.atomic():
            records.prompt_refused(actor=user, prompt=prompt.name, action=action)
        raise PromptForbidden(prompt.name, action, prompt_editor_groups(prompt))


def name_editors_check(user: Actor, name: str, *, action: str) -> None:
    """The same for a name no prompt has yet (a new prompt, a rename's or duplicate's
    target): the restrictions of the folders it would sit in."""
    levels = folder_editor_groups(name)
    if not member_of_every(user, levels):
        with transaction.atomic():
            records.prompt_refused(actor=user, prompt=name, action=action)
        raise PromptForbidden(name, action, levels)


def may_restrict(user: Actor) -> bool:
    """Whether ``user`` may give prompts and folders editor groups."""
    if user is None or not user.is_authenticated:
        return False
    has_perm = getattr(user, "has_perm", None)  # a PermissionsMixin's (Django's User)
    if getattr(user, "is_superuser", False):
        return True
    return bool(has_perm and has_perm(FOLDER_RESTRICT_PERMISSION))


class RestrictForbidden(PromptForbidden):
    """Giving editor groups without the permission to (the 403)."""

    def __init__(self) -> None:
        Exception.__init__(
            self,
            "Restricting prompts and folders to groups needs a superuser or the 'Can change "
            f"folder restriction' permission ({FOLDER_RESTRICT_PERMISSION}).",
        )
        self.name = ""
        self.action = "restrict"
        self.groups = []


def _restrict_check(user: Actor) -> None:
    if not may_restrict(user):
        raise RestrictForbidden


# --- validation -----------------------------------------------------------------------------


def description_valid(description: object) -> str:
    if not isinstance(description, str):
        raise InvalidInput("description", "The description is text.")
    if len(description) > DESCRIPTION_MAX_LENGTH:
        raise InvalidInput(
            "description",
            f"The description has {len(description):,} characters; at most "
            f"{DESCRIPTION_MAX_LENGTH:,} fit.",
        )
    return description


def tags_valid(tags: object) -> list[str]:
    """A list of distinct short strings (kept in the order given)."""
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise InvalidInput("tags", "Tags are a list of strings.")
    if len(tags) > TAGS_MAX:
        raise InvalidInput("tags", f"{len(tags)} tags: at most {TAGS_MAX}.")
    kept: list[str] = []
    for tag in tags:
        if not tag.strip() or len(tag) > TAG_MAX_LENGTH or not tag.isprintable():
            raise InvalidInput(
                "tags",
                f"{tag[:60]!r} is not a tag: 1 to {TAG_MAX_LENGTH} printable characters, "
                "not only spaces.",
            )
        if tag not in kept:
            kept.append(tag)
    return kept


def groups_valid(names: object, field: str = "editor_groups") -> list[Group]:
    """The groups named (each must exist): 400 naming ``field`` otherwise."""
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise InvalidInput(field, "editor_groups is a list of group names.")
    found = {group.name: group for group in Group.objects.filter(name__in=names)}
    unknown = [name for name in names if name not in found]
    if unknown:
        raise InvalidInput(
            field, f"No group is named {', '.join(repr(name) for name in unknown[:5])}."
        )
    return [found[name] for name in dict.fromkeys(names)]


def _name_free(name: str, *, field: str, prompt: Prompt | None = None) -> None:
    why = prompt_name_taken(name, by_other_than=prompt)
    if why is not None:
        raise PromptConflict(f"{why} Choose another {field}.")


def _default_check(prompt: Prompt, what: str) -> None:
    if prompt.name == DEFAULT_PROMPT:
        raise PromptConflict(
            f"The prompt {DEFAULT_PROMPT!r} cannot be {what}: today's routes and clients mean it."
        )


# --- writes ---------------------------------------------------------------------------------


def _version_add(*, prompt: Prompt, text: str, compress: bool, author: Actor) -> TemplateVersion:
    """``text`` as a version of ``prompt`` with the next deployment-wide number."""
    for _ in range(_ATTEMPTS):
        try:
            with transaction.atomic():
                newest = TemplateVersion.objects.aggregate(newest=Max("number"))["newest"] or 0
                return TemplateVersion.objects.create(
                    prompt=prompt,
                    number=newest + 1,
                    text=text,
                    compress=compress,
                    author_id=None if author is None else author.pk,
                    created_at=timezone.now(),
                )
        except IntegrityError:
            continue  # another writer took that number: theirs is saved, try the next
    raise RuntimeError(f"a template version lost {_ATTEMPTS} races in a row")


def prompt_create(
    *,
    name: object,
    description: object = "",
    tags: object = None,
    template: object = None,
    author: Actor,
) -> Prompt:
    """A new prompt; with ``template``, that text is its first version (else it starts
    from the built-in default, version 0). 409 when the name or an alias is taken."""
    name = prompt_name_valid(name, "name")
    name_editors_check(author, name, action="create")
    description = description_valid(description)
    tags = tags_valid([] if tags is None else tags)
    if template is not None:
        if not isinstance(template, str):
            raise InvalidInput("template", "The template is text.")
        template_size_check(template)
    with transaction.atomic():
        _name_free(name, field="name")
        now = timezone.now()
        try:
            with transaction.atomic():
                prompt = Prompt.objects.create(
                    name=name,
                    description=description,
                    tags=tags,
                    created_at=now,
                    updated_at=now,
                    updated_by_id=None if author is None else author.pk,
                )
        except IntegrityError:
            raise PromptConflict(f"A prompt named {name!r} exists. Choose another name.") from None
        version = None
        if template is not None:
            version = _version_add(prompt=prompt, text=template, compress=False, author=author)
        prompt_records.prompt_created(
            actor=author, prompt=name, version=None if version is None else version.number
        )
    return prompt


def prompt_update(
    *,
    prompt: Prompt,
    author: Actor,
    description: object | None = None,
    tags: object | None = None,
    editor_groups: object | None = None,
) -> Prompt:
    """Change what is given of ``description``, ``tags`` and ``editor_groups``."""
    if editor_groups is not None:
        _restrict_check(author)
    editors_check(author, prompt, action="change")
    changes: dict[str, object] = {}
    if description is not None:
        changes["description"] = description_valid(description)
    if tags is not None:
        changes["tags"] = tags_valid(tags)
    groups = None if editor_groups is None else groups_valid(editor_groups)
    with transaction.atomic():
        locked = Prompt.objects.select_for_update().get(pk=prompt.pk)
        for field, value in changes.items():
            setattr(locked, field, value)
        locked.updated_at = timezone.now()
        locked.updated_by_id = None if author is None else author.pk
        locked.save()
        fields = list(changes)
        if groups is not None:
            locked.editor_groups.set(groups)
            fields.append("editor groups")
        if fields:
            prompt_records.prompt_changed(actor=author, prompt=locked.name, fields=fields)
    return locked


def prompt_rename(*, prompt: Prompt, name: object, author: Actor) -> Prompt:
    """Give ``prompt`` the name ``name``: its id stays, its old name becomes an alias
    (answering until a prompt takes it); taking one of its own aliases removes it."""
    editors_check(author, prompt, action="rename")
    name = prompt_name_valid(name, "name")
    _default_check(prompt, "renamed")
    if name == prompt.name:
        return prompt
    name_editors_check(author, name, action="rename into")
    with transaction.atomic():
        locked = Prompt.objects.select_for_update().get(pk=prompt.pk)
        if locked.name == DEFAULT_PROMPT or name == DEFAULT_PROMPT:
            raise PromptConflict(
                f"{DEFAULT_PROMPT!r} is what today's routes and clients mean: no prompt is "
                "renamed from or to it."
            )
        _name_free(name, field="name", prompt=locked)
        was = locked.name
        PromptAlias.objects.filter(name=name, prompt=locked).delete()
        PromptAlias.objects.create(name=was, prompt=locked, created_at=timezone.now())
        locked.name = name
        locked.updated_at = timezone.now()
        locked.updated_by_id = None if author is None else author.pk
        locked.save()
        prompt_records.prompt_renamed(actor=author, prompt=name, was=was)
    return locked


def prompt_archive(*, prompt: Prompt, archived: bool, author: Actor) -> Prompt:
    """Archive ``prompt`` (hidden from lists, no new conversation; everything kept) or
    undo it. Archiving an archived prompt changes nothing and records nothing."""
    editors_check(author, prompt, action="archive" if archived else "unarchive")
    _default_check(prompt, "archived")
    with transaction.atomic():
        locked = Prompt.objects.select_for_update().get(pk=prompt.pk)
        if locked.archived == archived:
            return locked
        locked.archived = archived
        locked.updated_at = timezone.now()
        locked.updated_by_id = None if author is None else author.pk
        locked.save()
        prompt_records.prompt_archived(actor=author, prompt=locked.name, archived=archived)
    return locked


@dataclass(frozen=True)
class Dependents:
    conversations: int
    releases: int
    runs: int
    hosts: list[str]


def prompt_dependents(prompt: Prompt) -> Dependents:
    """What keeps ``prompt`` from being deleted."""
    hosts = (
        HostPrompts.objects.filter(default=prompt).select_related("user").order_by("user__username")
    )
    return Dependents(
        conversations=prompt.conversations.count(),
        releases=prompt.releases.count(),
        runs=prompt.runs.count(),
        hosts=[host.user.get_username() for host in hosts],
    )


def prompt_delete(*, prompt: Prompt, author: Actor) -> None:
    """Delete ``prompt`` with its versions, labels, test contexts, suites and aliases —
    only when it has no conversations, releases or runs and no agent host defaults to
    it (409 saying what it has)."""
    editors_check(author, prompt, action="delete")
    _default_check(prompt, "deleted")
    with transaction.atomic():
        locked = Prompt.objects.select_for_update().get(pk=prompt.pk)
        has = prompt_dependents(locked)
        kept = [
            f"{count} {what}{'s' * (count != 1)}"
            for count, what in (
                (has.conversations, "conversation"),
                (has.releases, "release"),
                (has.runs, "evaluation run"),
            )
            if count
        ]
        if has.hosts:
            kept.append(
                f"the default of agent host{'s' * (len(has.hosts) != 1)} {', '.join(has.hosts)}"
            )
        if kept:
            raise PromptConflict(
                f"The prompt {locked.name!r} has {' and '.join(kept)}: it cannot be deleted "
                "(archive it instead: it keeps everything and starts no new conversation)."
            )
        for label in locked.labels.all():
            label.hosts.all().delete()
            label.moves.all().delete()
        locked.labels.all().delete()
        locked.test_contexts.all().delete()
        for suite in locked.suites.all():
            suite.cases.all().delete()
        locked.suites.all().delete()
        HostOverride.objects.filter(prompt=locked).delete()
        # Versions are history rows, kept while anything points at them; nothing does now.
        locked.versions.all().delete()
        name = locked.name
        locked.delete()
        prompt_records.prompt_deleted(actor=author, prompt=name)


def prompt_duplicate(
    *,
    prompt: Prompt,
    name: object,
    author: Actor,
    test_contexts: bool = False,
    suites: bool = False,
) -> Prompt:
    """A new prompt ``name`` whose first version is ``prompt``'s working copy (none when
    it has only the built-in default), with its description and tags, and on request
    copies of its test contexts and its suites with their cases."""
    name = prompt_name_valid(name, "name")
    name_editors_check(author, name, action="create")
    with transaction.atomic():
        _name_free(name, field="name")
        now = timezone.now()
        try:
            with transaction.atomic():
                copy = Prompt.objects.create(
                    name=name,
                    description=prompt.description,
                    tags=list(prompt.tags or []),
                    created_at=now,
                    updated_at=now,
                    updated_by_id=None if author is None else author.pk,
                )
        except IntegrityError:
            raise PromptConflict(f"A prompt named {name!r} exists. Choose another name.") from None
        current = prompt.versions.order_by("-number").first()
        if current is not None:
            _version_add(prompt=copy, text=current.text, compress=current.compress, author=author)
        contexts = 0
        if test_contexts:
            for context in prompt.test_contexts.all():
                context.pk = None
                context._state.adding = True
                context.prompt = copy
                context.created_at = context.updated_at = now
                context.updated_by_id = None if author is None else author.pk
                context.save()
                contexts += 1
        copied_suites = 0
        if suites:
            for suite in prompt.suites.prefetch_related("cases"):
                cases = list(suite.cases.all())
                suite.pk = None
                suite._state.adding = True
                suite.prompt = copy
                suite.created_at = suite.updated_at = suite.cases_changed_at = now
                suite.updated_by_id = None if author is None else author.pk
                suite.save()
                for case in cases:
                    case.pk = None
                    case._state.adding = True
                    case.suite = suite
                    case.save()
                copied_suites += 1
        prompt_records.prompt_duplicated(
            actor=author,
            prompt=name,
            source=prompt.name,
            test_contexts=contexts,
            suites=copied_suites,
        )
    return copy


def folder_restrict(*, folder: object, editor_groups: object, author: Actor) -> list[str]:
    """Restrict ``folder`` (and every prompt under it) to ``editor_groups``; an empty
    list lifts the restriction. Answers the groups, sorted."""
    _restrict_check(author)
    folder = folder_valid(folder)
    groups = groups_valid(editor_groups)
    with transaction.atomic():
        restriction, _ = FolderRestriction.objects.select_for_update().get_or_create(
            folder=folder, defaults={"updated_at": timezone.now()}
        )
        restriction.updated_at = timezone.now()
        restriction.updated_by_id = None if author is None else author.pk
        restriction.save()
        restriction.editor_groups.set(groups)
        names = sorted(group.name for group in groups)
        prompt_records.folder_restricted(actor=author, folder=folder, groups=names)
    return names

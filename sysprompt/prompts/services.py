"""Services: every write the application makes goes through a function here."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import AnonymousUser, Group, Permission
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Field, QuerySet
from django.utils import timezone
from rest_framework.authtoken.models import Token

from sysprompt.conf import app_settings
from sysprompt.prompts.models import (
    CONVERSATION_CHANGE_PERMISSION,
    CONVERSATION_DELETE_PERMISSION,
    CONVERSATION_VIEW_PERMISSION,
    TEMPLATE_EDIT_PERMISSION,
    ConversationPrompt,
    TemplateVersion,
)
from sysprompt.prompts.selectors import (
    Actor,
    ConversationAction,
    CurrentTemplate,
    Rendered,
    conversation_check,
    conversation_id_check,
    conversation_prompt_get,
    cwd_check,
    prompt_render,
    template_current,
    template_size_check,
)

ADMIN_USERNAME = "admin"


class AdminBootstrapError(Exception):
    """The admin cannot be created: a user named ``admin`` exists but is no superuser."""


@dataclass(frozen=True)
class AdminBootstrap:
    """What :func:`admin_ensure` did: ``password`` is set only when it created the admin."""

    username: str
    password: str | None


@transaction.atomic
def admin_ensure(*, password: str | None = None) -> AdminBootstrap:
    """Create the ``admin`` superuser unless a superuser already exists.

    Raises AdminBootstrapError when no superuser exists but the name is taken.
    ``password`` defaults to a fresh random one. Idempotent: with a superuser present,
    nothing is written and the first superuser's name is returned without a password.
    """
    user_model = get_user_model()
    existing = user_model.objects.filter(is_superuser=True).order_by("pk").first()
    if existing is not None:
        return AdminBootstrap(username=existing.get_username(), password=None)
    if user_model.objects.filter(username=ADMIN_USERNAME).exists():
        raise AdminBootstrapError(
            f"A user named {ADMIN_USERNAME!r} exists but is not a superuser; "
            "create one with `manage.py createsuperuser`."
        )
    password = password or secrets.token_urlsafe(12)
    user_model.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
    return AdminBootstrap(username=ADMIN_USERNAME, password=password)


class PreconditionFailed(Exception):
    """``If-Match`` named a version that is no longer current; nothing was written."""

    def __init__(self, current: CurrentTemplate) -> None:
        super().__init__(
            f"The template has changed since you loaded it: version {current.version} "
            f"(ETag {current.etag}) is current. Reload it, merge, and save again."
        )
        self.current = current


_SAVE_ATTEMPTS = 1000


def template_save(
    *,
    text: str,
    author: AbstractBaseUser | AnonymousUser | None = None,
    if_match: Sequence[str] | None = None,
) -> TemplateVersion:
    """Add ``text`` as the newest template version, byte for byte.

    ``if_match`` holds entity tags (or ``"*"``) from the caller's ``If-Match``: unless
    one of them names the current version, :class:`PreconditionFailed` is raised and
    nothing is written. Without it the write wins, even over a concurrent one.
    """
    template_size_check(text)
    for _ in range(_SAVE_ATTEMPTS):
        try:
            return _template_version_add(text=text, author=author, if_match=if_match)
        except IntegrityError:
            # Another writer took the number we read as next, so every lost attempt is
            # someone else's saved version: the writers as a whole always progress.
            if if_match is not None:
                raise PreconditionFailed(template_current()) from None
    raise RuntimeError(f"template_save lost {_SAVE_ATTEMPTS} races in a row")


@transaction.atomic
def _template_version_add(
    *, text: str, author: AbstractBaseUser | AnonymousUser | None, if_match: Sequence[str] | None
) -> TemplateVersion:
    current = template_current()
    if if_match is not None and not _etag_matches(if_match, current):
        raise PreconditionFailed(current)
    return TemplateVersion.objects.create(
        number=current.version + 1,
        text=text,
        author_id=None if author is None else author.pk,
        created_at=timezone.now(),
    )


def _etag_matches(tags: Sequence[str], current: CurrentTemplate) -> bool:
    return any(tag == "*" or tag == current.etag for tag in tags)


@dataclass(frozen=True)
class Stored:
    """A stored conversation prompt and whether this call created its row."""

    prompt: ConversationPrompt
    created: bool


def conversation_prompt_resolve(
    *, conversation_id: str, cwd: str, model: str = "", user: Actor
) -> Stored:
    """The turn's system prompt: the stored one, byte for byte, or on the first turn a
    freshly constructed one, stored with ``user`` as its owner.

    A later turn reads one row and writes nothing (and, for the owner, runs no other
    query). Concurrent first turns may each render, but exactly one row is stored and
    every caller answers with it. A conversation ``user`` may not see raises
    :class:`~sysprompt.prompts.selectors.ConversationNotFound`, and nothing is rendered or stored:
    ids are unique across users.
    """
    conversation_id = conversation_id_check(conversation_id)
    cwd = cwd_check(cwd)
    stored = conversation_prompt_get(conversation_id)
    if stored is not None:
        return Stored(prompt=_readable(stored, user), created=False)
    rendered = prompt_render(cwd=cwd, model=model, conversation_id=conversation_id)
    try:
        with transaction.atomic():
            row = ConversationPrompt.objects.create(
                conversation_id=conversation_id,
                created_at=rendered.rendered_at,
                owner_id=user.pk,
                **_stored_fields(rendered),
            )
    except IntegrityError:
        winner = conversation_prompt_get(conversation_id)
        if winner is None:  # created and deleted again in between: try once more
            return conversation_prompt_resolve(
                conversation_id=conversation_id, cwd=cwd, model=model, user=user
            )
        return Stored(prompt=_readable(winner, user), created=False)
    return Stored(prompt=row, created=True)


def _readable(prompt: ConversationPrompt, user: Actor) -> ConversationPrompt:
    return conversation_check(prompt, user=user, action=ConversationAction.READ)


def conversation_prompt_construct(
    *, conversation_id: str, cwd: str, model: str = "", user: Actor
) -> Stored:
    """Render the current template afresh and store it, replacing any stored prompt.

    A new conversation gets ``user`` as its owner. Someone else's conversation keeps its
    owner and needs the change permission: without it nothing is rendered and
    :class:`~sysprompt.prompts.selectors.ConversationNotFound` (may not see it) or
    :class:`~sysprompt.prompts.selectors.ConversationForbidden` (may see it) is raised.
    """
    conversation_id = conversation_id_check(conversation_id)
    _changeable(conversation_id, user)
    cwd = cwd_check(cwd)
    rendered = prompt_render(cwd=cwd, model=model, conversation_id=conversation_id)
    return _conversation_prompt_store(conversation_id=conversation_id, rendered=rendered, user=user)


def _changeable(conversation_id: str, user: Actor) -> None:
    """Refuse, before anything is rendered, a stored conversation ``user`` may not change."""
    stored = conversation_prompt_get(conversation_id)
    if stored is not None:
        conversation_check(stored, user=user, action=ConversationAction.CHANGE)


@transaction.atomic
def _conversation_prompt_store(*, conversation_id: str, rendered: Rendered, user: Actor) -> Stored:
    fields = _stored_fields(rendered)
    locked = ConversationPrompt.objects.select_for_update()
    row = locked.filter(conversation_id=conversation_id).first()
    if row is None:
        row, created = ConversationPrompt.objects.get_or_create(
            conversation_id=conversation_id,
            defaults={"created_at": rendered.rendered_at, "owner_id": user.pk, **fields},
        )
        if created:
            return Stored(prompt=row, created=True)
        row = locked.get(pk=row.pk)  # a concurrent first turn stored it: check it too
    conversation_check(row, user=user, action=ConversationAction.CHANGE)
    for name, value in fields.items():
        setattr(row, name, value)
    row.save(update_fields=list(fields))
    return Stored(prompt=row, created=False)


@dataclass(frozen=True)
class Compacted:
    """What compact stored, and the prompt for the compaction turn itself."""

    stored: Stored
    compaction_prompt: str | None


def conversation_prompt_compact(
    *, conversation_id: str, cwd: str, model: str = "", user: Actor
) -> Compacted:
    """Construct afresh (the same rules as :func:`conversation_prompt_construct`); the
    compaction turn's prompt is the fresh prompt + ``"\\n\\n"`` + the compaction
    instructions (the instructions alone when the fresh prompt is None). The stored
    prompt never holds the instructions."""
    stored = conversation_prompt_construct(
        conversation_id=conversation_id, cwd=cwd, model=model, user=user
    )
    instructions = app_settings().compaction_instructions
    parts = [part for part in (stored.prompt.system_prompt, instructions) if part]
    return Compacted(stored=stored, compaction_prompt="\n\n".join(parts) or None)


@transaction.atomic
def conversation_prompt_delete(*, conversation_id: str, user: Actor) -> bool:
    """Forget a conversation's prompt; False when there was none.

    Someone else's conversation needs the delete permission: without it nothing is
    deleted and :class:`~sysprompt.prompts.selectors.ConversationNotFound` (may not see it) or
    :class:`~sysprompt.prompts.selectors.ConversationForbidden` (may see it) is raised.
    """
    conversation_id = conversation_id_check(conversation_id)
    row = (
        ConversationPrompt.objects.select_for_update()
        .filter(conversation_id=conversation_id)
        .first()
    )
    if row is None:
        return False
    conversation_check(row, user=user, action=ConversationAction.DELETE)
    deleted, _ = ConversationPrompt.objects.filter(pk=row.pk).delete()
    return deleted > 0


@transaction.atomic
def conversation_prompts_delete(*, prompts: QuerySet[ConversationPrompt], user: Actor) -> int:
    """Forget the prompts in ``prompts`` that ``user`` may delete (the admin's bulk
    delete): every one with the delete permission, otherwise the user's own; how many
    were."""
    if not user.has_perm(CONVERSATION_DELETE_PERMISSION):
        prompts = prompts.filter(owner_id=user.pk) if user.pk is not None else prompts.none()
    deleted, _ = prompts.delete()
    return deleted


def _stored_fields(rendered: Rendered) -> dict[str, Any]:
    return {
        "system_prompt": rendered.prompt,
        "sha256": rendered.sha256,
        "template_version_id": rendered.template.version or None,
        "cwd": rendered.cwd,
        "model": rendered.model,
        "constructed_at": rendered.rendered_at,
    }


# Groups, agent hosts and their API tokens

PROMPT_AUTHORS_GROUP = "Prompt authors"
AGENT_HOSTS_GROUP = "Agent hosts"
GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    PROMPT_AUTHORS_GROUP: (
        TEMPLATE_EDIT_PERMISSION,
        "sysprompt.view_templateversion",
        CONVERSATION_VIEW_PERMISSION,
        CONVERSATION_CHANGE_PERMISSION,
        CONVERSATION_DELETE_PERMISSION,
    ),
    AGENT_HOSTS_GROUP: (),
}


@transaction.atomic
def groups_ensure() -> list[Group]:
    """Create the groups of :data:`GROUP_PERMISSIONS` and grant their permissions.

    Idempotent and additive: permissions an administrator granted a group since stay.
    """
    create_permissions(apps.get_app_config("sysprompt"), verbosity=0)
    groups = []
    for name, wanted in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        if wanted:
            group.permissions.add(*_permissions(wanted))
        groups.append(group)
    return groups


def _permissions(names: Sequence[str]) -> list[Permission]:
    found = []
    for name in names:
        app_label, codename = name.split(".", 1)
        found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return found


class AgentHostError(Exception):
    """The agent host cannot be set up under that name; nothing was written."""


@dataclass(frozen=True)
class AgentHost:
    """What :func:`agent_host_ensure` did. ``token`` is the key to send as
    ``Authorization: Token <key>``."""

    username: str
    token: str
    user_created: bool
    token_created: bool


@transaction.atomic
def agent_host_ensure(*, name: str, rotate: bool = False) -> AgentHost:
    """A user for an agent host, in the "Agent hosts" group, and its API token.

    Creates the user (without a usable password: it only calls the API) or reuses an
    existing one; reuses its token unless ``rotate`` replaces it. Raises
    :class:`AgentHostError` when the name is not a valid user name, or names a user
    that is inactive or may change the template (its token would not be an agent
    host's).
    """
    user_model = get_user_model()
    field = user_model._meta.get_field(user_model.USERNAME_FIELD)
    assert isinstance(field, Field)
    if not name:
        raise AgentHostError("The agent host's name is empty; give a name such as my-host.")
    try:
        field.run_validators(name)
    except ValidationError as error:
        raise AgentHostError(
            f"{name!r} is not a valid user name: {' '.join(error.messages)}"
        ) from None
    user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: name}).first()
    user_created = user is None
    if user is None:
        user = user_model._default_manager.create_user(**{user_model.USERNAME_FIELD: name})
    elif not user.is_active:
        raise AgentHostError(
            f"User {name!r} is inactive, so its token would not work; "
            "reactivate it in the admin or choose another name."
        )
    elif user.has_perm(TEMPLATE_EDIT_PERMISSION):
        raise AgentHostError(
            f"User {name!r} may change the template, so it is no agent host; choose another "
            f"name (for this user's own token: manage.py drf_create_token {name})."
        )
    user.groups.add(Group.objects.get_or_create(name=AGENT_HOSTS_GROUP)[0])
    if rotate:
        Token.objects.filter(user=user).delete()
    token, token_created = Token.objects.get_or_create(user=user)
    return AgentHost(
        username=name, token=token.key, user_created=user_created, token_created=token_created
    )

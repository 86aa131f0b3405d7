"""Selectors: the database reads, and who may see what.

The current template and its versions, the stored conversation prompts, and the one
rule on conversations (:func:`conversation_check`): its owner may do everything;
others need ``view_conversationprompt`` to see it at all
(:class:`~sysprompt.errors.ConversationNotFound` otherwise, exactly as if it did not
exist), and ``change_``/``delete_conversationprompt`` to construct, compact or delete
it (:class:`~sysprompt.errors.ConversationForbidden`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypeAlias

from django.contrib.auth.models import AnonymousUser, PermissionsMixin
from django.db import connection
from django.db.models import Field, JSONField, QuerySet

from sysprompt.conf import app_settings
from sysprompt.errors import ConversationForbidden, ConversationNotFound
from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion
from sysprompt.prompts.permissions import (
    CONVERSATION_CHANGE_PERMISSION,
    CONVERSATION_DELETE_PERMISSION,
    CONVERSATION_VIEW_PERMISSION,
)
from sysprompt.prompts.validation import conversation_id_check
from sysprompt_core.prompt_names import DEFAULT_PROMPT


@dataclass(frozen=True)
class CurrentTemplate:
    """The template new conversations get: the newest version, or the built-in default."""

    text: str
    version: int
    updated_at: datetime | None
    author: str | None
    compress: bool = False

    @property
    def is_default(self) -> bool:
        return self.version == 0

    @property
    def etag(self) -> str:
        """A strong entity tag naming this version of this text."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]
        return f'"{self.version}-{digest}"'


def template_current(*, prompt: Prompt | None = None) -> CurrentTemplate:
    """The newest stored version of ``prompt`` (``default`` when None), or the
    ``DEFAULT_TEMPLATE`` setting as version 0."""
    versions = TemplateVersion.objects.select_related("author")
    if prompt is None:
        versions = versions.filter(prompt__name=DEFAULT_PROMPT)
    else:
        versions = versions.filter(prompt=prompt)
    newest = versions.order_by("-number").first()
    if newest is None:
        return CurrentTemplate(
            text=app_settings().default_template, version=0, updated_at=None, author=None
        )
    return template_of(newest)


def template_of(version: TemplateVersion) -> CurrentTemplate:
    """A stored version as the API shows it."""
    return CurrentTemplate(
        text=version.text,
        version=version.number,
        updated_at=version.created_at,
        author=version.author.get_username() if version.author else None,
        compress=version.compress,
    )


def template_versions(*, before: int | None = None) -> QuerySet[TemplateVersion]:
    """Every stored version, newest first; only those numbered below ``before`` if given."""
    versions = TemplateVersion.objects.select_related("author").order_by("-number")
    return versions if before is None else versions.filter(number__lt=before)


def template_version(number: int) -> TemplateVersion | None:
    """The stored version ``number``, or None."""
    return template_versions().filter(number=number).first()


def database_check() -> None:
    """One round trip to the database; raises its error when it cannot be reached."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def conversation_prompt_get(conversation_id: str) -> ConversationPrompt | None:
    """The stored prompt of a conversation, or None when it was never constructed.

    Every turn of every conversation comes here, so the query is written once instead
    of compiled by the ORM on each call (which cost more than the query itself); the
    row still becomes a model instance.
    """
    meta = ConversationPrompt._meta
    quote = connection.ops.quote_name
    fields = meta.concrete_fields
    sql = (
        f"SELECT {', '.join(quote(str(field.column)) for field in fields)} "
        f"FROM {quote(meta.db_table)} WHERE {quote('conversation_id')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [conversation_id])
        row = cursor.fetchone()
    if row is None:
        return None
    # SQLite gives naive datetimes (the ORM would make them aware); PostgreSQL aware ones.
    # JSON columns come as text (both backends, as Django sets them up): the field decodes.
    values = [_from_db(field, value) for field, value in zip(fields, row, strict=True)]
    return ConversationPrompt.from_db(connection.alias, [f.attname for f in fields], values)


def _from_db(field: Field[Any, Any], value: object) -> object:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    if isinstance(field, JSONField) and isinstance(value, str):
        return json.loads(value, cls=field.decoder)
    return value


Actor: TypeAlias = PermissionsMixin | AnonymousUser
"""The user a call acts for: ``request.user``."""


class ConversationAction(Enum):
    """What a call does with a stored conversation, and the permission it takes when the
    conversation is someone else's."""

    READ = CONVERSATION_VIEW_PERMISSION
    CHANGE = CONVERSATION_CHANGE_PERMISSION
    DELETE = CONVERSATION_DELETE_PERMISSION


def _owns(prompt: ConversationPrompt, user: Actor) -> bool:
    return prompt.owner_id is not None and prompt.owner_id == user.pk


def conversation_check(
    prompt: ConversationPrompt, *, user: Actor, action: ConversationAction
) -> ConversationPrompt:
    """``prompt`` when ``user`` may do ``action`` with it.

    Its owner may do anything; anyone else needs the view permission to see it
    (:class:`ConversationNotFound` without) and, to change or delete it, that
    permission too (:class:`ConversationForbidden` without). A row without an owner
    (stored before owners existed) is someone else's for everybody. The owner is
    compared first: an owner's own turn costs no query.
    """
    if _owns(prompt, user):
        return prompt
    if not user.has_perm(CONVERSATION_VIEW_PERMISSION):
        raise ConversationNotFound(prompt.conversation_id)
    if action is not ConversationAction.READ and not user.has_perm(action.value):
        raise ConversationForbidden(prompt.conversation_id, action.value)
    return prompt


@dataclass(frozen=True)
class ConversationAccess:
    """What a user who may see a conversation may also do with it (the editor's buttons)."""

    can_change: bool
    can_delete: bool


def conversation_access(prompt: ConversationPrompt, *, user: Actor) -> ConversationAccess:
    """The rules of :func:`conversation_check`, as flags, for a visible conversation."""
    owns = _owns(prompt, user)
    return ConversationAccess(
        can_change=owns or user.has_perm(CONVERSATION_CHANGE_PERMISSION),
        can_delete=owns or user.has_perm(CONVERSATION_DELETE_PERMISSION),
    )


def conversation_prompt_visible(conversation_id: str, *, user: Actor) -> ConversationPrompt:
    """The stored prompt of a conversation ``user`` may see.

    Raises :class:`InvalidInput` for an invalid id and :class:`ConversationNotFound`
    when there is no row or ``user`` may not see it.
    """
    conversation_id_check(conversation_id)
    stored = conversation_prompt_get(conversation_id)
    if stored is None:
        raise ConversationNotFound(conversation_id)
    return conversation_check(stored, user=user, action=ConversationAction.READ)


def conversation_prompts(*, user: Actor) -> QuerySet[ConversationPrompt]:
    """The stored conversation prompts ``user`` may see, newest first, without the text:
    every one for a prompt author, otherwise the user's own."""
    prompts = ConversationPrompt.objects.defer("system_prompt").order_by("-id")
    if user.has_perm(CONVERSATION_VIEW_PERMISSION):
        return prompts
    if user.pk is None:
        return prompts.none()
    return prompts.filter(owner_id=user.pk)


def conversation_prompts_search(
    *, user: Actor, query: str = "", before: int | None = None
) -> QuerySet[ConversationPrompt]:
    """The conversation prompts ``user`` may see whose id contains ``query`` (any case),
    newest first, with their owners; only rows older than the row id ``before`` if given
    (keyset paging, no count)."""
    prompts = conversation_prompts(user=user).select_related("owner")
    query = query.strip()
    if query:
        prompts = prompts.filter(conversation_id__icontains=query)
    return prompts if before is None else prompts.filter(id__lt=before)


def conversation_count(*, user: Actor, cap: int) -> int:
    """How many conversations ``user`` may see, counting at most ``cap + 1`` rows."""
    return conversation_prompts(user=user)[: cap + 1].count()

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

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, PermissionsMixin
from django.db import connection
from django.db.models import Field, JSONField, QuerySet

from sysprompt.conf import app_settings
from sysprompt.errors import ConversationAmbiguous, ConversationForbidden, ConversationNotFound
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


def _prompt_versions(prompt: Prompt | None) -> QuerySet[TemplateVersion]:
    """The versions of ``prompt`` (``None``: ``default``, its name joined: no query
    more), newest first, with their authors."""
    versions = TemplateVersion.objects.select_related("author").order_by("-number")
    if prompt is None:
        return versions.filter(prompt__name=DEFAULT_PROMPT)
    return versions.filter(prompt=prompt)


def template_current(prompt: Prompt | None = None) -> CurrentTemplate:
    """The newest stored version of ``prompt``'s template (``None``: ``default``), or
    the ``DEFAULT_TEMPLATE`` setting as version 0 while it has none."""
    newest = _prompt_versions(prompt).first()
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


def template_versions(
    *, before: int | None = None, prompt: Prompt | None = None
) -> QuerySet[TemplateVersion]:
    """Every stored version of ``prompt`` (``None``: ``default``), newest first; only
    those numbered below ``before`` if given. Numbers count across the deployment, so a
    prompt's own may have gaps."""
    versions = _prompt_versions(prompt)
    return versions if before is None else versions.filter(number__lt=before)


def template_version(number: int, *, prompt: Prompt | None = None) -> TemplateVersion | None:
    """The stored version ``number`` of ``prompt``'s template (``None``: ``default``),
    or None (also when it is another prompt's)."""
    return template_versions(prompt=prompt).filter(number=number).first()


def database_check() -> None:
    """One round trip to the database; raises its error when it cannot be reached."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _conversation_rows(where: str, params: list[int | str]) -> list[ConversationPrompt]:
    """The stored prompts ``where`` selects, each with its prompt (id and name) read in
    the same query.

    Every turn of every conversation comes here, so the query is written once instead
    of compiled by the ORM on each call (which cost more than the query itself); a row
    still becomes a model instance, and its prompt one with only ``id`` and ``name``
    loaded (what a turn compares a body's ``prompt`` with and an answer names).
    """
    meta = ConversationPrompt._meta
    quote = connection.ops.quote_name
    fields = meta.concrete_fields
    columns = ", ".join(f"c.{quote(str(field.column))}" for field in fields)
    sql = (
        f"SELECT {columns}, p.{quote('name')} FROM {quote(meta.db_table)} c "
        f"JOIN {quote(Prompt._meta.db_table)} p ON p.{quote('id')} = c.{quote('prompt_id')} "
        f"WHERE {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found = []
    for row in rows:
        # SQLite gives naive datetimes (the ORM would make them aware); PostgreSQL aware
        # ones. JSON columns come as text (both backends, as Django sets them up).
        values = [_from_db(field, value) for field, value in zip(fields, row[:-1], strict=True)]
        stored = ConversationPrompt.from_db(connection.alias, [f.attname for f in fields], values)
        stored.prompt = Prompt.from_db(
            connection.alias, ["id", "name"], [stored.prompt_id, row[-1]]
        )
        found.append(stored)
    return found


def conversation_prompt_get(
    conversation_id: str, owner_id: int | None
) -> ConversationPrompt | None:
    """The stored prompt of agent host ``owner_id``'s conversation ``conversation_id``
    (ids are scoped to the host that made them), or None when it was never constructed.
    One query; ``owner_id`` None finds nothing (rows without an owner are reached only
    by :func:`conversation_prompt_find`)."""
    if owner_id is None:
        return None
    quote = connection.ops.quote_name
    where = f"c.{quote('owner_id')} = %s AND c.{quote('conversation_id')} = %s"
    found = _conversation_rows(where, [owner_id, conversation_id])
    return found[0] if found else None


def conversation_prompt_find(conversation_id: str, *, user: Actor) -> ConversationPrompt | None:
    """The conversation ``conversation_id`` as a call that names no agent host means it:
    ``user``'s own; else, for a user who may see others' conversations, the one other
    host's of that id; None when there is neither (a first turn makes ``user``'s own).

    One query, as a turn made before ids were scoped to hosts: every row of the id (an
    index), picked here. :class:`ConversationAmbiguous` (listing the hosts) when the id
    names several conversations ``user`` may see and none is ``user``'s own."""
    found = _conversation_rows(
        f"c.{connection.ops.quote_name('conversation_id')} = %s", [conversation_id]
    )
    own = [row for row in found if _owns(row, user)]
    if own:
        return own[0]
    if not found or not user.has_perm(CONVERSATION_VIEW_PERMISSION):
        return None
    if len(found) > 1:
        raise ConversationAmbiguous(conversation_id, _hosts_of(found))
    return found[0]


def _hosts_of(rows: list[ConversationPrompt]) -> list[str]:
    """The user names of the rows' owners, sorted (``""`` for a row without one)."""
    users = get_user_model()
    ids = [row.owner_id for row in rows if row.owner_id is not None]
    names = dict(users.objects.filter(pk__in=ids).values_list("pk", users.USERNAME_FIELD))
    return sorted(str(names.get(row.owner_id, "")) for row in rows)


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


def conversation_prompt_at(
    conversation_id: str, *, user: Actor, host_id: int | None = None
) -> ConversationPrompt | None:
    """The stored prompt a call addresses: agent host ``host_id``'s conversation
    (``/api/agent-hosts/{username}/conversations/{id}/…``), or with ``host_id`` None the
    one :func:`conversation_prompt_find` picks (``/api/conversations/{id}/…``). Checks
    no permission."""
    if host_id is None:
        return conversation_prompt_find(conversation_id, user=user)
    return conversation_prompt_get(conversation_id, host_id)


def conversation_prompt_visible(
    conversation_id: str, *, user: Actor, host_id: int | None = None
) -> ConversationPrompt:
    """The stored prompt of a conversation ``user`` may see (``host_id``: see
    :func:`conversation_prompt_at`).

    Raises :class:`InvalidInput` for an invalid id, :class:`ConversationNotFound`
    when there is no row or ``user`` may not see it, :class:`ConversationAmbiguous`
    when the id names several that ``user`` may see and no host is named.
    """
    conversation_id_check(conversation_id)
    stored = conversation_prompt_at(conversation_id, user=user, host_id=host_id)
    if stored is None:
        raise ConversationNotFound(conversation_id)
    return conversation_check(stored, user=user, action=ConversationAction.READ)


def conversation_prompts(
    *, user: Actor, prompt: Prompt | None = None
) -> QuerySet[ConversationPrompt]:
    """The stored conversation prompts ``user`` may see, newest first, without the text,
    with their prompts: every one for a prompt author, otherwise the user's own; only
    ``prompt``'s when given."""
    prompts = (
        ConversationPrompt.objects.defer("system_prompt").select_related("prompt").order_by("-id")
    )
    if prompt is not None:
        prompts = prompts.filter(prompt=prompt)
    if user.has_perm(CONVERSATION_VIEW_PERMISSION):
        return prompts
    if user.pk is None:
        return prompts.none()
    return prompts.filter(owner_id=user.pk)


def conversation_prompts_search(
    *, user: Actor, query: str = "", before: int | None = None, prompt: Prompt | None = None
) -> QuerySet[ConversationPrompt]:
    """The conversation prompts ``user`` may see whose id contains ``query`` (any case),
    newest first, with their owners and prompts; only ``prompt``'s when given (else every
    prompt's); only rows older than the row id ``before`` if given (keyset paging, no
    count)."""
    prompts = conversation_prompts(user=user, prompt=prompt).select_related("owner")
    query = query.strip()
    if query:
        prompts = prompts.filter(conversation_id__icontains=query)
    return prompts if before is None else prompts.filter(id__lt=before)


def conversation_count(*, user: Actor, cap: int, prompt: Prompt | None = None) -> int:
    """How many conversations ``user`` may see (only ``prompt``'s when given), counting
    at most ``cap + 1`` rows."""
    return conversation_prompts(user=user, prompt=prompt)[: cap + 1].count()

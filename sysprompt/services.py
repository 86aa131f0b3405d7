"""Services: every write the application makes goes through a function here."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.models import ConversationPrompt, TemplateVersion
from sysprompt.selectors import (
    CurrentTemplate,
    Rendered,
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


_SAVE_ATTEMPTS = 8


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
            # Another writer took the number we read as next; its version is current now.
            if if_match is not None:
                raise PreconditionFailed(template_current()) from None
    raise PreconditionFailed(template_current())


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


def conversation_prompt_resolve(*, conversation_id: str, cwd: str, model: str = "") -> Stored:
    """The turn's system prompt: the stored one, byte for byte, or on the first turn a
    freshly constructed one, stored.

    A later turn reads one row and writes nothing. Concurrent first turns may each
    render, but exactly one row is stored and every caller answers with it.
    """
    conversation_id = conversation_id_check(conversation_id)
    cwd = cwd_check(cwd)
    stored = conversation_prompt_get(conversation_id)
    if stored is not None:
        return Stored(prompt=stored, created=False)
    rendered = prompt_render(cwd=cwd, model=model, conversation_id=conversation_id)
    try:
        with transaction.atomic():
            row = ConversationPrompt.objects.create(
                conversation_id=conversation_id,
                created_at=rendered.rendered_at,
                **_stored_fields(rendered),
            )
    except IntegrityError:
        winner = conversation_prompt_get(conversation_id)
        if winner is None:  # created and deleted again in between: try once more
            return conversation_prompt_resolve(
                conversation_id=conversation_id, cwd=cwd, model=model
            )
        return Stored(prompt=winner, created=False)
    return Stored(prompt=row, created=True)


def conversation_prompt_construct(*, conversation_id: str, cwd: str, model: str = "") -> Stored:
    """Render the current template afresh and store it, replacing any stored prompt."""
    conversation_id = conversation_id_check(conversation_id)
    cwd = cwd_check(cwd)
    rendered = prompt_render(cwd=cwd, model=model, conversation_id=conversation_id)
    return _conversation_prompt_store(conversation_id=conversation_id, rendered=rendered)


@transaction.atomic
def _conversation_prompt_store(*, conversation_id: str, rendered: Rendered) -> Stored:
    row, created = ConversationPrompt.objects.update_or_create(
        conversation_id=conversation_id,
        defaults=_stored_fields(rendered),
        create_defaults={"created_at": rendered.rendered_at, **_stored_fields(rendered)},
    )
    return Stored(prompt=row, created=created)


@dataclass(frozen=True)
class Compacted:
    """What compact stored, and the prompt for the compaction turn itself."""

    stored: Stored
    compaction_prompt: str | None


def conversation_prompt_compact(*, conversation_id: str, cwd: str, model: str = "") -> Compacted:
    """Construct afresh; the compaction turn's prompt is the fresh prompt + ``"\\n\\n"`` +
    the compaction instructions (the instructions alone when the fresh prompt is None).
    The stored prompt never holds the instructions."""
    stored = conversation_prompt_construct(conversation_id=conversation_id, cwd=cwd, model=model)
    instructions = app_settings().compaction_instructions
    parts = [part for part in (stored.prompt.system_prompt, instructions) if part]
    return Compacted(stored=stored, compaction_prompt="\n\n".join(parts) or None)


@transaction.atomic
def conversation_prompt_delete(*, conversation_id: str) -> bool:
    """Forget a conversation's prompt; False when there was none."""
    conversation_id = conversation_id_check(conversation_id)
    deleted, _ = ConversationPrompt.objects.filter(conversation_id=conversation_id).delete()
    return deleted > 0


def _stored_fields(rendered: Rendered) -> dict[str, Any]:
    return {
        "system_prompt": rendered.prompt,
        "sha256": rendered.sha256,
        "template_version_id": rendered.template.version or None,
        "cwd": rendered.cwd,
        "model": rendered.model,
        "constructed_at": rendered.rendered_at,
    }

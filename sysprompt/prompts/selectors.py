"""Selectors: every read the application makes, and nothing that writes.

The data flow of a turn (``services.conversation_prompt_resolve``): validate the input
here (:func:`conversation_id_check`, :func:`cwd_check`), look for the stored prompt
(:func:`conversation_prompt_get`), and only when there is none render the current
template (:func:`template_current` → :func:`prompt_render`, which resolves only what
the template references).

Who may do what with a conversation is decided here and nowhere else
(:func:`conversation_check`): its owner may do everything; others need
``view_conversationprompt`` to see it at all (:class:`ConversationNotFound` otherwise,
exactly as if it did not exist), and ``change_``/``delete_conversationprompt`` to
construct, compact or delete it (:class:`ConversationForbidden`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import TypeAlias

from django.apps import apps
from django.contrib.auth.models import AnonymousUser, PermissionsMixin
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from sysprompt.conf import app_settings, resolver_options
from sysprompt.prompts.apps import PromptsConfig
from sysprompt.prompts.diffs import Diff, text_diff
from sysprompt.prompts.models import (
    CONVERSATION_CHANGE_PERMISSION,
    CONVERSATION_DELETE_PERMISSION,
    CONVERSATION_ID_MAX_LENGTH,
    CONVERSATION_VIEW_PERMISSION,
    ConversationPrompt,
    TemplateVersion,
)
from sysprompt_core import template as engine
from sysprompt_core.variables import (
    Missing,
    ResolveContext,
    Value,
    default_registry,
    resolve_prompt,
)
from sysprompt_core.variables.file import directory_real_path, is_inside, real_roots

CONVERSATION_ID = re.compile(rf"[A-Za-z0-9._:-]{{1,{CONVERSATION_ID_MAX_LENGTH}}}")


class InvalidInput(ValueError):
    """Input that names ``field`` and what is wrong with it; nothing was read or written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class TemplateTooLarge(Exception):
    """A template over ``SYSPROMPT["MAX_TEMPLATE_BYTES"]``; nothing was written."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"The template is {size:,} bytes in UTF-8; the limit is {limit:,} bytes "
            "(SYSPROMPT_MAX_TEMPLATE_BYTES)."
        )
        self.size = size
        self.limit = limit


def template_size_check(text: str) -> None:
    """Raise :class:`TemplateTooLarge` when ``text`` is over the configured limit."""
    limit = app_settings().max_template_bytes
    if len(text) > limit // 4 and (size := len(text.encode("utf-8"))) > limit:
        raise TemplateTooLarge(size, limit)


def conversation_id_check(conversation_id: str) -> str:
    """``conversation_id`` when it is 1–200 letters, digits and ``._:-``."""
    if not CONVERSATION_ID.fullmatch(conversation_id):
        raise InvalidInput(
            "conversation_id",
            f"{conversation_id[:220]!r} is not a valid conversation id: use 1 to "
            f"{CONVERSATION_ID_MAX_LENGTH} characters among letters, digits and . _ : -",
        )
    return conversation_id


class CheckedCwd(str):
    """A working directory that passed :func:`cwd_check`.

    The string is the path as given, normalised: what is stored and what
    ``[prompt:cwd]`` shows. ``real`` is the real path of the directory that was opened
    when it was checked: what every resolver works in (``ResolveContext.directory``).
    """

    real: str

    def __new__(cls, path: str, real: str) -> CheckedCwd:
        checked = super().__new__(cls, path)
        checked.real = real
        return checked

    def __reduce__(self) -> tuple[type[CheckedCwd], tuple[str, str]]:
        return (CheckedCwd, (str(self), self.real))


def cwd_check(cwd: str) -> CheckedCwd:
    """``cwd`` normalised, when it is an absolute existing directory in the allowed roots.

    The directory is opened once (``O_DIRECTORY``, nothing is read) and the path of the
    opened descriptor is what must lie inside the allowed roots, so no symlink swapped
    in between a check and a use can move it; that path is returned as ``.real``.
    """
    if "\0" in cwd or not os.path.isabs(cwd):
        raise InvalidInput("cwd", f"{cwd!r} is not an absolute path; pass the full path.")
    roots = real_roots(app_settings().allowed_roots)
    allowed = ", ".join(roots) or "none are configured"
    outside = InvalidInput(
        "cwd",
        f"{cwd!r} is outside the allowed roots ({allowed}); "
        "set SYSPROMPT_ALLOWED_ROOTS to allow it.",
    )
    try:
        # The cheap check first, so that nothing outside is opened. ``realpath`` raises
        # when a link it is following vanishes (a swap under way).
        if not any(is_inside(os.path.realpath(cwd), root) for root in roots):
            raise outside
        real = directory_real_path(cwd)
    except OSError as exc:
        if exc.errno == errno.ENOTSUP:
            raise InvalidInput("cwd", f"{cwd!r} cannot be checked: {exc.strerror}.") from None
        raise InvalidInput("cwd", f"{cwd!r} is not an existing directory.") from None
    if not any(is_inside(real, root) for root in roots):
        raise outside
    return CheckedCwd(os.path.normpath(cwd), real)


@dataclass(frozen=True)
class CurrentTemplate:
    """The template new conversations get: the newest version, or the built-in default."""

    text: str
    version: int
    updated_at: datetime | None
    author: str | None

    @property
    def is_default(self) -> bool:
        return self.version == 0

    @property
    def etag(self) -> str:
        """A strong entity tag naming this version of this text."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]
        return f'"{self.version}-{digest}"'


def template_current() -> CurrentTemplate:
    """The newest stored version, or the ``DEFAULT_TEMPLATE`` setting as version 0."""
    newest = TemplateVersion.objects.select_related("author").order_by("-number").first()
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
    )


def template_versions() -> QuerySet[TemplateVersion]:
    """Every stored version, newest first."""
    return TemplateVersion.objects.select_related("author").order_by("-number")


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
    values = [
        value.replace(tzinfo=UTC) if isinstance(value, datetime) and value.tzinfo is None else value
        for value in row
    ]
    return ConversationPrompt.from_db(connection.alias, [f.attname for f in fields], values)


Actor: TypeAlias = PermissionsMixin | AnonymousUser
"""The user a call acts for: ``request.user``."""


class ConversationNotFound(Exception):
    """No stored prompt under this id that the user may see (the API's 404).

    The message is the same whether there is no row or someone else's, so an answer
    tells no more than "not yours"."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"Conversation {conversation_id!r} has no stored system prompt.")
        self.conversation_id = conversation_id


class ConversationForbidden(Exception):
    """A conversation the user may see but not change or delete (the API's 403)."""

    def __init__(self, conversation_id: str, permission: str) -> None:
        super().__init__(
            f"Conversation {conversation_id!r} belongs to another user; changing or "
            f"deleting it needs the permission {permission}."
        )
        self.conversation_id = conversation_id
        self.permission = permission


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


def parsed_template(source: str) -> engine.Template:
    """``source`` parsed, from the app's :class:`ParsedTemplates` when seen before."""
    config = apps.get_app_config("sysprompt")
    assert isinstance(config, PromptsConfig)
    return config.parsed_templates.get(source)


@dataclass(frozen=True)
class Rendered:
    """A prompt rendered for a conversation: what construct stores, what preview shows."""

    prompt: str | None
    sha256: str | None
    template: CurrentTemplate
    cwd: str
    model: str
    rendered_at: datetime
    values: dict[str, Value]


def prompt_render(
    *,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    template: CurrentTemplate | None = None,
    resolve_all: bool = False,
) -> Rendered:
    """Render ``template`` (default: the current one) for a conversation in ``cwd``.

    ``cwd`` is what :func:`cwd_check` returned (a plain string is checked here): the
    resolvers work in its checked real path. Only what the rendering reaches is
    resolved, unless ``resolve_all`` asks for every referenced variable (the preview).
    Raises :class:`~sysprompt_core.template.PromptTooLarge` when the template's literal text
    alone is over ``MAX_PROMPT_BYTES``.
    """
    checked = cwd if isinstance(cwd, CheckedCwd) else cwd_check(cwd)
    chosen = template_current() if template is None else template
    now = timezone.now()
    context = ResolveContext(
        cwd=str(checked),
        model=model or None,
        conversation_id=conversation_id,
        now=now,
        options=resolver_options(),
        directory=checked.real,
    )
    resolution = resolve_prompt(parsed_template(chosen.text), context, default_registry())
    values = resolution.values.resolve_all() if resolve_all else resolution.values.looked_up()
    prompt = resolution.prompt
    digest = None if prompt is None else hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    return Rendered(
        prompt=prompt,
        sha256=digest,
        template=chosen,
        cwd=str(checked),
        model=model,
        rendered_at=now,
        values=values,
    )


@dataclass(frozen=True)
class Preview:
    """What the editor shows: the prompt construct would store, lint, every value."""

    rendered: Rendered
    diagnostics: list[engine.Diagnostic]


# What a preview shows of the values: each at most this many characters, all of them
# together at most this many; a value equal to an earlier one is shown once.
PREVIEW_VALUE_CHARS = 4_096
PREVIEW_SECTION_CHARS = 262_144


@dataclass(frozen=True)
class PreviewVariable:
    """One variable as a preview shows it.

    ``value`` is the shown part (``None``: it does not exist, see ``reason``; ``""``
    with ``same_as``: the same value as that earlier key); ``omitted`` counts the
    characters left out by the caps."""

    key: str
    value: str | None
    reason: str | None = None
    omitted: int = 0
    same_as: str | None = None


def preview_variables(values: Mapping[str, Value]) -> list[PreviewVariable]:
    """``values`` by key, each distinct value once and within the preview's caps."""
    first_key: dict[str, str] = {}
    left = PREVIEW_SECTION_CHARS
    shown: list[PreviewVariable] = []
    for key, value in sorted(values.items()):
        if isinstance(value, Missing):
            shown.append(PreviewVariable(key, None, reason=value.reason))
        elif (earlier := first_key.get(value)) is not None:
            shown.append(PreviewVariable(key, "", same_as=earlier))
        else:
            first_key[value] = key
            part = value[: min(PREVIEW_VALUE_CHARS, left)]
            left -= len(part)
            shown.append(PreviewVariable(key, part, omitted=len(value) - len(part)))
    return shown


def template_preview(
    *,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    template: str | None = None,
) -> Preview:
    """Render ``template`` (default: the current one) exactly as construct would.

    Every referenced variable is resolved so the editor can show its value; nothing
    is stored.
    """
    cwd = cwd_check(cwd)
    if conversation_id is not None:
        conversation_id_check(conversation_id)
    chosen = template_current() if template is None else _draft(template)
    rendered = prompt_render(
        cwd=cwd, model=model, conversation_id=conversation_id, template=chosen, resolve_all=True
    )
    return Preview(rendered=rendered, diagnostics=template_lint(chosen.text))


def template_lint(text: str) -> list[engine.Diagnostic]:
    """``lint`` with the registered variable types and names as its vocabulary."""
    return engine.lint(text, default_registry().vocabulary())


def _draft(text: str) -> CurrentTemplate:
    return CurrentTemplate(text=text, version=0, updated_at=None, author=None)


def conversation_prompts_search(*, user: Actor, query: str = "") -> QuerySet[ConversationPrompt]:
    """The conversation prompts ``user`` may see whose id contains ``query`` (any case),
    newest first, with their owners."""
    prompts = conversation_prompts(user=user).select_related("owner")
    query = query.strip()
    return prompts.filter(conversation_id__icontains=query) if query else prompts


@dataclass(frozen=True)
class CompactionPreview:
    """What ``compact`` would store now for a conversation, or why it cannot be shown."""

    stored: ConversationPrompt
    fresh: Rendered | None
    problem: str | None
    diff: Diff | None


def conversation_compaction_preview(conversation_id: str, *, user: Actor) -> CompactionPreview:
    """:func:`compaction_preview` of a conversation ``user`` may construct (it resolves
    variables: reads files, runs git); :class:`ConversationNotFound` or
    :class:`ConversationForbidden` otherwise, before anything is resolved."""
    stored = conversation_prompt_visible(conversation_id, user=user)
    conversation_check(stored, user=user, action=ConversationAction.CHANGE)
    return compaction_preview(stored)


def compaction_preview(stored: ConversationPrompt) -> CompactionPreview:
    """Render the current template for ``stored``'s cwd and model; persist nothing.

    Checks no permission: callers go through :func:`conversation_compaction_preview`.
    """
    try:
        cwd = cwd_check(stored.cwd)
    except InvalidInput as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=exc.message, diff=None)
    try:
        fresh = prompt_render(cwd=cwd, model=stored.model, conversation_id=stored.conversation_id)
    except engine.PromptTooLarge as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=str(exc), diff=None)
    diff = text_diff(stored.system_prompt, fresh.prompt)
    return CompactionPreview(stored=stored, fresh=fresh, problem=None, diff=diff)


# Walking a project for file suggestions stops after this many directory entries, so a
# huge tree costs a bounded time; these folders are never worth suggesting.
FILE_SUGGESTION_SCAN_LIMIT = 5000
FILE_SUGGESTION_SKIPPED = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}
)


def files_suggest(*, cwd: str, query: str = "", limit: int = 50) -> list[str]:
    """Files under ``cwd`` a ``[file:…]`` variable could name, relative to ``cwd``.

    ``cwd`` must pass :func:`cwd_check`; its checked real path is walked. Only names
    are read (no file is opened); a symlink is offered only when its target is a
    regular file inside the allowed roots. Paths containing ``query`` (any case) come
    first when they start with it, then by depth and name.
    """
    root = cwd_check(cwd).real
    roots = real_roots(app_settings().allowed_roots)
    needle = query.strip().lower()
    found: list[str] = []
    pending = deque([""])
    scanned = 0
    while pending and scanned < FILE_SUGGESTION_SCAN_LIMIT:
        relative = pending.popleft()
        try:
            with os.scandir(os.path.join(root, relative)) as entries:
                children = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in children:
            scanned += 1
            path = f"{relative}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in FILE_SUGGESTION_SKIPPED:
                    pending.append(f"{path}/")
            elif needle in path.lower() and _suggestable(entry, roots):
                found.append(path)
    found.sort(key=lambda path: (not path.lower().startswith(needle), path.count("/"), path))
    return found[:limit]


def _suggestable(entry: os.DirEntry[str], roots: list[str]) -> bool:
    if not entry.is_symlink():
        return entry.is_file(follow_symlinks=False)
    target = os.path.realpath(entry.path)
    return os.path.isfile(target) and any(is_inside(target, root) for root in roots)

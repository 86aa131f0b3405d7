"""Services: every write to templates and conversation prompts goes through a function here.

Keyword-only, typed, atomic; they validate first (``validation``), check who may act
(``selectors.conversation_check``) and render (``rendering``) before writing.

What a conversation is built from is chosen by the caller's ``build``
(:class:`~sysprompt.prompts.builds.Chooser`: the label's target; by default the
working copy), called only when a prompt is rendered — never on a later turn — and
recorded with the stored prompt (label, release, arm).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import (
    ConversationForbidden,
    ConversationNotFound,
    InvalidInput,
    PreconditionFailed,
    PromptConflict,
)
from sysprompt.events import records
from sysprompt.events.services import Actor as Recorded
from sysprompt.prompts.builds import Build, Chooser, working_copy
from sysprompt.prompts.catalog import prompt_get, prompt_or_default
from sysprompt.prompts.hosts import new_conversation_prompt
from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion
from sysprompt.prompts.permissions import CONVERSATION_DELETE_PERMISSION
from sysprompt.prompts.rendering import (
    NO_HOST,
    CallAnswer,
    Rendered,
    call_override_apply,
    instance_override,
    prompt_render,
    stored_host,
)
from sysprompt.prompts.selectors import (
    Actor,
    ConversationAction,
    CurrentTemplate,
    conversation_check,
    conversation_prompt_at,
    conversation_prompt_get,
    template_current,
)
from sysprompt.prompts.validation import (
    CheckedCwd,
    HostContext,
    conversation_id_check,
    cwd_check,
    preset_check,
    template_size_check,
)

_SAVE_ATTEMPTS = 1000


def template_save(
    *,
    text: str,
    compress: bool | None = None,
    author: AbstractBaseUser | AnonymousUser | None = None,
    if_match: Sequence[str] | None = None,
    prompt: Prompt | None = None,
) -> TemplateVersion:
    """Add ``text`` as the newest version of ``prompt``'s template (``None``:
    ``default``), byte for byte, with its ``compress`` setting (the source is compressed
    before it is parsed; the text stays as written). ``compress=None`` keeps the current
    version's setting (off for the built-in default), read in the same transaction as
    the write: a text-only save never turns compression off, as a variant's save does
    not (library.md).

    ``if_match`` holds entity tags (or ``"*"``) from the caller's ``If-Match``: unless
    one of them names the prompt's current version, :class:`PreconditionFailed` is
    raised and nothing is written. Without it the write wins, even over a concurrent one.
    The version's number is the deployment's next (numbers count across prompts).
    """
    template_size_check(text)
    target = prompt_or_default(prompt)
    for _ in range(_SAVE_ATTEMPTS):
        try:
            return _template_version_add(
                text=text, compress=compress, author=author, if_match=if_match, prompt=target
            )
        except IntegrityError:
            # Another prompt's writer took the number we read as next (saves of one
            # prompt wait for each other on its row): try again with the next number,
            # If-Match checked afresh. Every lost attempt is someone else's version.
            continue
    raise RuntimeError(f"template_save lost {_SAVE_ATTEMPTS} races in a row")


@transaction.atomic
def _template_version_add(
    *,
    text: str,
    compress: bool | None,
    author: AbstractBaseUser | AnonymousUser | None,
    if_match: Sequence[str] | None,
    prompt: Prompt,
) -> TemplateVersion:
    now = timezone.now()
    author_id = None if author is None else author.pk
    # Locks the prompt's row until the end (PostgreSQL): saves of one prompt take turns,
    # so If-Match compares with what is current when the version is written.
    Prompt.objects.filter(pk=prompt.pk).update(updated_at=now, updated_by_id=author_id)
    current = template_current(prompt)
    if if_match is not None and not _etag_matches(if_match, current):
        raise PreconditionFailed(current)
    newest = TemplateVersion.objects.aggregate(newest=Max("number"))["newest"] or 0
    version = TemplateVersion.objects.create(
        prompt=prompt,
        number=newest + 1,
        text=text,
        compress=current.compress if compress is None else compress,
        author_id=author_id,
        created_at=now,
    )
    records.template_saved(
        actor=author,
        version=version.number,
        text=text,
        compress=version.compress,
        prompt=prompt.name,
    )
    return version


def _etag_matches(tags: Sequence[str], current: CurrentTemplate) -> bool:
    return any(tag == "*" or tag == current.etag for tag in tags)


@dataclass(frozen=True)
class Stored:
    """A stored conversation prompt and whether this call created its row; ``call`` is
    the answer with a call override layered on, when the request gave one;
    ``mismatch``, on a later turn, which of the frozen context's ``cwd``, ``model`` and
    ``provider`` this turn's differ from (:func:`context_mismatch`); ``kept``, for a
    construct or compact of a stored conversation, which fields of its frozen context
    the call did not give and were kept (:data:`KEPT_FIELDS`, in that order)."""

    prompt: ConversationPrompt
    created: bool
    call: CallAnswer | None = None
    mismatch: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


CONTEXT_FIELDS = ("cwd", "model", "provider")
"""The frozen context a later turn is compared with (``context_mismatch``)."""
KEPT_FIELDS = ("cwd", "model", "provider", "tools", "variables", "override")
"""The frozen context a construct or compact keeps for each field it does not give."""
NO_STORED_CWD = (
    "give cwd, the conversation's working directory (an absolute path): the prompt is "
    "built for it, and a conversation without a stored prompt has no frozen one to keep."
)


def context_mismatch(
    stored: ConversationPrompt, *, cwd: str, model: str | None, provider: str | None
) -> tuple[str, ...]:
    """Which of ``cwd``, ``model`` and ``provider`` (in that order) differ from what
    ``stored`` was built with: the turn gets the frozen prompt all the same (the cache
    promise), and the host is told. ``cwd`` is compared as stored (normalised); a
    ``model`` or ``provider`` the turn leaves out (``None``) is no difference."""
    given = {"cwd": cwd, "model": model, "provider": provider}
    frozen = {"cwd": stored.cwd, "model": stored.model, "provider": stored.provider}
    return tuple(
        name for name in CONTEXT_FIELDS if given[name] is not None and given[name] != frozen[name]
    )


def conversation_prompt_resolve(
    *,
    conversation_id: str,
    cwd: str,
    model: str | None = "",
    user: Actor,
    host: HostContext = NO_HOST,
    build: Chooser = working_copy,
    prompt: str | None = None,
    host_id: int | None = None,
) -> Stored:
    """The turn's system prompt: the stored one, byte for byte, or on the first turn a
    freshly constructed one (from what ``build`` chooses, for ``host``'s context, with
    the owner's instance override and the thread override), stored with its owner. A
    call override in ``host`` is layered onto the answer (``Stored.call``) and never
    stored.

    The conversation is the agent host ``host_id``'s (an author addressing it), else
    the one :func:`~sysprompt.prompts.selectors.conversation_prompt_find` picks for
    ``user`` (its own, or the one other host's an author may see); a first turn stores
    it as the host's (``host_id``) or ``user``'s. ``prompt`` is the name the call gives:
    a first turn is built from it (else the owner's default prompt, else ``default``:
    :func:`~sysprompt.prompts.hosts.new_conversation_prompt`); a later turn naming
    another prompt than the frozen one raises :class:`PromptConflict` naming both.

    A later turn reads one row (its prompt's name joined) and writes nothing (and, for
    the owner, runs no other query); it says which of the frozen ``cwd``, ``model`` and
    ``provider`` this turn's differ from (``Stored.mismatch``; ``model=None``: the turn
    gave none). Concurrent first turns may each render, but exactly one row is stored
    and every caller answers with it. A conversation ``user`` may not see raises
    :class:`~sysprompt.prompts.selectors.ConversationNotFound`, and nothing is rendered
    or stored.
    """
    conversation_id = conversation_id_check(conversation_id)
    checked = cwd_check(cwd)
    preset_check(host.call_override, "call_override")  # a call override is this call's work
    stored = _resolved(
        conversation_id=conversation_id,
        cwd=checked,
        model=model or "",
        user=user,
        host=host,
        build=build,
        prompt=prompt,
        host_id=host_id,
    )
    if not stored.created:
        differs = context_mismatch(
            stored.prompt, cwd=str(checked), model=model, provider=host.provider
        )
        stored = dataclasses.replace(stored, mismatch=differs) if differs else stored
    if host.call_override is None:
        return stored
    call = call_override_apply(
        stored=stored.prompt.system_prompt,
        call=host.call_override,
        cwd=checked,
        model=model or "",
        conversation_id=conversation_id,
        host=host,
        stored_prefix=stored.prompt.shared_prefix_chars,
    )
    return dataclasses.replace(stored, call=call)


def _resolved(
    *,
    conversation_id: str,
    cwd: CheckedCwd,
    model: str,
    user: Actor,
    host: HostContext,
    build: Chooser,
    prompt: str | None,
    host_id: int | None,
) -> Stored:
    stored = conversation_prompt_at(conversation_id, user=user, host_id=host_id)
    if stored is not None:
        return Stored(prompt=_frozen_from(_readable(stored, user), prompt), created=False)
    owner_id = _new_owner(conversation_id, user, host_id)
    frozen = new_conversation_prompt(prompt, owner_id=owner_id)
    preset_check(host.override, "override")
    chosen = build(conversation_id=conversation_id, owner_id=owner_id, prompt=frozen)
    rendered = _rendered(chosen, cwd, model, conversation_id, host, owner_id, frozen.pk)
    try:
        with transaction.atomic():
            row = ConversationPrompt.objects.create(
                prompt=frozen,
                conversation_id=conversation_id,
                created_at=rendered.rendered_at,
                owner_id=owner_id,
                **_stored_fields(rendered, chosen),
            )
    except IntegrityError:
        winner = conversation_prompt_get(conversation_id, owner_id)
        if winner is None:  # created and deleted again in between: try once more
            return _resolved(
                conversation_id=conversation_id,
                cwd=cwd,
                model=model,
                user=user,
                host=host,
                build=build,
                prompt=prompt,
                host_id=host_id,
            )
        return Stored(prompt=_frozen_from(_readable(winner, user), prompt), created=False)
    return Stored(prompt=row, created=True)


def _readable(prompt: ConversationPrompt, user: Actor) -> ConversationPrompt:
    return conversation_check(prompt, user=user, action=ConversationAction.READ)


def _frozen_from(stored: ConversationPrompt, name: str | None) -> ConversationPrompt:
    """``stored`` when the call names no prompt or the one it was frozen from (by its
    name, or a former one: only then is a prompt looked up); :class:`PromptConflict`
    naming both otherwise."""
    frozen = stored.prompt.name
    if name is None or name == frozen or prompt_get(name).pk == stored.prompt_id:
        return stored
    raise PromptConflict(
        f"Conversation {stored.conversation_id!r} is frozen from prompt {frozen!r}; this "
        f"call names prompt {name!r}. A conversation keeps its prompt: send {frozen!r} (or "
        "no prompt), or start a new conversation."
    )


def _new_owner(conversation_id: str, user: Actor, host_id: int | None) -> int | None:
    """Who a new conversation belongs to: the agent host ``host_id`` a call addresses
    (another user's needs the view and change permissions, as changing one of its
    conversations does), else ``user``."""
    if host_id is None or host_id == user.pk:
        return user.pk
    if not user.has_perm(ConversationAction.READ.value):
        raise ConversationNotFound(conversation_id)
    if not user.has_perm(ConversationAction.CHANGE.value):
        raise ConversationForbidden(conversation_id, ConversationAction.CHANGE.value)
    return host_id


def conversation_prompt_construct(
    *,
    conversation_id: str,
    cwd: str | None = None,
    model: str | None = None,
    user: Actor,
    host: HostContext = NO_HOST,
    build: Chooser = working_copy,
    prompt: str | None = None,
    host_id: int | None = None,
) -> Stored:
    """Render afresh what ``build`` chooses now (the label's target; by default the
    working copy) and store it, replacing any stored prompt.

    ``cwd``, ``model`` and ``host`` give the context. Each field a stored conversation's
    call leaves out (``None``; for the thread override, not given) is kept from its
    frozen context — ``cwd``, ``model``, ``provider``, ``tools``, ``variables``,
    ``override`` — and named in ``Stored.kept``; a field given replaces it. A new
    conversation needs ``cwd`` (:class:`InvalidInput` naming it otherwise); its model
    left out is none (``""``). The instance override is the conversation owner's.

    Which conversation (``host_id``) and which prompt (``prompt``, a name): as in
    :func:`conversation_prompt_resolve`; a stored conversation is built again from the
    prompt it was frozen from.

    A new conversation gets ``user`` (or the addressed host) as its owner. Someone
    else's conversation keeps its owner and needs the change permission: without it
    nothing is rendered and
    :class:`~sysprompt.prompts.selectors.ConversationNotFound` (may not see it) or
    :class:`~sysprompt.prompts.selectors.ConversationForbidden` (may see it) is raised.
    """
    conversation_id = conversation_id_check(conversation_id)
    stored = _changeable(conversation_id, user, host_id)
    kept: tuple[str, ...] = ()
    if stored is None:
        if cwd is None:
            message = f"Conversation {conversation_id!r} has no stored prompt yet: {NO_STORED_CWD}"
            raise InvalidInput("cwd", message)
        owner_id = _new_owner(conversation_id, user, host_id)
        frozen = new_conversation_prompt(prompt, owner_id=owner_id)
    else:
        frozen = _frozen_from(stored, prompt).prompt
        owner_id = stored.owner_id
        kept = _kept(cwd=cwd, model=model, host=host)
        cwd = stored.cwd if cwd is None else cwd
        model = stored.model if model is None else model
    checked = cwd_check(cwd)
    if host.override_given:
        preset_check(host.override, "override")
    chosen = build(conversation_id=conversation_id, owner_id=owner_id, prompt=frozen)
    context = host if stored is None else host.over(stored_host(stored))
    rendered = _rendered(
        chosen, checked, model or "", conversation_id, context, owner_id, frozen.pk
    )
    done = _conversation_prompt_store(
        conversation_id=conversation_id,
        rendered=rendered,
        build=chosen,
        user=user,
        stored=stored,
        owner_id=owner_id,
        prompt=frozen,
    )
    return dataclasses.replace(done, kept=kept) if kept else done


def _kept(*, cwd: str | None, model: str | None, host: HostContext) -> tuple[str, ...]:
    """The fields of the frozen context a construct or compact does not give."""
    given = {
        "cwd": cwd is not None,
        "model": model is not None,
        "provider": host.provider is not None,
        "tools": host.tools is not None,
        "variables": host.variables is not None,
        "override": host.override_given,
    }
    return tuple(name for name in KEPT_FIELDS if not given[name])


def _rendered(
    chosen: Build,
    cwd: CheckedCwd,
    model: str,
    conversation_id: str,
    host: HostContext,
    owner_id: int | None,
    prompt_id: int,
) -> Rendered:
    """The prompt ``chosen`` builds for the conversation, with its owner's instance
    override; :class:`ResolutionBusy` when git was too busy to be read (nothing is
    then frozen)."""
    rendered = prompt_render(
        cwd=cwd,
        model=model,
        conversation_id=conversation_id,
        template=chosen.template,
        host=host,
        instance=instance_override(owner_id, prompt_id),
        library=chosen.library,
    )
    rendered.check_not_busy()
    return rendered


def _changeable(
    conversation_id: str, user: Actor, host_id: int | None
) -> ConversationPrompt | None:
    """Refuse, before anything is rendered, a stored conversation ``user`` may not change;
    the stored row, or None."""
    stored = conversation_prompt_at(conversation_id, user=user, host_id=host_id)
    if stored is not None:
        conversation_check(stored, user=user, action=ConversationAction.CHANGE)
    return stored


@transaction.atomic
def _conversation_prompt_store(
    *,
    conversation_id: str,
    rendered: Rendered,
    build: Build,
    user: Actor,
    stored: ConversationPrompt | None,
    owner_id: int | None,
    prompt: Prompt,
) -> Stored:
    fields = _stored_fields(rendered, build)
    locked = ConversationPrompt.objects.select_for_update()
    if stored is not None:
        row = locked.filter(pk=stored.pk).first()
    else:
        row = locked.filter(owner_id=owner_id, conversation_id=conversation_id).first()
    if row is None:
        row, created = ConversationPrompt.objects.get_or_create(
            owner_id=owner_id,
            conversation_id=conversation_id,
            defaults={"prompt": prompt, "created_at": rendered.rendered_at, **fields},
        )
        if created:
            return Stored(prompt=row, created=True)
        row = locked.get(pk=row.pk)  # a concurrent first turn stored it: check it too
    conversation_check(row, user=user, action=ConversationAction.CHANGE)
    if row.prompt_id != prompt.pk:  # a concurrent first turn froze it from another prompt
        _frozen_from(row, prompt.name)
    row.prompt = prompt
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
    *,
    conversation_id: str,
    cwd: str | None = None,
    model: str | None = None,
    user: Actor,
    host: HostContext = NO_HOST,
    build: Chooser = working_copy,
    prompt: str | None = None,
    host_id: int | None = None,
) -> Compacted:
    """Construct afresh (the same rules as :func:`conversation_prompt_construct`: what
    the call leaves out of the context is the frozen one's, ``Stored.kept``); the
    compaction turn's prompt is the fresh prompt + ``"\\n\\n"`` + the compaction
    instructions (the instructions alone when the fresh prompt is None). The stored
    prompt never holds the instructions."""
    stored = conversation_prompt_construct(
        conversation_id=conversation_id,
        cwd=cwd,
        model=model,
        user=user,
        host=host,
        build=build,
        prompt=prompt,
        host_id=host_id,
    )
    instructions = app_settings().compaction_instructions
    parts = [part for part in (stored.prompt.system_prompt, instructions) if part]
    return Compacted(stored=stored, compaction_prompt="\n\n".join(parts) or None)


@transaction.atomic
def conversation_prompt_delete(
    *, conversation_id: str, user: Actor, host_id: int | None = None
) -> bool:
    """Forget a conversation's prompt (``host_id``: which host's, as in
    :func:`conversation_prompt_resolve`); False when there was none.

    Someone else's conversation needs the delete permission: without it nothing is
    deleted and :class:`~sysprompt.prompts.selectors.ConversationNotFound` (may not see it) or
    :class:`~sysprompt.prompts.selectors.ConversationForbidden` (may see it) is raised.
    """
    conversation_id = conversation_id_check(conversation_id)
    found = conversation_prompt_at(conversation_id, user=user, host_id=host_id)
    if found is None:
        return False
    row = ConversationPrompt.objects.select_for_update().filter(pk=found.pk).first()
    if row is None:
        return False
    conversation_check(row, user=user, action=ConversationAction.DELETE)
    deleted, _ = ConversationPrompt.objects.filter(pk=row.pk).delete()
    owner = row.owner.get_username() if row.owner is not None else None
    records.conversation_deleted(
        actor=_recorded(user), conversation=row.conversation_id, owner=owner, label=row.label
    )
    return deleted > 0


@transaction.atomic
def conversation_prompts_delete(*, prompts: QuerySet[ConversationPrompt], user: Actor) -> int:
    """Forget the prompts in ``prompts`` that ``user`` may delete (the admin's bulk
    delete): every one with the delete permission, otherwise the user's own; how many
    were."""
    if not user.has_perm(CONVERSATION_DELETE_PERMISSION):
        prompts = prompts.filter(owner_id=user.pk) if user.pk is not None else prompts.none()
    owner = f"owner__{get_user_model().USERNAME_FIELD}"
    gone = list(prompts.order_by("pk").values_list("conversation_id", owner, "label"))
    deleted, _ = prompts.delete()
    for conversation, name, label in gone:
        records.conversation_deleted(
            actor=_recorded(user), conversation=conversation, owner=name, label=label
        )
    return deleted


def _recorded(user: Actor) -> Recorded:
    """The user as the audit log names them (``None``: the system)."""
    return user if isinstance(user, AbstractBaseUser | AnonymousUser) else None


def _stored_fields(rendered: Rendered, build: Build) -> dict[str, Any]:
    return {
        "label": build.label,
        "release": build.release,
        "arm": build.arm,
        "system_prompt": rendered.prompt,
        "sha256": rendered.sha256,
        "template_version_id": rendered.template.version or None,
        "cwd": rendered.cwd,
        "model": rendered.model,
        "constructed_at": rendered.rendered_at,
        "provider": rendered.host.provider or "",
        "tools": list(rendered.host.tools or ()),
        "variables": dict(rendered.host.variables or {}),
        "override": rendered.host.override_json if rendered.host.override_given else None,
        "fragments_used": [use.as_dict() for use in rendered.fragments_used],
        "shared_prefix_chars": rendered.shared_prefix_chars,
    }

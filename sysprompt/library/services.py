"""Services: every write to the library goes through a function here.

Keyword-only, typed, atomic. Each checks its input first (``validation``: names, keys,
sizes, settings, overrides), then appends to a variant's history (``history``: If-Match,
numbering, races) or writes the shipped default's pin or a host's override. Nothing is
ever overwritten in place: deleting, restoring and adopting add versions.

* :func:`variant_save`, :func:`variant_delete`, :func:`variant_restore` — a variant's
  history (library spec §2.4); :func:`variants_save_many` — many saves at once (import);
* :func:`default_adopt`, :func:`default_keep_mine` — the answers to "newer default
  available" (§6); :func:`library_install` — the installer itself (``installer``);
* :func:`host_override_set` — an agent host's instance override (§4, level 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import FragmentNotFound, InvalidInput
from sysprompt.events import records
from sysprompt.library.history import (
    Author,
    NewVersion,
    VariantWrite,
    version_append,
    versions_append_many,
)
from sysprompt.library.installer import InstallStep, library_install
from sysprompt.library.models import HostOverride, ShippedDefault
from sysprompt.library.selectors import (
    HostOverrideState,
    VariantState,
    agent_host_id,
    host_override_state,
    library_source,
    stored_key,
    variant_current,
    variant_version,
)
from sysprompt.library.validation import (
    VariantSettings,
    fragment_name_valid,
    override_valid,
    settings_valid,
    source_valid,
    text_size_valid,
    variant_key_valid,
)
from sysprompt_core.library import DEFAULT_STRATEGY, VariantKey

__all__ = [
    "InstallStep",
    "default_adopt",
    "default_keep_mine",
    "host_override_set",
    "library_install",
    "variant_delete",
    "variant_restore",
    "variant_save",
    "variants_save_many",
]


def variant_save(
    *,
    name: str,
    provider: str | None = None,
    model: str | None = None,
    text: str,
    compress: bool = False,
    defaults: Mapping[str, str] | None = None,
    strategy: str = DEFAULT_STRATEGY,
    author: Author,
    if_match: Sequence[str] | None = None,
    source: str = "user",
) -> VariantState:
    """Add ``text`` with its settings as the newest version of the variant, byte for byte
    (creating the fragment and the variant with version 1; bringing a deleted variant
    back). ``provider`` and ``model`` are normalised (``None`` or ``""``: any).

    ``if_match`` holds entity tags or ``"*"`` from the caller's ``If-Match``: unless one
    names the newest version, :class:`~sysprompt.errors.VariantConflict` is raised and
    nothing is written; a variant with no version yet matches only ``"*"``. Without it
    the write wins, even over a concurrent one. Raises ``InvalidInput`` (naming the
    field) and ``TemplateTooLarge`` before anything is read.
    """
    name = fragment_name_valid(name)
    key = variant_key_valid(provider, model)
    text_size_valid(text)
    settings = settings_valid(compress, defaults, strategy)
    new = NewVersion(text=text, settings=settings, source=source_valid(source))
    return version_append(name=name, key=key, new=new, author=author, if_match=if_match)


@dataclass(frozen=True)
class VariantSave:
    """One variant's text and settings for :func:`variants_save_many` (the fields of
    :func:`variant_save`)."""

    name: str
    provider: str | None
    model: str | None
    text: str
    compress: bool = False
    defaults: Mapping[str, str] = field(default_factory=dict)
    strategy: str = DEFAULT_STRATEGY


def variants_save_many(
    *, variants: Sequence[VariantSave], author: Author, source: str = "user"
) -> None:
    """:func:`variant_save` for many variants at once, without ``If-Match``: each is
    checked as it would be there (``InvalidInput``, ``TemplateTooLarge``, before
    anything is written), then all are added in one transaction and a few queries
    (an import of thousands of files makes no query per file)."""
    checked_source = source_valid(source)
    limit = app_settings().max_template_bytes
    writes = []
    for variant in variants:
        text_size_valid(variant.text, limit)
        writes.append(
            VariantWrite(
                name=fragment_name_valid(variant.name),
                key=variant_key_valid(variant.provider, variant.model),
                new=NewVersion(
                    text=variant.text,
                    settings=settings_valid(variant.compress, variant.defaults, variant.strategy),
                    source=checked_source,
                ),
            )
        )
    versions_append_many(writes=writes, author=author)


def variant_delete(
    *,
    name: str,
    provider: str | None = None,
    model: str | None = None,
    author: Author,
    if_match: Sequence[str] | None = None,
) -> VariantState:
    """Delete the variant: add a version marked deleted that keeps the text and settings
    (resolution skips it; saving or restoring brings it back).
    :class:`~sysprompt.errors.FragmentNotFound` when it has no live version."""
    name = fragment_name_valid(name)
    key = variant_key_valid(provider, model)

    def deletion(current: VariantState | None) -> NewVersion:
        if current is None or current.deleted:
            raise FragmentNotFound(name, key.provider, key.model)
        settings = _settings_of(current)
        return NewVersion(
            text=current.text, settings=settings, source="user", deleted=True, change="deleted"
        )

    return version_append(name=name, key=key, new=deletion, author=author, if_match=if_match)


def variant_restore(
    *,
    name: str,
    provider: str | None = None,
    model: str | None = None,
    number: int,
    author: Author,
    if_match: Sequence[str] | None = None,
) -> VariantState:
    """Add version ``number``'s text and settings as the newest version (a person's:
    ``source`` user, started from the shipped text version ``number`` started from),
    live again even if the variant was deleted.
    :class:`~sysprompt.errors.FragmentNotFound` for a variant without versions;
    ``InvalidInput`` (``number``) for a version it does not have."""
    name = fragment_name_valid(name)
    key = variant_key_valid(provider, model)
    old = variant_version(name, key.provider, key.model, number)
    if old is None:
        current = variant_current(name, key.provider, key.model)
        if current is None:
            raise FragmentNotFound(name, key.provider, key.model)
        raise InvalidInput(
            "number",
            f"The variant has no version {number}; its versions are numbered 1 to "
            f"{current.version}.",
        )
    settings = VariantSettings(
        compress=old.compress,
        defaults=dict(old.defaults or {}),
        strategy=settings_valid(strategy=old.strategy).strategy,
    )
    new = NewVersion(
        text=old.text, settings=settings, source="user", based_on=old.based_on, change="restored"
    )
    return version_append(name=name, key=key, new=new, author=author, if_match=if_match)


@transaction.atomic
def default_adopt(
    *, name: str, provider: str | None = None, model: str | None = None, author: Author
) -> VariantState:
    """Take the text and settings the installer last shipped for the variant as its
    newest version (``source`` default, so later installs upgrade it again) and unpin
    it. Writes no version when the newest already is that default.
    ``InvalidInput`` (``name``) when nothing was shipped for the variant."""
    name = fragment_name_valid(name)
    key = variant_key_valid(provider, model)
    shipped = _shipped_or_refused(name, key, "adopt")
    current = variant_current(name, key.provider, key.model)
    settings = VariantSettings(
        compress=shipped.compress,
        defaults=dict(shipped.defaults or {}),
        strategy=settings_valid(strategy=shipped.strategy).strategy,
    )
    if shipped.pinned:
        shipped.pinned = False
        shipped.updated_at = timezone.now()
        shipped.save(update_fields=["pinned", "updated_at"])
    if current is not None and _is_default(current, shipped.text, settings):
        state = variant_current(name, key.provider, key.model)
        assert state is not None
        return state
    new = NewVersion(text=shipped.text, settings=settings, source="default", change="adopted")
    return version_append(name=name, key=key, new=new, author=author)


@transaction.atomic
def default_keep_mine(
    *, name: str, provider: str | None = None, model: str | None = None, author: Author
) -> VariantState:
    """Pin the variant ("Keep mine"): later installs leave it alone and it is no longer
    flagged. :class:`~sysprompt.errors.FragmentNotFound` for a variant without versions,
    ``InvalidInput`` (``name``) when nothing was shipped for it."""
    name = fragment_name_valid(name)
    key = variant_key_valid(provider, model)
    if variant_current(name, key.provider, key.model) is None:
        raise FragmentNotFound(name, key.provider, key.model)
    shipped = _shipped_or_refused(name, key, "keep your text over")
    if not shipped.pinned:
        shipped.pinned = True
        shipped.updated_at = timezone.now()
        shipped.save(update_fields=["pinned", "updated_at"])
        records.fragment_kept(actor=author, name=name, provider=key.provider, model=key.model)
    state = variant_current(name, key.provider, key.model)
    assert state is not None
    return state


@transaction.atomic
def host_override_set(
    *, username: str, prompt_id: int, override: object, author: Author
) -> HostOverrideState:
    """Set the instance override of the agent host ``username`` for the prompt
    ``prompt_id`` (``None`` removes it),
    stored as given once checked: ``InvalidInput`` names the field (``override``,
    ``override.strategy``, ``override.preset`` for a preset not in the library);
    :class:`~sysprompt.errors.AgentHostNotFound` for a user outside the "Agent hosts"
    group. Checks no permission: what acts for a person (the API, the editor) calls
    ``sysprompt.releases.services.host_override_set``, which asks for the permission
    to publish when the host's label is protected, then this."""
    user_id = agent_host_id(username)
    override_valid(override, "override", library_source())
    row, _ = HostOverride.objects.update_or_create(
        user_id=user_id,
        prompt_id=prompt_id,
        defaults={
            "override": override,
            "updated_by_id": None if author is None else author.pk,
            "updated_at": timezone.now(),
        },
    )
    records.host_override(actor=author, host=username, override=override, prompt=row.prompt.name)
    return host_override_state(username, prompt_id)


def _settings_of(state: VariantState) -> VariantSettings:
    return VariantSettings(
        compress=state.compress, defaults=dict(state.defaults), strategy=state.strategy
    )


def _shipped_or_refused(name: str, key: VariantKey, what: str) -> ShippedDefault:
    provider, model = stored_key(key.provider, key.model)
    shipped = (
        ShippedDefault.objects.select_for_update()
        .filter(fragment__name=name, provider=provider, model=model)
        .first()
    )
    if shipped is None:
        raise InvalidInput(
            "name",
            f"The installer ships no default for this variant of {name!r}: there is "
            f"nothing to {what}.",
        )
    return shipped


def _is_default(state: VariantState, text: str, settings: VariantSettings) -> bool:
    return (
        state.source == "default"
        and not state.deleted
        and state.text == text
        and _settings_of(state) == settings
    )

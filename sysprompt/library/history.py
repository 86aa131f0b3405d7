"""Appending a version to a variant's history: the one write every library service and
the installer make on fragments.

checked input → (retry on a lost race) → in one transaction: read the newest version →
``If-Match`` and the caller's own check → the fragment's row (created with its first
version) → the version numbered newest + 1, with the shipped text it started from
(``based_on``: the installer's version its own text, a person's or an import's that of
the version before, a restore that of the version restored) → the variant's new state.
:func:`versions_append_many` does the same for many variants at once (an import), in
a few queries whatever their number.

Two writers that read the same newest version both try the same number; the unique
constraint lets one in and the other's ``IntegrityError`` sends it round again (it then
reads the winner's version). With ``If-Match`` the loser gets
:class:`~sysprompt.errors.VariantConflict` instead: the version it named is no longer
the newest. Every lost attempt is someone else's saved version, so writers as a whole
always progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from sysprompt.errors import VariantConflict
from sysprompt.events import records
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.library.selectors import (
    BULK_CHUNK,
    VariantState,
    stored_key,
    text_digest,
    variant_current,
)
from sysprompt.library.validation import Source, VariantSettings
from sysprompt_core.library import VariantKey

Author = AbstractBaseUser | AnonymousUser | None
Make = Callable[[VariantState | None], "NewVersion"]

_SAVE_ATTEMPTS = 1000


@dataclass(frozen=True)
class NewVersion:
    """What the next version of a variant holds (the number is the history's)."""

    text: str
    settings: VariantSettings
    source: Source
    deleted: bool = False
    change: str = "saved"
    """What the audit log calls it: saved, deleted, restored, adopted, installed."""
    based_on: str | None = None
    """The shipped text's digest it started from; ``None``: the installer's version
    started from its own text, any other from what the newest version started from."""


def version_append(
    *,
    name: str,
    key: VariantKey,
    new: NewVersion | Make,
    author: Author,
    if_match: Sequence[str] | None = None,
) -> VariantState:
    """Add ``new`` as the newest version of variant ``key`` of fragment ``name`` (both
    already checked) and return the variant's state.

    ``if_match`` holds entity tags or ``"*"``: unless one names the newest version (a
    variant without versions matches only ``"*"``), :class:`VariantConflict` is raised.
    ``new`` may be a function of the newest version (``None``: none), called inside the
    transaction: it may raise to refuse the write (deleting needs a live variant).
    """
    for _ in range(_SAVE_ATTEMPTS):
        try:
            return _append(name=name, key=key, new=new, author=author, if_match=if_match)
        except IntegrityError:
            if if_match is not None:
                raise VariantConflict(variant_current(name, key.provider, key.model)) from None
    raise RuntimeError(f"version_append lost {_SAVE_ATTEMPTS} races in a row")


@transaction.atomic
def _append(
    *,
    name: str,
    key: VariantKey,
    new: NewVersion | Make,
    author: Author,
    if_match: Sequence[str] | None,
) -> VariantState:
    current = variant_current(name, key.provider, key.model)
    if if_match is not None and not etag_matches(if_match, current):
        raise VariantConflict(current)
    if not isinstance(new, NewVersion):
        new = new(current)
    based_on = _based_on(new, current)
    now = timezone.now()
    fragment, _ = Fragment.objects.get_or_create(name=name, defaults={"created_at": now})
    provider, model = stored_key(key.provider, key.model)
    number = (0 if current is None else current.version) + 1
    FragmentVersion.objects.create(
        fragment=fragment,
        provider=provider,
        model=model,
        number=number,
        text=new.text,
        compress=new.settings.compress,
        defaults=new.settings.defaults,
        strategy=new.settings.strategy,
        source=new.source,
        deleted=new.deleted,
        based_on=based_on,
        author_id=None if author is None else author.pk,
        created_at=now,
    )
    records.fragment_saved(
        actor=author,
        name=name,
        provider=key.provider,
        model=key.model,
        version=number,
        change=new.change,
        source=new.source,
        deleted=new.deleted,
        text=new.text,
    )
    state = variant_current(name, key.provider, key.model)
    assert state is not None
    return state


def _based_on(new: NewVersion, current: VariantState | None) -> str:
    """Which shipped text ``new`` started from (see :class:`NewVersion`)."""
    return _based_on_given(new, "" if current is None else current.based_on)


def _based_on_given(new: NewVersion, previous: str) -> str:
    """Which shipped text ``new`` started from, ``previous`` being the ``based_on`` of
    the variant's newest version ("" when it has none)."""
    if new.based_on is not None:
        return new.based_on
    if new.source == "default":
        return text_digest(new.text)
    return previous


@dataclass(frozen=True)
class VariantWrite:
    """One variant's next version, for :func:`versions_append_many`."""

    name: str
    key: VariantKey
    new: NewVersion


def versions_append_many(*, writes: Sequence[VariantWrite], author: Author) -> None:
    """Add each write's version as the newest of its variant (all checked already), in
    one transaction and a few queries whatever their number: what
    :func:`version_append` does for one, without ``If-Match`` (the writes win over
    concurrent ones). A lost race for a number (the unique constraint) starts the whole
    batch again, reading the numbers afresh."""
    for _ in range(_SAVE_ATTEMPTS):
        try:
            with transaction.atomic():
                _append_many(writes, author)
            return
        except IntegrityError:
            continue
    raise RuntimeError(f"versions_append_many lost {_SAVE_ATTEMPTS} races in a row")


def _append_many(writes: Sequence[VariantWrite], author: Author) -> None:
    now = timezone.now()
    fragments = _fragment_ids(sorted({write.name for write in writes}), now)
    newest = _newest_versions(list(fragments.values()))
    rows = []
    for write in writes:
        provider, model = stored_key(write.key.provider, write.key.model)
        fragment_id = fragments[write.name]
        number, previous = newest.get((fragment_id, provider, model), (0, ""))
        rows.append(
            FragmentVersion(
                fragment_id=fragment_id,
                provider=provider,
                model=model,
                number=number + 1,
                text=write.new.text,
                compress=write.new.settings.compress,
                defaults=write.new.settings.defaults,
                strategy=write.new.settings.strategy,
                source=write.new.source,
                deleted=write.new.deleted,
                based_on=_based_on_given(write.new, previous),
                author_id=None if author is None else author.pk,
                created_at=now,
            )
        )
    FragmentVersion.objects.bulk_create(rows, batch_size=BULK_CHUNK)


def _fragment_ids(names: list[str], now: datetime) -> dict[str, int]:
    """The id of every fragment in ``names``, creating those that do not exist yet."""
    found: dict[str, int] = {}
    for start in range(0, len(names), BULK_CHUNK):
        chunk = names[start : start + BULK_CHUNK]
        found.update(Fragment.objects.filter(name__in=chunk).values_list("name", "pk"))
    missing = [Fragment(name=name, created_at=now) for name in names if name not in found]
    if not missing:
        return found
    Fragment.objects.bulk_create(missing, batch_size=BULK_CHUNK)
    if connection.features.can_return_rows_from_bulk_insert:  # the ids came back
        found.update((fragment.name, fragment.pk) for fragment in missing)
        return found
    created = [fragment.name for fragment in missing]
    for start in range(0, len(created), BULK_CHUNK):
        chunk = created[start : start + BULK_CHUNK]
        found.update(Fragment.objects.filter(name__in=chunk).values_list("name", "pk"))
    return found


def _newest_versions(fragment_ids: list[int]) -> dict[tuple[int, str, str], tuple[int, str]]:
    """The newest version's number and ``based_on`` of every variant of the fragments
    ``fragment_ids`` (the small columns of their versions, never a text)."""
    newest: dict[tuple[int, str, str], tuple[int, str]] = {}
    for start in range(0, len(fragment_ids), BULK_CHUNK):
        chunk = fragment_ids[start : start + BULK_CHUNK]
        rows = (
            FragmentVersion.objects.filter(fragment_id__in=chunk)
            .values_list("fragment_id", "provider", "model", "number", "based_on")
            .order_by("number")
        )
        for fragment_id, provider, model, number, based_on in rows.iterator():
            newest[(fragment_id, provider, model)] = (number, based_on)
    return newest


def etag_matches(tags: Sequence[str], current: VariantState | None) -> bool:
    """Whether ``If-Match`` ``tags`` name ``current`` (``"*"`` names any state, even none)."""
    return any(tag == "*" or (current is not None and tag == current.etag) for tag in tags)

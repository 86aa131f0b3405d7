"""Appending a version to a variant's history: the one write every library service and
the installer make on fragments.

checked input → (retry on a lost race) → in one transaction: read the newest version →
``If-Match`` and the caller's own check → the fragment's row (created with its first
version) → the version numbered newest + 1 → the variant's new state.

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

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from sysprompt.errors import VariantConflict
from sysprompt.events import records
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.library.selectors import VariantState, stored_key, variant_current
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


def etag_matches(tags: Sequence[str], current: VariantState | None) -> bool:
    """Whether ``If-Match`` ``tags`` name ``current`` (``"*"`` names any state, even none)."""
    return any(tag == "*" or (current is not None and tag == current.etag) for tag in tags)

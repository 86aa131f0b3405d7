"""The preview's working directory, remembered per user on the server.

Pipeline: an editor page (the root template's, a variant's) → :func:`recent_cwds` (one
query) → :func:`preview_cwd`, the newest of them that still passes ``cwd_check`` (else
the first allowed root), which the page renders its first preview in and puts in the
field; the field's list offers the rest. Once a preview in a valid directory settles,
the page posts it to ``/editor/cwd`` → :func:`cwd_remember` (checked again as a
preview checks it; first in the list, at most :data:`RECENT_CWDS_MAX`). The preview
itself stores nothing.
"""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from sysprompt.editor.models import EditorPreference
from sysprompt.errors import InvalidInput
from sysprompt.prompts.validation import cwd_check
from sysprompt_core.limits import CWD_MAX_LENGTH

RECENT_CWDS_MAX = 8

User = AbstractBaseUser | AnonymousUser


def recent_cwds(user: User) -> list[str]:
    """The working directories ``user`` previewed in, newest first (none for an
    anonymous user)."""
    if user.pk is None:
        return []
    stored = (
        EditorPreference.objects.filter(user_id=user.pk)
        .values_list("recent_cwds", flat=True)
        .first()
    )
    if not isinstance(stored, list):
        return []
    return [cwd for cwd in stored if isinstance(cwd, str)][:RECENT_CWDS_MAX]


def preview_cwd(recent: list[str], default: str) -> str:
    """The newest of ``recent`` that is still a valid cwd (a directory may have gone, or
    the allowed roots changed), else ``default``."""
    for cwd in recent:
        try:
            return str(cwd_check(cwd))
        except InvalidInput:
            continue
    return default


@transaction.atomic
def cwd_remember(*, user: User, cwd: str) -> list[str]:
    """Put ``cwd`` first in ``user``'s working directories (refused, naming ``cwd``, as
    a preview refuses it); the list as now stored (nothing is, for an anonymous user)."""
    if len(cwd) > CWD_MAX_LENGTH:
        raise InvalidInput("cwd", f"A working directory is at most {CWD_MAX_LENGTH} characters.")
    checked = str(cwd_check(cwd))
    if user.pk is None:
        return []
    preference, _ = EditorPreference.objects.select_for_update().get_or_create(user_id=user.pk)
    before = preference.recent_cwds if isinstance(preference.recent_cwds, list) else []
    recent = [checked, *(item for item in before if item != checked)][:RECENT_CWDS_MAX]
    if recent != before:
        preference.recent_cwds = recent
        preference.save(update_fields=["recent_cwds", "updated_at"])
    return recent

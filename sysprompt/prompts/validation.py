"""Input checks: what the API and the editor pass in, checked before anything is read.

Each check returns the value it accepts (``cwd_check`` with the real path of the
directory it opened) or raises :class:`~sysprompt.errors.InvalidInput` or
:class:`~sysprompt.errors.TemplateTooLarge`.
"""

from __future__ import annotations

import errno
import os
import re

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, TemplateTooLarge
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, CONVERSATION_ID_PATTERN
from sysprompt_core.paths import directory_real_path, is_inside, real_roots

CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)


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

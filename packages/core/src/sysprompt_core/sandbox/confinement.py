"""How a git reader is confined, and what happens where it cannot be: it fails closed.

A reader confines itself with two kernel mechanisms (:func:`confine`): the seccomp
filter of :mod:`~sysprompt_core.sandbox.syscalls` (no socket, so no other service
reached), then Landlock (:mod:`~sysprompt_core.sandbox.landlock`: read-only beneath the
roots). It reports what it got as a :class:`Confinement`. A reader that lacks either
reads nothing (:meth:`Confinement.refusal` says why, and the values a request asks for
do not exist with that reason) unless its spec accepts unconfined readers: the
operator's explicit ``SYSPROMPT_GIT_ALLOW_UNCONFINED=true``.

:func:`unconfined_reason` is the same judgement made ahead of time from the kernel's
word, for the server's start-up log and ``manage.py check``; the readers' own attempt
is what decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sysprompt_core.sandbox.landlock import (
    LandlockUnavailable,
    confine_to_reading,
    landlock_status,
)
from sysprompt_core.sandbox.syscalls import (
    SeccompUnavailable,
    forbid_sockets,
    load_bindings,
    seccomp_status,
)

__all__ = [
    "ALLOW_UNCONFINED_SETTING",
    "Confinement",
    "confine",
    "unconfined_reason",
]

ALLOW_UNCONFINED_SETTING = "SYSPROMPT_GIT_ALLOW_UNCONFINED"
"""The operator's explicit acceptance of git readers the kernel does not confine."""

LANDLOCK_SWITCHED_OFF = "Landlock is switched off (SYSPROMPT_GIT_LANDLOCK=false)"


@dataclass(frozen=True)
class Confinement:
    """What confines a reader: the Landlock ABI enforced (0: none) and the seccomp
    filter (loaded or not), each with why not."""

    landlock: int
    landlock_reason: str | None
    seccomp: bool
    seccomp_reason: str | None

    @property
    def confined(self) -> bool:
        return self.landlock > 0 and self.seccomp

    def why_not(self) -> str | None:
        """What is missing, for people (None: nothing)."""
        return _joined(
            None if self.landlock else self.landlock_reason or "Landlock is unavailable",
            None if self.seccomp else self.seccomp_reason or "seccomp is unavailable",
        )

    def refusal(self, *, allow_unconfined: bool) -> str | None:
        """Why a reader confined like this reads nothing (None: it reads)."""
        why = self.why_not()
        if why is None or allow_unconfined:
            return None
        return refusal_text(why)

    def message(self) -> dict[str, Any]:
        """The handshake's fields (``landlock`` and ``reason`` as before)."""
        return {
            "landlock": self.landlock,
            "reason": self.landlock_reason,
            "seccomp": self.seccomp,
            "seccomp_reason": self.seccomp_reason,
        }


def refusal_text(why: str) -> str:
    return (
        f"git readers cannot be confined by the kernel here ({why}), so nothing is read; "
        f"{ALLOW_UNCONFINED_SETTING}=true accepts unconfined readers"
    )


def confine(roots: Iterable[str], *, landlock: bool = True) -> Confinement:
    """Confine the calling process for good, as far as this machine allows: the seccomp
    filter, then Landlock beneath ``roots`` (unless ``landlock`` is False). Call it
    once its imports are done, while it has one thread."""
    load_bindings()  # before Landlock: finding libseccomp runs a program
    try:
        forbid_sockets()
        seccomp, seccomp_reason = True, None
    except SeccompUnavailable as exc:
        seccomp, seccomp_reason = False, f"seccomp is unavailable: {exc.strerror or exc}"
    if not landlock:
        return Confinement(0, LANDLOCK_SWITCHED_OFF, seccomp, seccomp_reason)
    try:
        abi = confine_to_reading(roots)
    except LandlockUnavailable as exc:
        return Confinement(
            0, f"Landlock is unavailable: {exc.strerror or exc}", seccomp, seccomp_reason
        )
    return Confinement(abi, None, seccomp, seccomp_reason)


def unconfined_reason(*, landlock: bool = True) -> str | None:
    """Why readers started now could not be confined (None: they could), from the
    kernel's word: Landlock's ABI and libseccomp's probe of the ``seccomp`` call."""
    landlock_why: str | None = LANDLOCK_SWITCHED_OFF
    if landlock:
        status = landlock_status()
        landlock_why = None if status.available else f"Landlock is unavailable: {status.reason}"
    seccomp = seccomp_status()
    return _joined(
        landlock_why, None if seccomp.available else f"seccomp is unavailable: {seccomp.reason}"
    )


def _joined(*parts: str | None) -> str | None:
    present = [part for part in parts if part]
    return "; ".join(present) if present else None

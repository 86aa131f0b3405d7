"""Landlock: the kernel confines what a process may open, for good.

A process calls :func:`confine_to_reading` once, after its imports are done and before
it reads anything it was asked to: from then on it (and every thread and child it
starts) may open files and list directories beneath the given paths, read-only, and
nothing else — no write, truncate, create, remove, rename or link anywhere, no file
executed, no device ioctl; on ABI 4 and later no TCP bind or connect; on ABI 6 and
later no signal to a process outside the sandbox and no abstract UNIX socket outside
it. Files already open (the worker's pipes) stay usable. ``no_new_privs`` is set first,
as the kernel requires.

The system calls go through landlockpy (0BSD, pure ``ctypes``, no dependency): it asks
the kernel for its ABI version and handles every access right that version knows (ABI
1 the basic file rights, 2 ``REFER``, 3 ``TRUNCATE``, 5 ``IOCTL_DEV``, and so on), so a
newer kernel confines more and an older one never fails on an unknown right.

Where Landlock cannot be had (not Linux, a kernel before 5.13 or built without it, a
container whose seccomp policy blocks the calls), :func:`landlock_status` says why and
:func:`confine_to_reading` raises :class:`LandlockUnavailable`: the caller decides what
runs without it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "LandlockStatus",
    "LandlockUnavailable",
    "confine_to_reading",
    "landlock_status",
]


class LandlockUnavailable(OSError):
    """The kernel cannot confine this process with Landlock; the message says why."""


@dataclass(frozen=True)
class LandlockStatus:
    """What this machine offers: the Landlock ABI version (0: none) and, when there
    is none, why (for people)."""

    abi: int
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.abi > 0


def landlock_status() -> LandlockStatus:
    """Whether this kernel offers Landlock, asked of the kernel itself (one system call
    that creates nothing)."""
    if sys.platform != "linux":
        return LandlockStatus(0, f"Landlock is a Linux feature; this is {sys.platform}")
    try:
        import landlockpy
    except ImportError:  # pragma: no cover - a dependency of the core on Linux
        return LandlockStatus(0, "the landlockpy package is not installed")
    try:
        abi = landlockpy.abi_version()
    except OSError as exc:  # a seccomp policy may answer EPERM, for example
        return LandlockStatus(0, f"the kernel refused to answer: {_describe(exc)}")
    if abi < 1:
        return LandlockStatus(
            0,
            "the kernel has no Landlock (Linux 5.13 or later, with landlock in the "
            "lsm= boot parameter or CONFIG_LSM, is needed)",
        )
    return LandlockStatus(abi)


def confine_to_reading(paths: Iterable[str]) -> int:
    """Restrict the calling process for good to reading beneath ``paths`` (directories:
    their files and subdirectories; files: that file); the ABI version enforced.

    A path that cannot be opened is left out (nothing beneath it can be read). Call it
    while the process has one thread: threads that already run are not confined.
    Raises :class:`LandlockUnavailable` when the kernel cannot do it; then nothing was
    changed but, perhaps, ``no_new_privs``.
    """
    status = landlock_status()
    if not status.available:
        raise LandlockUnavailable(errno.ENOSYS, status.reason or "Landlock is unavailable")
    import landlockpy

    read_file = landlockpy.AccessFS.READ_FILE
    read_dir = landlockpy.AccessFS.READ_DIR
    try:
        with landlockpy.Ruleset(
            scoped=landlockpy.Scope.ABSTRACT_UNIX_SOCKET | landlockpy.Scope.SIGNAL
        ) as ruleset:
            for path in dict.fromkeys(paths):
                kind = _kind(path)
                if kind is None:
                    continue
                ruleset.allow_path(path, read_file | read_dir if kind == "dir" else read_file)
            ruleset.restrict(no_new_privs=True)
            return ruleset.abi_version
    except landlockpy.UnsupportedError as exc:
        raise LandlockUnavailable(exc.errno or errno.ENOSYS, _describe(exc)) from exc
    except landlockpy.LandlockError as exc:
        raise LandlockUnavailable(exc.errno or errno.EPERM, _describe(exc)) from exc


def _kind(path: str) -> str | None:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else None


def _describe(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()

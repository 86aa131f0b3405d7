"""Confinement primitives: where a path really is, and whether it lies inside a root.

The server checks a request's working directory with them, and the ``file:`` and
``git:`` resolvers check what they open. The rule throughout: check what was actually
opened (the path of an open descriptor, as the kernel reports it), never a name
looked up twice.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable

_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_PROC_FD = "/proc/self/fd"
_MAXPATHLEN = 1024  # macOS: F_GETPATH fills a buffer of this size


def real_roots(roots: Iterable[str]) -> list[str]:
    """The absolute ones of ``roots``, ``~`` expanded and symlinks resolved."""
    expanded = (os.path.expanduser(root) for root in roots if root)
    return [os.path.realpath(root) for root in expanded if os.path.isabs(root)]


def is_inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (``/home/a`` does not hold ``/home/ab``)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def descriptor_path(fd: int) -> str:
    """The path of what ``fd`` is open on, as the kernel knows it now.

    ``/proc/self/fd/<fd>`` on Linux, ``fcntl(F_GETPATH)`` on macOS. Raises
    :class:`OSError` (``ENOTSUP``) where neither exists: there, confinement cannot be
    checked without a race, so nothing is read.
    """
    if os.path.isdir(_PROC_FD):
        return os.readlink(f"{_PROC_FD}/{fd}")
    if sys.platform != "win32":
        import fcntl

        getpath = getattr(fcntl, "F_GETPATH", None)
        if getpath is not None:
            buffer = fcntl.fcntl(fd, getpath, bytes(_MAXPATHLEN))
            return os.fsdecode(buffer.split(b"\0", 1)[0])
    raise OSError(errno.ENOTSUP, "the path of an open file cannot be known on this platform")


def directory_real_path(path: str) -> str:
    """Open the directory ``path`` once and return the path of what was opened.

    Raises :class:`OSError` when it is no directory, cannot be opened, or the platform
    cannot tell an open descriptor's path (see :func:`descriptor_path`).
    """
    fd = os.open(path, _DIRECTORY_FLAGS)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):  # where O_DIRECTORY does not exist
            raise NotADirectoryError(errno.ENOTDIR, "not a directory")
        return descriptor_path(fd)
    finally:
        os.close(fd)

"""Listing the files below a directory without leaving the allowed roots, whatever is
renamed or swapped while the listing runs.

Pipeline: ``confined_files(top, roots, …)`` opens ``top`` once (``O_DIRECTORY``,
``O_NOFOLLOW``) and checks the path of the *opened* descriptor against ``roots`` →
breadth first, each directory is opened from that descriptor one component at a time
(``openat`` with ``O_NOFOLLOW``: a symlink is never followed on the way down) and the
path of what was opened must still lie below ``top``'s → ``os.scandir`` on the
descriptor → names, sorted per directory. A symlink is listed only when what it
points to, opened without reading (``O_PATH`` on Linux), is a regular file whose path
lies inside ``roots``.

A directory swapped for a symlink is refused when opened, a directory
renamed away is skipped (its opened path is no longer below ``top``), and no name is
ever looked up twice. Any ``OSError`` inside the walk skips what raised it; only ``top``
itself raises. The walk is bounded: at most ``max_entries`` directory entries are
looked at.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Collection, Iterable
from itertools import islice

from sysprompt_core.paths import descriptor_path, is_inside

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
# What a symlink points to is opened to learn what and where it is, never to read it:
# O_PATH where it exists (no device is opened, no FIFO waited on), else non-blocking.
_TARGET = (
    os.O_PATH | _CLOEXEC
    if hasattr(os, "O_PATH")
    else os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
)


def confined_files(
    top: str,
    roots: Iterable[str],
    *,
    max_entries: int,
    skip: Collection[str] = (),
    wanted: Callable[[str], bool] | None = None,
) -> list[str]:
    """The files below the directory ``top``, as ``/``-separated paths relative to it,
    breadth first and by name within a directory (see the module docstring).

    ``roots`` are real paths (``paths.real_roots``); ``skip`` names directories never
    entered (``.git``); ``wanted`` filters paths before a symlink's target is opened.
    Raises :class:`OSError` when ``top`` cannot be opened as a directory (a symlink
    included: ``ENOTDIR`` or ``ELOOP``) or what was opened lies outside ``roots`` (``EACCES``).
    """
    roots = list(roots)
    top_fd = os.open(top, _DIRECTORY)
    try:
        real_top = descriptor_path(top_fd)
        if not any(is_inside(real_top, root) for root in roots):
            raise PermissionError(errno.EACCES, "outside the allowed roots", top)
        return _walk(top_fd, real_top, roots, max_entries, frozenset(skip), wanted)
    finally:
        os.close(top_fd)


def _walk(
    top_fd: int,
    real_top: str,
    roots: list[str],
    max_entries: int,
    skip: frozenset[str],
    wanted: Callable[[str], bool] | None,
) -> list[str]:
    found: list[str] = []
    pending = deque([""])
    scanned = 0
    while pending and scanned < max_entries:
        relative = pending.popleft()
        fd = _open_below(top_fd, relative)
        if fd is None:
            continue
        try:
            if not _below(fd, real_top):
                continue
            entries = _entries(fd, max_entries - scanned)
            for entry in entries:
                scanned += 1
                path = f"{relative}{entry.name}"
                kind = _kind(entry)
                if kind == "dir":
                    if entry.name not in skip:
                        pending.append(f"{path}/")
                elif (wanted is None or wanted(path)) and (
                    kind == "file" or (kind == "link" and _link_to_file(fd, entry.name, roots))
                ):
                    found.append(path)
        finally:
            os.close(fd)
    return found


def _open_below(top_fd: int, relative: str) -> int | None:
    """The directory ``relative`` (``"a/b/"``) below ``top_fd``, opened one component
    at a time without following a symlink; ``None`` when any step fails."""
    try:
        fd = os.dup(top_fd)
    except OSError:
        return None
    for part in relative.split("/")[:-1]:
        try:
            child = os.open(part, _DIRECTORY, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = child
    return fd


def _below(fd: int, real_top: str) -> bool:
    try:
        return is_inside(descriptor_path(fd), real_top)
    except OSError:
        return False


def _entries(fd: int, room: int) -> list[os.DirEntry[str]]:
    """Up to ``room`` entries of the directory open as ``fd``, by name."""
    try:
        with os.scandir(fd) as scan:
            return sorted(islice(scan, max(room, 0)), key=lambda entry: entry.name)
    except OSError:
        return []


def _kind(entry: os.DirEntry[str]) -> str:
    """``dir``, ``file``, ``link`` or ``other``, never following a link."""
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass
    return "other"


def _link_to_file(parent: int, name: str, roots: list[str]) -> bool:
    """Whether the symlink ``name`` in ``parent`` leads to a regular file inside
    ``roots``: what it leads to is opened (not read) and that is what is checked."""
    try:
        fd = os.open(name, _TARGET, dir_fd=parent)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        target = descriptor_path(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return any(is_inside(target, root) for root in roots)

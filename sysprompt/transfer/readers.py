"""Reading a library's file tree from a zip file or a directory, bounded and refusing
what is unsafe: bytes in, an :class:`Archive` out (nothing is written, nothing parsed).

Pipeline: ``read_zip(data)`` / ``read_directory(path)`` → :class:`Archive` (``files``:
``{path: bytes}`` for ``sysprompt_core.library.parse_tree``; ``refusals``: what makes
the import impossible; ``ignored``: what is not part of a library and is left alone) →
``services.library_import``.

What each member becomes:

* refused (an :class:`~sysprompt_core.library.Refusal`, the import will not apply):
  a symbolic link (a zip member whose mode is ``S_IFLNK``; a link found in a directory,
  to a file or to a folder — never followed), anything else that is not a regular file
  or a folder (devices, FIFOs, sockets), an absolute path, a drive letter, a backslash
  or a ``..`` segment in a zip member's name (zip-slip), a name given twice, an
  encrypted or damaged member, a file over its size limit (``.md`` files:
  ``SYSPROMPT["MAX_TEMPLATE_BYTES"]``; ``sysprompt.json``:
  :data:`SETTINGS_MAX_BYTES`), a file name that is not UTF-8, and the whole archive when
  it is not a zip file, holds more than ``max_entries`` members (files and folders) or
  more than ``max_total_bytes`` of content; a folder nested more than
  :data:`MAX_DEPTH` deep is refused without being read. Sizes are checked against what
  a zip declares *and* counted while reading (at most the limit plus one byte of any
  member is ever decompressed), so neither a lying header nor a zip bomb can exhaust
  memory.
* ignored (an :class:`Ignored` note, listed in the report, never read): files that are
  not ``.md`` and neither ``sysprompt.json`` nor ``prompts.json`` (llxprt-style
  directories may hold a README, scripts, editor backups), hidden files and folders (a
  segment starting with ``.``, such as ``.git/`` or ``.DS_Store``; ``.`` itself is left
  to ``parse_tree``, which refuses it) and a zip's ``__MACOSX/`` metadata folder. Any
  other ``.md`` file is never ignored: it is a fragment, and one that cannot be imported
  (an invalid name, ``README.md`` say) is refused by ``parse_tree`` rather than silently dropped.
* read: every other file, into ``files``; ``parse_tree`` then checks names, the
  layout, UTF-8 text and the settings (and, again, that no path leaves the tree).

Folders are not entries of ``files``. Paths in a zip are relative to the library's top
(zip a prompt folder's *contents*: ``core.md``, not ``prompts/core.md``); the
directory given to ``read_directory`` is its top and may itself be a link, but nothing
inside it is followed.
"""

from __future__ import annotations

import errno
import io
import itertools
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sysprompt.conf import app_settings
from sysprompt_core.library import SETTINGS_PATH, Refusal

ARCHIVE = "(archive)"
"""The path a refusal of the whole archive carries."""
MAX_ENTRIES = 10_000
"""The most members (files and folders) an archive or directory may hold."""
MAX_TOTAL_BYTES = 64 * 1_048_576
"""The most content, in bytes, the files read from one archive may hold together."""
SETTINGS_MAX_BYTES = 4 * 1_048_576
"""The largest ``sysprompt.json`` (per-file defaults may make it larger than a
template)."""
MAX_DEPTH = 64
"""The deepest folder read (fragment names have at most 200 characters)."""
MARKDOWN = ".md"
PROMPTS_PATH = "prompts.json"
"""The named prompts' settings beside the tree (``transfer.services``): read as
``sysprompt.json`` is."""
_MACOS_METADATA = "__MACOSX"
_CHUNK = 65_536
_DRIVE = re.compile(r"[A-Za-z]:")


@dataclass(frozen=True)
class Ignored:
    """A member that is not part of a library: left alone, and listed in the report."""

    path: str
    reason: str


@dataclass(frozen=True)
class ArchiveLimits:
    """The bounds of one read; ``max_file_bytes`` ``None`` is the template size limit."""

    max_entries: int = MAX_ENTRIES
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_file_bytes: int | None = None
    max_settings_bytes: int = SETTINGS_MAX_BYTES


@dataclass(frozen=True)
class Archive:
    """The files read (``{path: bytes}``), what was refused and what was ignored."""

    files: dict[str, bytes] = field(default_factory=dict)
    refusals: list[Refusal] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)


class _TooLarge(Exception):
    """A member read past its limit."""


@dataclass
class _Reader:
    """What one read has gathered so far, and its bounds; ``stopped`` once the whole
    archive is refused (nothing more is read)."""

    limits: ArchiveLimits
    max_file_bytes: int
    archive: Archive = field(default_factory=Archive)
    total: int = 0
    entries: int = 0
    stopped: bool = False

    def refuse(self, path: str, reason: str) -> None:
        self.archive.refusals.append(Refusal(path, reason))
        self.stopped = self.stopped or path == ARCHIVE

    def ignore(self, path: str, reason: str) -> None:
        self.archive.ignored.append(Ignored(path, reason))

    def count(self) -> bool:
        """Count one more entry; ``False`` (after refusing the archive) past the limit."""
        self.entries += 1
        if self.entries <= self.limits.max_entries:
            return True
        self.too_many()
        return False

    def too_many(self) -> None:
        self.refuse(
            ARCHIVE,
            f"more than {self.limits.max_entries:,} files and folders: a library is "
            "smaller; nothing past that was read.",
        )

    def limit(self, path: str) -> int:
        """The most bytes the file at ``path`` may hold."""
        if path in (SETTINGS_PATH, PROMPTS_PATH):
            return self.limits.max_settings_bytes
        return self.max_file_bytes

    def admits(self, path: str, size: int, *, exact: bool = True) -> bool:
        """Whether a file of ``size`` bytes (declared or read; ``exact`` ``False``: more
        than that) may be kept; refuses it, or the archive when the total is exceeded,
        otherwise."""
        limit = self.limit(path)
        if size > limit:
            shown = f"{size:,} bytes" if exact else f"more than {limit:,} bytes"
            settings = path in (SETTINGS_PATH, PROMPTS_PATH)
            what = f"{path} may have" if settings else "a file may have"
            suffix = "" if settings else " (SYSPROMPT_MAX_TEMPLATE_BYTES)"
            self.refuse(path, f"{shown}; {what} at most {limit:,} bytes{suffix}.")
            return False
        if self.total + size > self.limits.max_total_bytes:
            self.refuse(
                ARCHIVE,
                f"more than {self.limits.max_total_bytes:,} bytes of files in all: "
                f"{path} and the files after it were not read.",
            )
            return False
        return True

    def keep(self, path: str, data: bytes) -> None:
        self.total += len(data)
        self.archive.files[path] = data


def read_zip(data: bytes, *, limits: ArchiveLimits | None = None) -> Archive:
    """The library tree in the zip file ``data`` (see the module docstring)."""
    reader = _reader(limits)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _zip_members(archive, reader)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as error:
        return Archive(refusals=[Refusal(ARCHIVE, f"not a readable zip file ({error}).")])
    return reader.archive


def read_directory(path: str | os.PathLike[str], *, limits: ArchiveLimits | None = None) -> Archive:
    """The library tree in the directory ``path`` (see the module docstring). Raises
    ``OSError`` when ``path`` itself cannot be opened as a directory."""
    reader = _reader(limits)
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _walk(top, "", reader)
    finally:
        os.close(top)
    return reader.archive


def _reader(limits: ArchiveLimits | None) -> _Reader:
    limits = limits or ArchiveLimits()
    max_file_bytes = limits.max_file_bytes or app_settings().max_template_bytes
    return _Reader(limits=limits, max_file_bytes=max_file_bytes)


# --- zip files ------------------------------------------------------------------------


def _zip_members(archive: zipfile.ZipFile, reader: _Reader) -> None:
    members = archive.infolist()
    if len(members) > reader.limits.max_entries:
        reader.too_many()  # without reading a member
        return
    seen: set[str] = set()
    for info in members:
        name = info.filename
        if not reader.count():
            return
        reason = _zip_refusal(info, seen)
        seen.add(name)
        if reason is not None:
            reader.refuse(name, reason)
            continue
        if info.is_dir():
            continue
        note = _ignored(name)
        if note is not None:
            reader.ignore(name, note)
            continue
        if reader.admits(name, info.file_size):
            _zip_read(archive, info, reader)
        if reader.stopped:
            return


def _zip_refusal(info: zipfile.ZipInfo, seen: set[str]) -> str | None:
    """Why a zip member is refused before it is read, or ``None``."""
    name = info.filename
    reason = _slip(name.rstrip("/") if info.is_dir() else name)
    if reason is not None:
        return reason
    if name in seen:
        return "in the archive twice."
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "a symbolic link: links are never followed, the file itself must be in the archive."
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "not a regular file or folder."
    if info.flag_bits & 0x1:
        return "encrypted: the archive must not be password-protected."
    return None


def _slip(name: str) -> str | None:
    """Why a member's name would leave the folder it is extracted to (zip-slip)."""
    if "\x00" in name:
        return "holds a NUL character."
    if "\\" in name:
        return "holds a backslash: paths in a zip file use '/'."
    if name.startswith("/") or _DRIVE.match(name):
        return "an absolute path: paths in the archive are relative to its top."
    if ".." in name.split("/"):
        return "holds '..' as a folder: paths may not leave the archive."
    return None


def _zip_read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, reader: _Reader) -> None:
    name = info.filename
    limit = reader.limit(name)
    try:
        with archive.open(info) as member:
            data = _bounded(member.read, limit)
    except _TooLarge:
        reader.admits(name, limit + 1, exact=False)
        return
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, zlib.error) as error:
        reader.refuse(name, f"cannot be read: the archive is damaged here ({error}).")
        return
    if reader.admits(name, len(data)):
        reader.keep(name, data)


def _bounded(read: Callable[[int], bytes], limit: int) -> bytes:
    """Read chunks until the end; raise ``_TooLarge`` past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _TooLarge


# --- directories ------------------------------------------------------------------------


def _walk(top: int, prefix: str, reader: _Reader) -> None:
    """Read the folder open as ``top`` (at ``prefix`` in the tree), depth first."""
    if prefix.count("/") > MAX_DEPTH:
        reader.refuse(prefix.rstrip("/"), f"nested more than {MAX_DEPTH} folders deep.")
        return
    with os.scandir(top) as scan:  # never more entries than the limit leaves, plus one
        room = reader.limits.max_entries - reader.entries + 1
        entries = sorted(itertools.islice(scan, room), key=lambda entry: entry.name)
    for entry in entries:
        if not reader.count():
            return
        path = prefix + _decoded(entry.name)
        if not _utf8(entry.name):
            reader.refuse(path, "the file name is not UTF-8.")
        elif entry.is_symlink():
            what = "folder" if _points_to_folder(top, entry.name) else "file"
            reader.refuse(
                path,
                f"a symbolic link (to a {what}): links are never followed; copy the "
                f"{what} itself into the directory.",
            )
        elif entry.name.startswith("."):
            reader.ignore(path, "a hidden file or folder: not part of a library.")
        elif entry.is_dir(follow_symlinks=False):
            _walk_folder(top, entry.name, path + "/", reader)
        elif entry.is_file(follow_symlinks=False):
            _directory_file(top, entry.name, path, reader)
        else:
            reader.refuse(path, "not a regular file or folder.")
        if reader.stopped:
            return


def _walk_folder(parent: int, name: str, prefix: str, reader: _Reader) -> None:
    try:
        folder = os.open(
            name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent
        )
    except OSError as error:
        reader.refuse(prefix.rstrip("/"), f"cannot be opened ({error.strerror}).")
        return
    try:
        _walk(folder, prefix, reader)
    finally:
        os.close(folder)


def _directory_file(parent: int, name: str, path: str, reader: _Reader) -> None:
    note = _ignored(path)
    if note is not None:
        reader.ignore(path, note)
        return
    try:
        with _opened(parent, name) as fd:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                reader.refuse(path, "not a regular file.")
                return
            if not reader.admits(path, info.st_size):
                return
            data = _bounded(lambda size: os.read(fd, size), reader.limit(path))
    except _TooLarge:
        reader.admits(path, reader.limit(path) + 1, exact=False)
        return
    except OSError as error:
        if error.errno == errno.ELOOP:
            reader.refuse(path, "a symbolic link: links are never followed.")
        else:
            reader.refuse(path, f"cannot be read ({error.strerror}).")
        return
    if reader.admits(path, len(data)):
        reader.keep(path, data)


@contextmanager
def _opened(parent: int, name: str) -> Iterator[int]:
    """The file ``name`` in ``parent``, opened without following a link and without
    blocking on a FIFO."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(name, flags, dir_fd=parent)
    try:
        yield fd
    finally:
        os.close(fd)


def _points_to_folder(parent: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=parent).st_mode)
    except OSError:
        return False


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _decoded(name: str) -> str:
    """A file name as text that can be shown (undecodable bytes replaced)."""
    return os.fsencode(name).decode("utf-8", "replace")


# --- both ------------------------------------------------------------------------------


def _ignored(path: str) -> str | None:
    """Why a file at ``path`` (safe, not a folder) is not part of a library, or ``None``."""
    segments = path.split("/")
    if segments[0] == _MACOS_METADATA:
        return "macOS archive metadata: not part of a library."
    if any(segment.startswith(".") and segment != "." for segment in segments):
        return "a hidden file or folder: not part of a library."
    if path not in (SETTINGS_PATH, PROMPTS_PATH) and not path.endswith(MARKDOWN):
        return f"neither a .md file nor {SETTINGS_PATH} or {PROMPTS_PATH}: not part of a library."
    return None

"""Writing an exported file tree: as a zip streamed in chunks, or into a new (or empty)
directory; files come one at a time (``(path, bytes)`` pairs), so an export never holds
the whole library in memory.

* ``zip_stream(entries)`` — the zip file's bytes, chunk by chunk as each member is
  compressed (Python's ``zipfile`` on a write-only stream: sizes and CRC follow each
  member in a data descriptor). Deterministic: members in the order given, every
  timestamp 1980-01-01 00:00, mode ``0644``, deflated; the same files give the same
  bytes. ``zip_bytes(files)`` is the same for a mapping, members sorted.
* ``write_directory(path, files)`` — ``path`` must not exist (it is created, with its
  parents) or be an empty folder. Files and folders are created relative to the
  folder's descriptor, never following a link, and a file that already exists is never
  overwritten (``O_EXCL``): a link or file planted while writing makes the export fail
  instead of writing elsewhere.
* ``write_zip_file(path, chunks)`` — a new file (never an existing one, never through a
  link); a partly written file is removed when writing fails.
"""

from __future__ import annotations

import contextlib
import os
import stat
import zipfile
from collections.abc import Iterable, Iterator, Mapping

Entries = Mapping[str, bytes] | Iterable[tuple[str, bytes]]
"""Files of a tree: a mapping (written sorted by path) or pairs in the order to write."""

_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = 0o644
_FOLDER_MODE = 0o755
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ExportTargetError(Exception):
    """The export cannot be written where it was asked to be; nothing was written."""


class _Chunks:
    """A write-only stream for ``zipfile``: keeps what is written until it is taken."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def zip_stream(entries: Entries) -> Iterator[bytes]:
    """The zip file of ``entries``, in chunks (about one member each), deterministic."""
    out = _Chunks()
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in _pairs(entries):
            info = zipfile.ZipInfo(path, date_time=_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the mode below is read as one
            info.external_attr = (stat.S_IFREG | _FILE_MODE) << 16
            archive.writestr(info, data)
            if chunk := out.take():
                yield chunk
    yield out.take()  # the central directory


def zip_bytes(files: Entries) -> bytes:
    """A zip file of ``files`` in one piece (:func:`zip_stream`)."""
    return b"".join(zip_stream(files))


def _pairs(entries: Entries) -> Iterable[tuple[str, bytes]]:
    if isinstance(entries, Mapping):
        return ((path, entries[path]) for path in sorted(entries))
    return entries


def write_zip_file(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to the new file ``path``; raise :class:`ExportTargetError` when
    it exists or cannot be created."""
    try:
        fd = os.open(path, _NEW_FILE, _FILE_MODE)
    except FileExistsError:
        raise ExportTargetError(f"{os.fspath(path)} exists: give a new file name.") from None
    except OSError as error:
        raise ExportTargetError(
            f"{os.fspath(path)} cannot be created ({error.strerror})."
        ) from None
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
    except BaseException:
        os.unlink(path)
        raise


def write_directory(path: str | os.PathLike[str], files: Entries) -> None:
    """Write ``files`` (safe relative paths) under ``path``, new or empty; raise
    :class:`ExportTargetError` when it is something else."""
    _prepare(path)
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name, data in _pairs(files):
            _write(top, name, data)
    finally:
        os.close(top)


def _prepare(path: str | os.PathLike[str]) -> None:
    shown = os.fspath(path)
    try:
        os.makedirs(path, mode=_FOLDER_MODE)
        return
    except FileExistsError:
        pass
    except OSError as error:
        raise ExportTargetError(f"{shown} cannot be created ({error.strerror}).") from None
    if not os.path.isdir(path):
        raise ExportTargetError(f"{shown} exists and is not a folder: give a new path.")
    with os.scandir(path) as entries:
        if any(True for _ in entries):
            raise ExportTargetError(
                f"{shown} is not empty: export into a new or empty folder (nothing is "
                "ever overwritten)."
            )


def _write(top: int, name: str, data: bytes) -> None:
    *folders, filename = name.split("/")
    if any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError(f"unsafe path in an export: {name!r}")
    opened: list[int] = []
    try:
        here = top
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, _FOLDER_MODE, dir_fd=here)
            here = os.open(folder, _FOLDER, dir_fd=here)
            opened.append(here)
        fd = os.open(filename, _NEW_FILE, _FILE_MODE, dir_fd=here)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    finally:
        for fd in opened:
            os.close(fd)

"""``file:<path>`` variables: the text of a file near the conversation.

The path is relative to the working directory, or absolute when it starts with ``/``.
A relative path is taken in the working directory's *real* path as checked when the
request came in (``ResolveContext.directory``), never by resolving ``cwd`` again.

Confinement does not trust names: a name can be swapped (a directory replaced by a
symlink) between any check and any open. So the file is opened first, and what counts
is the path of the **opened descriptor** as the kernel reports it (``/proc/self/fd/N``
on Linux, ``fcntl(F_GETPATH)`` on macOS; elsewhere no file is read): it must lie inside
the working directory or one of the allowed roots, or the value does not exist. A
cheaper check of the name (symlinks followed) comes first, so in the ordinary case
nothing outside the roots is even opened.

The file is opened without following a final symlink and without blocking (a FIFO
cannot hang the server), must be a regular file within ``max_file_bytes``, and must be
UTF-8 without NUL bytes. One trailing line ending is removed; a leading byte order mark
is dropped.

Reads are accounted per resolution (``ResolveContext.reads``): before reading, the
file's size (``fstat``) is checked against what is left of ``max_read_bytes``, and at
most that much is read; past the budget the value does not exist. A file reached by
many names in one resolution (same device, inode, size and modification time) is read
once and costs the budget once.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from sysprompt_core.paths import descriptor_path, is_inside, real_roots
from sysprompt_core.variables._text import describe_error, strip_line_ending
from sysprompt_core.variables.registry import (
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    Value,
    VariableInfo,
)

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "file",
        "<path>",
        "The text of a UTF-8 file, relative to the working directory or absolute; "
        "it must lie inside the working directory or an allowed root.",
        dynamic=True,
    ),
)

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
OUTSIDE = Missing("outside the allowed roots")


def read_file_variable(name: str, context: ResolveContext) -> Value:
    """The value of ``file:<name>``; never raises."""
    if not name or "\0" in name:
        return Missing("not a valid path")
    cwd = context.directory
    if not name.startswith("/") and cwd is None:
        return Missing("a relative path needs a working directory")
    try:
        # ``directory`` is already real: resolving it again would follow a swapped link.
        roots = [*([cwd] if cwd else []), *real_roots(context.options.allowed_roots)]
        real = os.path.realpath(name if cwd is None else os.path.join(cwd, name))
    except (OSError, ValueError):
        return Missing("not a valid path")
    if not any(is_inside(real, root) for root in roots):
        return OUTSIDE
    return read_text(real, context, roots)


def read_text(path: str, context: ResolveContext, roots: Sequence[str]) -> Value:
    """Open ``path``, check the opened file lies inside ``roots``, and read it."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return Missing("no such file")
    except (OSError, ValueError) as exc:
        return Missing(f"cannot be opened: {describe_error(exc)}")
    try:
        opened = descriptor_path(fd)
        if not any(is_inside(opened, root) for root in roots):
            return OUTSIDE
        return _read_open(fd, context)
    except OSError as exc:
        return Missing(f"cannot be read: {describe_error(exc)}")
    finally:
        os.close(fd)


def _read_open(fd: int, context: ResolveContext) -> Value:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return Missing("not a regular file")
    limit = context.options.max_file_bytes
    too_large = Missing(f"larger than {limit} bytes")
    if info.st_size > limit:
        return too_large
    account = context.reads
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    known = account.files.get(key)
    if known is not None:
        exists, text = known
        return text if exists else Missing(text)
    budget = context.options.max_read_bytes
    remaining = max(budget - account.used, 0)
    over_budget = Missing(
        f"over the read budget: one resolution reads at most {budget:,} bytes "
        f"({account.used:,} already read; SYSPROMPT_MAX_READ_BYTES)"
    )
    if info.st_size > remaining:
        return over_budget
    data = _read_at_most(fd, min(limit, remaining) + 1, info.st_size)
    account.used += len(data)
    if len(data) > limit:
        value: Value = too_large
    elif len(data) > remaining:
        return over_budget
    else:
        value = _text(data)
    account.files[key] = (True, value) if isinstance(value, str) else (False, value.reason)
    return value


def _text(data: bytes) -> Value:
    if b"\0" in data:  # a binary file; no database stores NUL in text either
        return Missing("binary: contains NUL bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Missing("not UTF-8")
    return strip_line_ending(text.removeprefix("\ufeff"))


def _read_at_most(fd: int, size: int, expected: int) -> bytes:
    """At most ``size`` bytes; a regular file of ``expected`` bytes takes one read."""
    chunks: list[bytes] = []
    remaining = size
    step = min(max(expected + 1, 65536), size)
    while remaining > 0:
        chunk = os.read(fd, min(remaining, step))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class FileResolver(Resolver):
    type = "file"

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def names(self) -> frozenset[str] | None:
        return None

    def value(self, name: str, context: ResolveContext) -> Value:
        return read_file_variable(name, context)


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(FileResolver())

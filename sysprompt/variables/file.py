"""``file:<path>`` variables: the text of a file near the conversation.

The path is relative to the working directory, or absolute when it starts with ``/``.
Symlinks are followed first, and the real path must lie inside the working directory
or inside one of the allowed roots; nothing else is ever opened. The file is opened
without following a final symlink and without blocking (a FIFO cannot hang the
server), must be a regular file within the size limit, and must be UTF-8. One trailing
line ending is removed; a leading byte order mark is dropped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from sysprompt.variables._text import describe_error, strip_line_ending
from sysprompt.variables.registry import (
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


def read_file_variable(name: str, context: ResolveContext) -> Value:
    """The value of ``file:<name>``; never raises."""
    path = locate(name, context)
    if isinstance(path, Missing):
        return path
    return read_text(path, context.options.max_file_bytes)


def locate(name: str, context: ResolveContext) -> str | Missing:
    """The real path of ``name`` when it lies inside the permitted directories."""
    if not name or "\0" in name:
        return Missing("not a valid path")
    cwd = context.working_directory
    if not name.startswith("/") and cwd is None:
        return Missing("a relative path needs a working directory")
    try:
        real = os.path.realpath(name if cwd is None else os.path.join(cwd, name))
        roots = real_roots([*([cwd] if cwd else []), *context.options.allowed_roots])
    except (OSError, ValueError):
        return Missing("not a valid path")
    if not any(is_inside(real, root) for root in roots):
        return Missing("outside the allowed roots")
    return real


def real_roots(roots: Iterable[str]) -> list[str]:
    """The absolute ones of ``roots``, ``~`` expanded and symlinks resolved."""
    expanded = (os.path.expanduser(root) for root in roots if root)
    return [os.path.realpath(root) for root in expanded if os.path.isabs(root)]


def is_inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (``/home/a`` does not hold ``/home/ab``)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_text(path: str, limit: int) -> Value:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return Missing("no such file")
    except (OSError, ValueError) as exc:
        return Missing(f"cannot be opened: {describe_error(exc)}")
    try:
        return _read_open(fd, limit)
    except OSError as exc:
        return Missing(f"cannot be read: {describe_error(exc)}")
    finally:
        os.close(fd)


def _read_open(fd: int, limit: int) -> Value:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return Missing("not a regular file")
    too_large = Missing(f"larger than {limit} bytes")
    if info.st_size > limit:
        return too_large
    data = _read_at_most(fd, limit + 1)
    if len(data) > limit:
        return too_large
    if b"\0" in data:  # a binary file; no database stores NUL in text either
        return Missing("binary: contains NUL bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Missing("not UTF-8")
    return strip_line_ending(text.removeprefix("\ufeff"))


def _read_at_most(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


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

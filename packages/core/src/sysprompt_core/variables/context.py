"""What a resolution knows about the conversation: its context and the resolver options.

:class:`ResolveContext` carries the working directory twice: ``cwd`` as given (what
``[prompt:cwd]`` shows) and ``directory``, its real path as checked once when the
request came in (``validation.cwd_check`` opens the directory and asks the kernel for
the path of what it opened). Every resolver works in ``directory``; none resolves
``cwd`` again, so swapping a symlink after the check cannot move the resolution
elsewhere. ``reads`` accounts for the bytes the resolvers read in one resolution
(``ResolverOptions.max_read_bytes``), and remembers the files already read.

Where host-local values come from (agent-hosts §0, ``scope`` and ``supplied``):
``supplied`` holds the values the agent host sent, used instead of the resolvers;
``server_resolves`` the host-local types the resolvers may read on this machine
(``None``: all of them). With neither ``git`` nor ``file`` in it, the working directory
is only a value: its real path is not looked up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

from sysprompt_core.limits import (
    DEFAULT_GIT_MEMORY_LIMIT,
    DEFAULT_GIT_QUEUE_TIMEOUT,
    DEFAULT_GIT_RECYCLE_BYTES,
    DEFAULT_GIT_TIMEOUT,
    DEFAULT_GIT_WORKERS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PROMPT_BYTES,
    DEFAULT_MAX_READ_BYTES,
)
from sysprompt_core.variables.scope import HOST_LOCAL_TYPES, SERVER_RESOLVES_CHOICES

if TYPE_CHECKING:
    from sysprompt_core.library.source import FragmentSource


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ResolverOptions:
    """Limits and paths that the resolvers obey (the SYSPROMPT settings feed these).

    ``allowed_roots``: where ``file:`` and ``git:`` may read (besides, for ``file:``,
    the working directory); empty, the default: the working directory alone, for both
    (a ``ResolveContext(cwd=…)`` reads its own directory and nothing else, wherever it
    is). The ``git_*`` options govern the git reader processes
    (``sysprompt_core.sandbox``): how many at once, how long a read may queue for one
    before its own ``git_timeout`` starts, the address space each may use, how much
    more memory than at its start each may hold after a read before it is replaced
    (``git_recycle_bytes``), whether each
    confines itself with Landlock (off only to try what a host without Landlock does),
    and whether a reader the kernel does not confine (no Landlock, or no seccomp filter)
    reads at all: by default it does not, and the ``git:`` values do not exist, with the
    reason."""

    git_timeout: float = DEFAULT_GIT_TIMEOUT
    allowed_roots: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    max_prompt_bytes: int = DEFAULT_MAX_PROMPT_BYTES
    git_workers: int = DEFAULT_GIT_WORKERS
    git_memory_limit: int = DEFAULT_GIT_MEMORY_LIMIT
    git_recycle_bytes: int = DEFAULT_GIT_RECYCLE_BYTES
    git_landlock: bool = True
    git_allow_unconfined: bool = False
    git_queue_timeout: float = DEFAULT_GIT_QUEUE_TIMEOUT

    def __post_init__(self) -> None:
        if self.git_timeout <= 0:
            raise ValueError("git_timeout must be positive")
        if self.git_queue_timeout <= 0:
            raise ValueError("git_queue_timeout must be positive")
        if self.git_workers < 1:
            raise ValueError("git_workers must be at least 1")
        if self.git_memory_limit <= 0:
            raise ValueError("git_memory_limit must be positive")
        if self.git_recycle_bytes <= 0:
            raise ValueError("git_recycle_bytes must be positive")
        if self.max_file_bytes < 0:
            raise ValueError("max_file_bytes must not be negative")
        if self.max_read_bytes < 0:
            raise ValueError("max_read_bytes must not be negative")
        if self.max_prompt_bytes < 0:
            raise ValueError("max_prompt_bytes must not be negative")
        object.__setattr__(self, "allowed_roots", tuple(self.allowed_roots))


# A file as ``fstat`` identifies it: device, inode, size and modification time (ns).
FileKey = tuple[int, int, int, int]


class ReadAccount:
    """What one resolution has read: bytes used against the read budget, and the files
    already read (by :data:`FileKey`), so a file reached by many names is read once.

    ``files`` maps a file to ``(True, text)`` or ``(False, reason it gives no value)``.
    """

    __slots__ = ("files", "used")

    def __init__(self) -> None:
        self.used = 0
        self.files: dict[FileKey, tuple[bool, str]] = {}

    def __repr__(self) -> str:
        return f"ReadAccount(used={self.used}, files={len(self.files)})"


@dataclass(frozen=True)
class ResolveContext:
    """The conversation a prompt is resolved for.

    ``now`` is captured once, so ``system:time`` and ``system:date`` always agree.
    ``directory`` is the working directory's real path as checked (by default
    ``realpath(cwd)``, taken once when the context is made); the resolvers read there.
    ``reads`` is the read account of one resolution (``LazyValues`` gives each
    resolution a fresh one).

    What the agent host said besides: ``provider`` (``prompt:provider``), ``tools``
    (``tool:<name>``), ``variables`` (``var:<name>``); ``library`` is where
    ``fragment:<name>`` finds fragments (``None``: there are none).

    Host-local values (see the module docstring): ``supplied``, keyed ``"type:name"``
    (``None``: it does not exist; a key that is not host-local is ignored), and
    ``server_resolves``, the host-local types resolved here when not supplied
    (``None``: every one; otherwise a subset of ``SERVER_RESOLVES_CHOICES``).
    """

    cwd: str | None
    model: str | None = None
    conversation_id: str | None = None
    now: datetime = field(default_factory=_utc_now)
    options: ResolverOptions = field(default_factory=ResolverOptions)
    directory: str | None = None
    reads: ReadAccount = field(default_factory=ReadAccount, compare=False, repr=False)
    provider: str | None = None
    tools: frozenset[str] = frozenset()
    variables: Mapping[str, str] = field(default_factory=dict, hash=False)
    library: FragmentSource | None = field(default=None, compare=False, repr=False)
    supplied: Mapping[str, str | None] = field(default_factory=dict, hash=False)
    server_resolves: frozenset[str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", frozenset(self.tools))
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))
        object.__setattr__(self, "supplied", MappingProxyType(dict(self.supplied)))
        if self.server_resolves is not None:
            resolves = frozenset(self.server_resolves)
            if not resolves <= SERVER_RESOLVES_CHOICES:
                unknown = ", ".join(sorted(resolves - SERVER_RESOLVES_CHOICES))
                raise ValueError(
                    f"server_resolves lists {unknown}: it may list only "
                    f"{', '.join(sorted(SERVER_RESOLVES_CHOICES))}"
                )
            object.__setattr__(self, "server_resolves", resolves)
        if self.now.utcoffset() is None:
            raise ValueError("now must be an aware datetime")
        if self.directory is None and self.cwd and (self.resolves("git") or self.resolves("file")):
            object.__setattr__(self, "directory", os.path.realpath(os.path.abspath(self.cwd)))

    def resolves(self, kind: str) -> bool:
        """Whether a value of type ``kind`` that the host did not supply may be resolved
        here: always, unless ``kind`` is host-local and ``server_resolves`` leaves it out."""
        return (
            self.server_resolves is None
            or kind not in HOST_LOCAL_TYPES
            or (kind in self.server_resolves)
        )

    @property
    def working_directory(self) -> str | None:
        """The cwd made absolute and normalised, or None when none was given."""
        if not self.cwd:
            return None
        return os.path.abspath(self.cwd)

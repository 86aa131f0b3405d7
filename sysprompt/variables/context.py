"""What a resolution knows about the conversation: its context and the resolver options."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime


def _home_root() -> tuple[str, ...]:
    return (os.path.expanduser("~"),)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ResolverOptions:
    """Limits and paths that the resolvers obey (the SYSPROMPT settings feed these)."""

    git_timeout: float = 2.0
    allowed_roots: tuple[str, ...] = field(default_factory=_home_root)
    max_file_bytes: int = 1048576
    git_executable: str = "git"

    def __post_init__(self) -> None:
        if self.git_timeout <= 0:
            raise ValueError("git_timeout must be positive")
        if self.max_file_bytes < 0:
            raise ValueError("max_file_bytes must not be negative")
        object.__setattr__(self, "allowed_roots", tuple(self.allowed_roots))


@dataclass(frozen=True)
class ResolveContext:
    """The conversation a prompt is resolved for.

    ``now`` is captured once, so ``system:time`` and ``system:date`` always agree.
    """

    cwd: str | None
    model: str | None = None
    conversation_id: str | None = None
    now: datetime = field(default_factory=_utc_now)
    options: ResolverOptions = field(default_factory=ResolverOptions)

    def __post_init__(self) -> None:
        if self.now.utcoffset() is None:
            raise ValueError("now must be an aware datetime")

    @property
    def working_directory(self) -> str | None:
        """The cwd made absolute and normalised, or None when none was given."""
        if not self.cwd:
            return None
        return os.path.abspath(self.cwd)

    @property
    def directory(self) -> str | None:
        """The working directory's real path (symlinks resolved), what the resolvers
        read in; None when no cwd was given."""
        cwd = self.working_directory
        return None if cwd is None else os.path.realpath(cwd)

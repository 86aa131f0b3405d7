"""Helpers for the variable tests: real observation of opens and processes, real git.

Python audit hooks cannot be removed, so the one hook the session installs records
only while :func:`recording` is active in the current context, and is inert otherwise.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from sysprompt_core.variables import ResolveContext, ResolverOptions, default_registry
from sysprompt_core.variables.git import GitResolver

Event = tuple[str, tuple[object, ...]]
AUDITED = frozenset({"open", "subprocess.Popen"})

_LOG: ContextVar[list[Event] | None] = ContextVar("variables_audit_log", default=None)


def audit_hook(event: str, args: tuple[object, ...]) -> None:
    log = _LOG.get()
    if log is not None and event in AUDITED:
        log.append((event, args))


def install_audit_hook() -> None:
    sys.addaudithook(audit_hook)


@dataclass
class AuditLog:
    events: list[Event] = field(default_factory=list)

    def opened(self) -> set[str]:
        """Real paths of everything opened (file descriptors are left out)."""
        paths = (args[0] for event, args in self.events if event == "open")
        return {
            os.path.realpath(os.fsdecode(path)) for path in paths if isinstance(path, str | bytes)
        }

    def processes(self) -> list[list[str]]:
        """The argv of every process started."""
        argvs = (args[1] for event, args in self.events if event == "subprocess.Popen")
        return [[os.fsdecode(arg) for arg in argv] for argv in argvs if isinstance(argv, list)]


@contextmanager
def recording() -> Iterator[AuditLog]:
    log = AuditLog()
    token = _LOG.set(log.events)
    try:
        yield log
    finally:
        _LOG.reset(token)


def real(path: Path | str) -> str:
    return os.path.realpath(path)


def shared_git() -> GitResolver:
    """The built-in registry's git resolver: its pool of workers is shared by the tests
    (a new ``GitResolver()`` starts workers of its own)."""
    resolver = default_registry().get("git")
    assert isinstance(resolver, GitResolver)
    return resolver


def context(
    cwd: Path | str | None,
    *,
    roots: tuple[Path | str, ...] = (),
    git_timeout: float = 30.0,  # a loaded machine's; a read ends as soon as it is done
    max_file_bytes: int = 1048576,
    workers: int = 2,
    landlock: bool = True,
    memory_limit: int | None = None,
    allow_unconfined: bool | None = None,
    queue_timeout: float | None = None,
) -> ResolveContext:
    """A context whose allowed roots are exactly ``roots`` (not the home directory);
    readers without Landlock read unconfined (``allow_unconfined``, by default when
    ``landlock`` is off); a git read queues for a reader as long as it may read
    (``queue_timeout`` unless set)."""
    options = ResolverOptions(
        allowed_roots=tuple(str(root) for root in roots),
        git_timeout=git_timeout,
        git_queue_timeout=git_timeout if queue_timeout is None else queue_timeout,
        max_file_bytes=max_file_bytes,
        git_workers=workers,
        git_landlock=landlock,
        git_allow_unconfined=not landlock if allow_unconfined is None else allow_unconfined,
        **({} if memory_limit is None else {"git_memory_limit": memory_limit}),
    )
    return ResolveContext(cwd=None if cwd is None else str(cwd), options=options)


GIT_IDENTITY = (
    "-c",
    "user.name=Test",
    "-c",
    "user.email=test@example.com",
    "-c",
    "commit.gpgsign=false",
)


def git(repo: Path, *args: str) -> str:
    """Run the real git in ``repo`` and return its output."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def make_repo(path: Path, branch: str = "main") -> Path:
    """A repository with one commit of ``a.txt`` on ``branch``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", f"--initial-branch={branch}")
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def write_script(path: Path, body: str) -> str:
    """An executable ``/bin/sh`` script at ``path``."""
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def process_is_dead(pid: int) -> bool:
    """Whether ``pid`` no longer runs: gone, or a zombie someone else must reap."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, it was read
        return True

"""``git:`` variables: the branch and status of the repository at the working directory.

git runs without a shell, with stdin and stderr closed, ``--no-optional-locks`` (a
preview never writes to the repository) and a time limit shared by all the commands of
one resolution: they are started together and run concurrently. A command that
outlives the limit is killed with its process group and reaped.

When both are wanted in a repository, one process gives both: ``git status --short
--branch`` prints the branch on a ``## `` line before the status lines, so the prompt
costs one git start instead of two (on a busy machine the second one is not free even
when they run concurrently). Any header it cannot read for certain (an unborn branch,
escape codes), and any failure, falls back to the two commands, so the values are
those of ``rev-parse --abbrev-ref HEAD`` and ``status --short``, with one exception:
a branch whose name is also a tag's is given as ``name``, where ``rev-parse`` would
say ``heads/name``. Every command runs with ``color.status=false``, so a repository's
``color.status=always`` never puts escape codes in a prompt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType

from sysprompt.variables._text import describe_error, strip_line_ending
from sysprompt.variables.registry import (
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
)

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "git",
        "branch",
        "The current git branch in the working directory (HEAD when detached).",
    ),
    VariableInfo(
        "git",
        "status",
        "The short git status of the working directory; empty when the tree is clean.",
    ),
)

COMMANDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "branch": ("rev-parse", "--abbrev-ref", "HEAD"),
        "status": ("status", "--short"),
    }
)

_FINISH: Mapping[str, Callable[[str], str]] = MappingProxyType(
    {"branch": str.strip, "status": strip_line_ending}
)

# Both in one process; --no-ahead-behind spares the walk of history that counting the
# commits ahead of and behind the upstream would take.
BOTH = ("status", "--short", "--branch", "--no-ahead-behind")
DETACHED = "HEAD (no branch)"

# Variables that would point git somewhere other than the working directory.
_REPOSITORY_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
    }
)

Process = subprocess.Popen[bytes]


def git_environment() -> dict[str, str]:
    """The server's environment, minus repository overrides, plus safe git settings."""
    env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_ENV}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


def git_argv(name: str, options: ResolverOptions) -> list[str]:
    return _argv(COMMANDS[name], options)


def _argv(command: Sequence[str], options: ResolverOptions) -> list[str]:
    # core.fsmonitor would let a repository's config start a program of its choice;
    # color.status=always in a repository's config would put escape codes in the prompt.
    prefix = [
        options.git_executable,
        "--no-optional-locks",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "color.status=false",
    ]
    return [*prefix, *command]


def run_git(names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
    """The values of ``names`` (keys of :data:`COMMANDS`): from one ``status --branch``
    when both are wanted in a repository, otherwise from their commands, concurrently."""
    cwd = _directory(context)
    if isinstance(cwd, Missing):
        return dict.fromkeys(names, cwd)
    options = context.options
    deadline = time.monotonic() + options.git_timeout
    env = git_environment()
    if set(names) == set(COMMANDS) and _in_repository(cwd):
        both = _run_both(cwd, env, deadline, options)
        if both is not None:
            return {name: both[name] for name in names}
    return _run_each(names, cwd, env, deadline, options)


def _run_both(
    cwd: str, env: dict[str, str], deadline: float, options: ResolverOptions
) -> dict[str, Value] | None:
    """Branch and status from one ``git status --short --branch``; None when that did
    not give both for certain (the caller then runs the two commands)."""
    process = _start(_argv(BOTH, options), cwd, env)
    if isinstance(process, Missing):
        return None
    try:
        text = _collect(process, cwd, deadline, options)
    finally:
        _kill_running([process])
    if isinstance(text, Missing):
        return None
    header, _, status = text.partition("\n")
    if not header.startswith("## ") or "\x1b" in header:
        return None
    head = header[3:]
    branch = "HEAD" if head == DETACHED else head.split("...", 1)[0]
    if not branch or " " in branch:  # "No commits yet on main": rev-parse fails there
        return None
    return {"branch": _FINISH["branch"](branch), "status": _FINISH["status"](status)}


def _run_each(
    names: Sequence[str], cwd: str, env: dict[str, str], deadline: float, options: ResolverOptions
) -> dict[str, Value]:
    started: dict[str, Process | Missing] = {}
    try:
        for name in names:
            started[name] = _start(git_argv(name, options), cwd, env)
        values: dict[str, Value] = {}
        for name, process in started.items():
            text = (
                process
                if isinstance(process, Missing)
                else _collect(process, cwd, deadline, options)
            )
            values[name] = text if isinstance(text, Missing) else _FINISH[name](text)
        return values
    finally:
        _kill_running(started.values())


def _directory(context: ResolveContext) -> str | Missing:
    cwd = context.working_directory
    if cwd is None:
        return Missing("no working directory was given")
    if not os.path.isdir(cwd):
        return Missing("the working directory is not a directory")
    return cwd


def _start(argv: list[str], cwd: str, env: dict[str, str]) -> Process | Missing:
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
        )
    except FileNotFoundError:
        return Missing("git is not installed")
    except (OSError, ValueError) as exc:
        return Missing(f"git could not be started: {describe_error(exc)}")


def _collect(
    process: Process, cwd: str, deadline: float, options: ResolverOptions
) -> str | Missing:
    """The process's output as text, or why there is none."""
    try:
        output, _ = process.communicate(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        _kill(process)
        return Missing(f"git timed out after {options.git_timeout:g}s")
    if process.returncode != 0:
        return Missing(_failure(process.returncode, cwd))
    try:
        return output.decode("utf-8")
    except UnicodeDecodeError:
        return Missing("git's output is not UTF-8")


def _failure(returncode: int, cwd: str) -> str:
    if returncode < 0:
        return f"git was killed by signal {-returncode}"
    if returncode == 128 and not _in_repository(cwd):
        return "not a git repository"
    return f"git failed with exit status {returncode}"


def _in_repository(cwd: str) -> bool:
    directory = cwd
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return True
        parent = os.path.dirname(directory)
        if parent == directory:
            return False
        directory = parent


def _kill(process: Process) -> None:
    """Kill the process and what it started, close its pipe and reap it."""
    if process.returncode is None:
        with contextlib.suppress(OSError):
            if hasattr(os, "killpg"):
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
    if process.stdout is not None:
        process.stdout.close()
    process.wait()


def _kill_running(processes: Iterable[Process | Missing]) -> None:
    for process in processes:
        if isinstance(process, subprocess.Popen) and process.returncode is None:
            _kill(process)


class GitResolver(Resolver):
    type = "git"
    batch = True

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        wanted = tuple(dict.fromkeys(names))
        values: dict[str, Value] = {
            name: Missing("unknown variable") for name in wanted if name not in COMMANDS
        }
        known = [name for name in wanted if name in COMMANDS]
        if known:
            values.update(run_git(known, context))
        return values


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(GitResolver())

"""git: variables on real repositories: values, where they are read, what is never done,
and the time limit. (The values against the git CLI: test_git_differential.py; attacks:
test_git_attacks.py.)"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sysprompt_core.sandbox.pool import DEFAULT_COMMAND
from sysprompt_core.variables import Busy, Missing, ResolveContext, Value
from sysprompt_core.variables.git import GitResolver
from tests.core.variables.support import (
    context,
    git,
    make_repo,
    process_is_dead,
    recording,
    shared_git,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell scripts")

BOTH = ("branch", "status")


def resolve(ctx: ResolveContext, *names: str) -> dict[str, Value]:
    return shared_git().resolve(names or BOTH, ctx)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def test_git_branch_and_clean_status(tmp_path: Path, repo: Path) -> None:
    assert resolve(context(repo, roots=(tmp_path,))) == {"branch": "main", "status": ""}


def test_git_branch_with_slash(tmp_path: Path, repo: Path) -> None:
    git(repo, "checkout", "--quiet", "-b", "feature/lazy-values")
    assert resolve(context(repo, roots=(tmp_path,)), "branch") == {"branch": "feature/lazy-values"}


def test_git_detached_head_is_head(tmp_path: Path, repo: Path) -> None:
    git(repo, "checkout", "--quiet", "--detach")
    assert resolve(context(repo, roots=(tmp_path,)), "branch") == {"branch": "HEAD"}


def test_git_dirty_status_keeps_leading_space(tmp_path: Path, repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    (repo / "b.txt").write_text("new\n")
    assert resolve(context(repo, roots=(tmp_path,)), "status") == {"status": " M a.txt\n?? b.txt"}


def test_git_staged_status(tmp_path: Path, repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    git(repo, "add", "a.txt")
    assert resolve(context(repo, roots=(tmp_path,)), "status") == {"status": "M  a.txt"}


def test_git_works_from_a_subdirectory(tmp_path: Path, repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "a.txt").write_text("two\n")
    assert resolve(context(repo / "src", roots=(tmp_path,))) == {
        "branch": "main",
        "status": " M ../a.txt",
    }


def test_git_cwd_with_shell_characters_runs_no_shell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a b;$(touch pwned)`touch pwned2`")
    assert resolve(context(repo, roots=(tmp_path,)), "branch") == {"branch": "main"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [repo.name]


def test_git_ignores_git_dir_of_the_server_environment(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other", branch="elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert resolve(context(repo, roots=(tmp_path,)), "branch") == {"branch": "main"}


def test_git_status_never_writes_the_index(tmp_path: Path, repo: Path) -> None:
    index = repo / ".git" / "index"
    os.utime(repo / "a.txt", (2_000_000_000, 2_000_000_000))
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert resolve(context(repo, roots=(tmp_path,)), "status") == {"status": ""}
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    assert sorted(p.name for p in (repo / ".git").iterdir() if p.suffix == ".lock") == []


@pytest.mark.parametrize(
    ("cwd", "reason"),
    [
        ("plain", "not a git repository"),
        ("missing", "the working directory is not a directory"),
        ("file.txt", "the working directory is not a directory"),
        (None, "no working directory was given"),
    ],
)
def test_git_without_repository_is_missing(tmp_path: Path, cwd: str | None, reason: str) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "file.txt").write_text("x")
    ctx = context(None if cwd is None else tmp_path / cwd, roots=(tmp_path,))
    assert resolve(ctx) == dict.fromkeys(BOTH, Missing(reason))


def test_git_resolver_is_batch_with_fixed_names() -> None:
    resolver = GitResolver()
    assert resolver.batch
    assert resolver.names() == frozenset(BOTH)


def test_git_unknown_name_is_missing_and_starts_nothing(
    tmp_path: Path, repo: Path, audit_hook_installed: None
) -> None:
    with recording() as log:
        values = resolve(context(repo, roots=(tmp_path,)), "nope")
    assert values == {"nope": Missing("unknown variable")}
    assert log.processes() == []


def test_git_values_start_no_process(
    tmp_path: Path, repo: Path, audit_hook_installed: None
) -> None:
    """Only the pool's own worker is ever started (once); no git, nothing per read.
    (The worker itself cannot start a program: Landlock grants it no execute right.)"""
    (repo / "a.txt").write_text("two\n")
    resolver = GitResolver()
    with recording() as log:
        values = resolver.resolve(BOTH, context(repo, roots=(tmp_path,)))
        again = resolver.resolve(BOTH, context(repo, roots=(tmp_path,)))
    assert values == again == {"branch": "main", "status": " M a.txt"}
    assert log.processes() == [list(DEFAULT_COMMAND)]


def test_git_working_directory_outside_the_roots_is_missing(tmp_path: Path, repo: Path) -> None:
    other = tmp_path / "other-root"
    other.mkdir()
    reason = "the working directory is outside the allowed roots"
    assert resolve(context(repo, roots=(other,))) == dict.fromkeys(BOTH, Missing(reason))


def test_git_root_that_is_a_repository_is_found(tmp_path: Path, repo: Path) -> None:
    (repo / "src").mkdir()
    assert resolve(context(repo / "src", roots=(repo,))) == {"branch": "main", "status": ""}


def test_git_branch_named_like_a_tag_is_what_rev_parse_says(tmp_path: Path, repo: Path) -> None:
    git(repo, "tag", "v1")
    git(repo, "checkout", "--quiet", "-b", "v1")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "heads/v1"
    assert resolve(context(repo, roots=(tmp_path,)), "branch") == {"branch": "heads/v1"}


def test_git_status_larger_than_the_limit_is_missing(tmp_path: Path, repo: Path) -> None:
    for n in range(20):
        (repo / f"untracked-{n:02}.txt").write_text("x\n")
    small = context(repo, roots=(tmp_path,), max_file_bytes=100)
    reason = "the git status is larger than the 100-byte limit (max_file_bytes)"
    assert resolve(small, "status") == {"status": Missing(reason)}
    full = resolve(context(repo, roots=(tmp_path,)), "status")["status"]
    assert isinstance(full, str)
    assert len(full) == 20 * 20 - 1


# The time limit. A read that cannot finish: the index is a FIFO nobody writes to, so
# libgit2 blocks reading it (in a worker process) until its deadline kills the worker.


@contextmanager
def blocked_index(repo: Path) -> Iterator[None]:
    index = repo / ".git" / "index"
    saved = index.read_bytes()
    index.unlink()
    os.mkfifo(index)
    try:
        yield
    finally:
        # Opening the write end and closing it gives any reader left end-of-file.
        for _ in range(4):
            try:
                os.close(os.open(index, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                break  # no reader is left
            time.sleep(0.05)
        index.unlink()
        index.write_bytes(saved)


def dies_soon(pid: int) -> bool:
    """Whether ``pid`` dies soon (SIGKILL takes a moment to finish; on a loaded machine
    several seconds)."""
    deadline = time.monotonic() + 20
    while not process_is_dead(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_git_timeout_kills_the_worker_at_the_deadline_and_keeps_the_branch(
    tmp_path: Path, repo: Path
) -> None:
    resolver = GitResolver()
    ctx = context(repo, roots=(tmp_path,), git_timeout=0.5)
    patient = context(repo, roots=(tmp_path,), git_timeout=30)  # the same workers
    # Started with time to spare: a worker's start is no part of what is timed.
    assert resolver.resolve(BOTH, patient) == {"branch": "main", "status": ""}
    [worker] = resolver.pool.pids()
    with blocked_index(repo):
        started = time.monotonic()
        values = resolver.resolve(BOTH, ctx)
        elapsed = time.monotonic() - started
        assert dies_soon(worker)  # killed, not abandoned: nothing keeps reading
    assert values == {"branch": "main", "status": Missing("git timed out after 0.5s")}
    assert 0.45 < elapsed < 15  # at the deadline: the blocked read would never end
    assert resolver.resolve(BOTH, patient) == {"branch": "main", "status": ""}
    assert worker not in resolver.pool.pids()  # a new worker took its place


def test_git_busy_pool_answers_busy_within_the_deadline(tmp_path: Path, repo: Path) -> None:
    resolver = GitResolver()
    slow = context(repo, roots=(tmp_path,), git_timeout=5, workers=1)
    quick = context(repo, roots=(tmp_path,), git_timeout=0.3, workers=1)
    assert resolver.resolve(["branch"], slow) == {"branch": "main"}  # the one worker runs
    results: list[dict[str, Value]] = []
    with blocked_index(repo):
        reader = threading.Thread(target=lambda: results.append(resolver.resolve(BOTH, slow)))
        reader.start()
        time.sleep(0.3)  # the one worker is now blocked on the index
        started = time.monotonic()
        busy = resolver.resolve(["status"], quick)
        elapsed = time.monotonic() - started
    reader.join(10)
    reason = "busy: all 1 git readers stayed busy for the 0.3s a read may queue; try again shortly"
    assert busy == {"status": Busy(reason, retry_after=1.0)}
    assert isinstance(busy["status"], Missing)
    assert 0.25 < elapsed < 4  # not until the blocked worker's own 5 s deadline
    assert results[0]["branch"] == "main"

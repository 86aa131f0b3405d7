"""git: variables — real repositories, and fake git programs for the hard cases."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sysprompt.variables import Missing, ResolveContext, Value
from sysprompt.variables.git import GitResolver
from tests.variables.support import (
    context,
    git,
    make_repo,
    process_is_dead,
    recording,
    write_script,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell scripts")

BOTH = ("branch", "status")


def resolve(ctx: ResolveContext, *names: str) -> dict[str, Value]:
    return GitResolver().resolve(names or BOTH, ctx)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def fake_git(tmp_path: Path, body: str) -> str:
    return write_script(tmp_path / "fake-git", body)


def test_git_branch_and_clean_status(repo: Path) -> None:
    assert resolve(context(repo)) == {"branch": "main", "status": ""}


def test_git_branch_with_slash(repo: Path) -> None:
    git(repo, "checkout", "--quiet", "-b", "feature/lazy-values")
    assert resolve(context(repo), "branch") == {"branch": "feature/lazy-values"}


def test_git_detached_head_is_head(repo: Path) -> None:
    git(repo, "checkout", "--quiet", "--detach")
    assert resolve(context(repo), "branch") == {"branch": "HEAD"}


def test_git_dirty_status_keeps_leading_space(repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    (repo / "b.txt").write_text("new\n")
    assert resolve(context(repo), "status") == {"status": " M a.txt\n?? b.txt"}


def test_git_staged_status(repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    git(repo, "add", "a.txt")
    assert resolve(context(repo), "status") == {"status": "M  a.txt"}


def test_git_works_from_a_subdirectory(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "a.txt").write_text("two\n")
    assert resolve(context(repo / "src")) == {"branch": "main", "status": " M ../a.txt"}


def test_git_cwd_with_shell_characters_runs_no_shell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a b;$(touch pwned)`touch pwned2`")
    assert resolve(context(repo), "branch") == {"branch": "main"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [repo.name]


def test_git_ignores_git_dir_of_the_server_environment(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other", branch="elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert resolve(context(repo), "branch") == {"branch": "main"}


def test_git_status_never_writes_the_index(repo: Path) -> None:
    index = repo / ".git" / "index"
    os.utime(repo / "a.txt", (2_000_000_000, 2_000_000_000))
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert resolve(context(repo), "status") == {"status": ""}
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
    ctx = context(None if cwd is None else tmp_path / cwd)
    assert resolve(ctx) == dict.fromkeys(BOTH, Missing(reason))


@pytest.mark.parametrize("executable", ["git", "no-such-git-program"])
def test_git_not_installed_is_missing(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, executable: str
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    ctx = context(repo, git_executable=executable)
    assert resolve(ctx) == dict.fromkeys(BOTH, Missing("git is not installed"))


def test_git_unknown_name_is_missing_and_starts_nothing(
    repo: Path, audit_hook_installed: None
) -> None:
    with recording() as log:
        assert resolve(context(repo), "nope") == {"nope": Missing("unknown variable")}
    assert log.processes() == []


def test_git_only_requested_names_start_a_process(repo: Path, audit_hook_installed: None) -> None:
    with recording() as log:
        assert resolve(context(repo), "branch") == {"branch": "main"}
    assert [argv[-3:] for argv in log.processes()] == [["rev-parse", "--abbrev-ref", "HEAD"]]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            'echo "$@"',
            "--no-optional-locks -c core.fsmonitor=false -c color.status=false "
            "rev-parse --abbrev-ref HEAD",
        ),
        ('printf "%s|%s|%s" "$GIT_OPTIONAL_LOCKS" "$GIT_TERMINAL_PROMPT" "$LC_ALL"', "0|0|C"),
        ("cat; echo read-nothing", "read-nothing"),
        ("printf '  spaced  \\n\\n'", "spaced"),
        ("echo oops >&2; exit 3", Missing("git failed with exit status 3")),
        ("printf '\\377\\376'", Missing("git's output is not UTF-8")),
        ("kill -9 $$", Missing("git was killed by signal 9")),
    ],
)
def test_git_fake_program_branch(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], body: str, expected: Value
) -> None:
    ctx = context(tmp_path, git_executable=fake_git(tmp_path, body))
    assert resolve(ctx, "branch") == {"branch": expected}
    assert "oops" not in capfd.readouterr().err


def test_git_not_executable_is_missing(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho main\n")
    ctx = context(tmp_path, git_executable=str(script))
    reason = "git could not be started: permission denied"
    assert resolve(ctx, "branch") == {"branch": Missing(reason)}


def test_git_timeout_kills_and_reaps_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    program = fake_git(tmp_path, f"echo $$ > '{pid_file}'\nexec sleep 30")
    started = time.monotonic()
    values = resolve(context(tmp_path, git_executable=program, git_timeout=0.5), "branch")
    elapsed = time.monotonic() - started
    assert values == {"branch": Missing("git timed out after 0.5s")}
    assert 0.4 < elapsed < 2.5
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_git_timeout_kills_what_git_started(tmp_path: Path) -> None:
    """A grandchild holding the output pipe open neither hangs us nor survives."""
    pid_file = tmp_path / "pid"
    program = fake_git(tmp_path, f"sleep 30 &\necho $! > '{pid_file}'\nwait")
    started = time.monotonic()
    values = resolve(context(tmp_path, git_executable=program, git_timeout=0.5), "status")
    assert values == {"status": Missing("git timed out after 0.5s")}
    assert time.monotonic() - started < 2.5
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 2.0
    while not process_is_dead(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process_is_dead(grandchild)


def test_git_commands_run_concurrently(tmp_path: Path, audit_hook_installed: None) -> None:
    program = fake_git(
        tmp_path,
        'sleep 1\ncase "$*" in\n  *rev-parse*) echo feature ;;\n  *) printf " M a.txt\\n" ;;\nesac',
    )
    started = time.monotonic()
    with recording() as log:
        values = resolve(context(tmp_path, git_executable=program))
    assert time.monotonic() - started < 1.8
    assert values == {"branch": "feature", "status": " M a.txt"}
    assert len(log.processes()) == 2


def test_git_one_slow_command_does_not_lose_the_other(tmp_path: Path) -> None:
    program = fake_git(
        tmp_path, 'case "$*" in\n  *rev-parse*) echo main ;;\n  *) exec sleep 30 ;;\nesac'
    )
    values = resolve(context(tmp_path, git_executable=program, git_timeout=0.5))
    assert values == {"branch": "main", "status": Missing("git timed out after 0.5s")}


def test_git_resolver_is_batch_with_fixed_names() -> None:
    resolver = GitResolver()
    assert resolver.batch
    assert resolver.names() == frozenset(BOTH)


# One process for both: `git status --short --branch` and its fallbacks.

PREFIX = ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "color.status=false"]
ONE_PROCESS = [*PREFIX, "status", "--short", "--branch", "--no-ahead-behind"]
TWO_COMMANDS = [[*PREFIX, "rev-parse", "--abbrev-ref", "HEAD"], [*PREFIX, "status", "--short"]]


def separate_commands(cwd: Path) -> dict[str, Value]:
    """What the two commands give in ``cwd``, trimmed as the resolver trims them."""
    branch = git(cwd, "rev-parse", "--abbrev-ref", "HEAD").strip()
    return {"branch": branch, "status": git(cwd, "status", "--short").removesuffix("\n")}


def commit(repo: Path, message: str = "next") -> None:
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message)


def clean(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def modified(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("two\n")
    (repo / "b.txt").write_text("staged\n")
    git(repo, "add", "b.txt")
    return repo


def untracked(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / "new.txt").write_text("new\n")
    (repo / "dir").mkdir()
    (repo / "dir" / "inner.txt").write_text("inner\n")
    return repo


def subdirectory(tmp_path: Path) -> Path:
    repo = modified(tmp_path)
    (repo / "src").mkdir()
    (repo / "src" / "c.txt").write_text("c\n")
    return repo / "src"


def detached(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "--quiet", "--detach")
    return repo


def upstream_local_branch(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "--quiet", "-b", "topic")
    commit(repo)
    git(repo, "branch", "--quiet", "--set-upstream-to=main")
    return repo


def clone_ahead(tmp_path: Path) -> Path:
    origin = make_repo(tmp_path / "origin")
    git(tmp_path, "clone", "--quiet", str(origin), "clone")
    commit(tmp_path / "clone")
    return tmp_path / "clone"


def clone_upstream_gone(tmp_path: Path) -> Path:
    clone = clone_ahead(tmp_path)
    git(clone, "update-ref", "-d", "refs/remotes/origin/main")
    return clone


def worktree(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    git(repo, "worktree", "add", "--quiet", "-b", "side", str(tmp_path / "wt"))
    (tmp_path / "wt" / "a.txt").write_text("changed in the worktree\n")
    return tmp_path / "wt"


def unicode_branch(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", branch="fünf/ветка")
    (repo / "a.txt").write_text("two\n")
    return repo


def dotted_branch(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "--quiet", "-b", "feature/x.y")
    return repo


def unicode_path(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / "ünï côdé.txt").write_text("quoted by status\n")
    return repo


def renamed(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    git(repo, "mv", "a.txt", "moved.txt")
    return repo


@pytest.mark.parametrize(
    "setup",
    [
        clean,
        modified,
        untracked,
        subdirectory,
        detached,
        upstream_local_branch,
        clone_ahead,
        clone_upstream_gone,
        worktree,
        unicode_branch,
        dotted_branch,
        unicode_path,
        renamed,
    ],
)
def test_git_one_process_equals_the_two_commands(
    tmp_path: Path, setup: Callable[[Path], Path], audit_hook_installed: None
) -> None:
    cwd = setup(tmp_path)
    expected = separate_commands(cwd)
    with recording() as log:
        assert resolve(context(cwd)) == expected
    assert log.processes() == [ONE_PROCESS]


def test_git_both_variables_start_one_process(repo: Path, audit_hook_installed: None) -> None:
    (repo / "a.txt").write_text("two\n")
    with recording() as log:
        assert resolve(context(repo)) == {"branch": "main", "status": " M a.txt"}
    assert log.processes() == [ONE_PROCESS]


def test_git_one_process_keeps_the_first_status_space(repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    assert separate_commands(repo)["status"] == " M a.txt"
    assert resolve(context(repo), "status", "branch") == {"status": " M a.txt", "branch": "main"}


def test_git_one_process_in_a_worktree_whose_git_is_a_file(tmp_path: Path) -> None:
    cwd = worktree(tmp_path)
    assert (cwd / ".git").is_file()
    assert resolve(context(cwd)) == {"branch": "side", "status": " M a.txt"}


def test_git_unborn_branch_falls_back_to_the_two_commands(
    tmp_path: Path, audit_hook_installed: None
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "new.txt").write_text("new\n")
    with recording() as log:
        values = resolve(context(repo))
    # rev-parse fails before the first commit, so the branch does not exist.
    assert values == {"branch": Missing("git failed with exit status 128"), "status": "?? new.txt"}
    assert log.processes() == [ONE_PROCESS, *TWO_COMMANDS]


@pytest.mark.parametrize("dirty", [False, True])
def test_git_color_status_always_gives_plain_text_from_one_process(
    repo: Path, audit_hook_installed: None, dirty: bool
) -> None:
    git(repo, "config", "color.status", "always")
    if dirty:
        (repo / "a.txt").write_text("two\n")
    with recording() as log:
        values = resolve(context(repo))
    assert values == {"branch": "main", "status": " M a.txt" if dirty else ""}
    assert log.processes() == [ONE_PROCESS]


def spoiled_git(tmp_path: Path, combined: str) -> str:
    """A git that runs ``combined`` for ``status --branch`` and the real git otherwise."""
    return fake_git(tmp_path, f'case "$*" in\n  *--branch*) {combined} ;;\nesac\nexec git "$@"')


@pytest.mark.parametrize(
    "combined",
    [
        "exit 1",
        "kill -9 $$",
        "printf '## \\377\\376\\n'; exit 0",
        "printf ' M a.txt\\n'; exit 0",
        "printf '## \\033[32mmain\\033[m\\n'; exit 0",
        "printf '## No commits yet on main\\n'; exit 0",
        "printf '## \\n'; exit 0",
        "printf '## ...origin/main\\n'; exit 0",
    ],
)
def test_git_combined_command_unreadable_falls_back(
    tmp_path: Path, repo: Path, combined: str, audit_hook_installed: None
) -> None:
    (repo / "a.txt").write_text("two\n")
    program = spoiled_git(tmp_path, combined)
    with recording() as log:
        values = resolve(context(repo, git_executable=program))
    assert values == {"branch": "main", "status": " M a.txt"}
    argvs = log.processes()
    assert [argv[1:] for argv in argvs] == [ONE_PROCESS[1:]] + [c[1:] for c in TWO_COMMANDS]
    assert {argv[0] for argv in argvs} == {program}


def test_git_combined_command_timeout_is_missing_for_both(tmp_path: Path, repo: Path) -> None:
    program = spoiled_git(tmp_path, "exec sleep 30")
    started = time.monotonic()
    values = resolve(context(repo, git_executable=program, git_timeout=0.5))
    assert time.monotonic() - started < 2.5
    assert values == dict.fromkeys(BOTH, Missing("git timed out after 0.5s"))


@pytest.mark.parametrize(
    ("name", "argv"),
    [("branch", TWO_COMMANDS[0]), ("status", TWO_COMMANDS[1])],
)
def test_git_single_variable_starts_only_its_command(
    repo: Path, name: str, argv: list[str], audit_hook_installed: None
) -> None:
    with recording() as log:
        assert resolve(context(repo), name) == {name: {"branch": "main", "status": ""}[name]}
    assert log.processes() == [argv]


def test_git_outside_a_repository_skips_the_combined_command(
    tmp_path: Path, audit_hook_installed: None
) -> None:
    with recording() as log:
        values = resolve(context(tmp_path))
    assert values == dict.fromkeys(BOTH, Missing("not a git repository"))
    assert log.processes() == TWO_COMMANDS


def test_git_branch_named_like_a_tag_is_the_plain_name(
    repo: Path, audit_hook_installed: None
) -> None:
    """The documented exception: rev-parse says ``heads/v1``, the one process ``v1``."""
    git(repo, "tag", "v1")
    git(repo, "checkout", "--quiet", "-b", "v1")
    assert separate_commands(repo)["branch"] == "heads/v1"
    with recording() as log:
        assert resolve(context(repo)) == {"branch": "v1", "status": ""}
    assert log.processes() == [ONE_PROCESS]
    assert resolve(context(repo), "branch") == {"branch": "heads/v1"}

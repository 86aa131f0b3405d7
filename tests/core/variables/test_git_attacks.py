"""Attacks on ``git:`` variables, written as the attacks, on real repositories.

(a) A repository inside the allowed roots names commands in its config (a filter
driver, fsmonitor, a textconv driver, hooks), directly or in a submodule's config: each
command would create a marker file. Resolving ``git:branch`` and ``git:status`` — with
the resolver, and through ``resolve_prompt`` — must never create it.

(b) A repository reaches outside the allowed roots (its work tree, a ``.git`` file, a
repository above the root, its common directory, its object alternates): ``git:`` must
say why it is missing, and no name from outside may appear in any value.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sysprompt_core.variables import Missing, Value, default_registry, resolve_prompt
from tests.core.variables.support import context, git, make_repo, shared_git

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX commands")

BOTH = ("branch", "status")
TEMPLATE = "Branch: [git:branch]\nStatus:\n[git:status]\n"


def resolve_both(cwd: Path, root: Path) -> dict[str, Value]:
    return shared_git().resolve(BOTH, context(cwd, roots=(root,)))


def resolve_template(cwd: Path, root: Path) -> dict[str, Value]:
    resolution = resolve_prompt(TEMPLATE, context(cwd, roots=(root,)), default_registry())
    return {name: resolution.values.value(f"git:{name}") for name in BOTH}


RESOLVERS: dict[str, Callable[[Path, Path], dict[str, Value]]] = {
    "resolver": resolve_both,
    "resolve_prompt": resolve_template,
}


# --- (a) commands named by the repository ------------------------------------------------


def touch(marker: Path) -> str:
    return f"touch '{marker}'"


def dirty(repo: Path) -> None:
    """Make git look at content: a change that keeps the size (git must clean the file
    to compare it) and an untracked file."""
    (repo / "a.txt").write_text("two\n")  # was "one\n"
    os.utime(repo / "a.txt", (2_000_000_000, 2_000_000_000))
    (repo / "new.txt").write_text("new\n")


def filter_clean(repo: Path, marker: Path) -> None:
    git(repo, "config", "filter.x.clean", f"{touch(marker)}; cat")
    git(repo, "config", "filter.x.smudge", f"{touch(marker)}; cat")
    (repo / ".gitattributes").write_text("* filter=x\n")
    dirty(repo)


def filter_process(repo: Path, marker: Path) -> None:
    git(repo, "config", "filter.x.process", touch(marker))
    (repo / ".gitattributes").write_text("* filter=x\n")
    dirty(repo)


def fsmonitor(repo: Path, marker: Path) -> None:
    git(repo, "config", "core.fsmonitor", touch(marker))
    dirty(repo)


def textconv(repo: Path, marker: Path) -> None:
    git(repo, "config", "diff.x.textconv", f"{touch(marker)}; cat")
    (repo / ".gitattributes").write_text("* diff=x\n")
    dirty(repo)


def hooks(repo: Path, marker: Path) -> None:
    hooks_dir = repo / "my-hooks"
    hooks_dir.mkdir()
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        hook = hooks_dir / name
        hook.write_text(f"#!/bin/sh\n{touch(marker)}\n")
        hook.chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks_dir))
    dirty(repo)


def submodule_filter(repo: Path, marker: Path) -> None:
    origin = make_repo(repo.parent / "sub-origin")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", str(origin), "sub")
    git(repo, "commit", "--quiet", "-m", "submodule")
    sub = repo / "sub"
    git(sub, "config", "filter.x.clean", f"{touch(marker)}; cat")
    git(sub, "config", "core.fsmonitor", touch(marker))
    (sub / ".gitattributes").write_text("* filter=x\n")
    dirty(sub)


ATTACKS = {
    "filter_clean": filter_clean,
    "filter_process": filter_process,
    "fsmonitor": fsmonitor,
    "textconv": textconv,
    "hooks": hooks,
    "submodule_filter": submodule_filter,
}


@pytest.mark.parametrize("how", RESOLVERS)
@pytest.mark.parametrize("attack", ATTACKS)
def test_git_repository_commands_never_run(tmp_path: Path, attack: str, how: str) -> None:
    root = tmp_path / "root"
    repo = make_repo(root / "repo")
    marker = tmp_path / "marker"
    ATTACKS[attack](repo, marker)
    values = RESOLVERS[how](repo, root)
    assert values["branch"] == "main"
    assert not marker.exists()


def test_git_filter_attack_status_is_missing_with_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "root"
    repo = make_repo(root / "repo")
    filter_clean(repo, tmp_path / "marker")
    reason = (
        "the repository's attributes use the filter driver 'x', whose command git: "
        "variables never run"
    )
    assert resolve_both(repo, root)["status"] == Missing(reason)


# --- (b) repositories reaching outside the roots -----------------------------------------

SECRET = "outside-secret-name"


def outside_files(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{SECRET}.txt").write_text("secret\n")
    return outside


def outside_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "outside-repo", branch=f"{SECRET}-branch")
    (repo / f"{SECRET}.txt").write_text("untracked outside\n")
    return repo


def worktree_outside(tmp_path: Path, root: Path) -> tuple[Path, str]:
    outside = outside_files(tmp_path)
    repo = make_repo(root / "repo")
    git(repo, "config", "core.worktree", str(outside))
    return repo, f"the repository's work tree {outside} is outside the allowed roots"


def gitfile_outside(tmp_path: Path, root: Path) -> tuple[Path, str]:
    other = outside_repo(tmp_path)
    project = root / "project"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {other / '.git'}\n")
    return project, f"the repository's git directory {other / '.git'} is outside the allowed roots"


def repo_above_root(tmp_path: Path, root: Path) -> tuple[Path, str]:
    shutil.rmtree(root)
    parent = make_repo(tmp_path / "parent", branch=f"{SECRET}-branch")
    (parent / f"{SECRET}.txt").write_text("x\n")
    inner = parent / "root"
    (inner / "work").mkdir(parents=True)
    root.symlink_to(inner)  # the test's root is the parent's subdirectory
    return inner / "work", "not a git repository"


def commondir_outside(tmp_path: Path, root: Path) -> tuple[Path, str]:
    other = outside_repo(tmp_path)
    git(other, "worktree", "add", "--quiet", "-b", f"{SECRET}-wt", str(tmp_path / "wt"))
    gitdir = root / "gitdir"
    shutil.copytree(other / ".git" / "worktrees" / "wt", gitdir)
    (gitdir / "commondir").write_text(f"{other / '.git'}\n")
    work = root / "work"
    shutil.copytree(tmp_path / "wt", work)
    (work / ".git").write_text(f"gitdir: {gitdir}\n")
    (gitdir / "gitdir").write_text(f"{work / '.git'}\n")
    return work, f"the repository's common directory {other / '.git'} is outside the allowed roots"


def alternates_outside(tmp_path: Path, root: Path) -> tuple[Path, str]:
    other = outside_repo(tmp_path)
    git(root, "clone", "--quiet", "--shared", str(other), "clone")
    objects = other / ".git" / "objects"
    return (
        root / "clone",
        f"the repository's object alternate {objects} is outside the allowed roots",
    )


ESCAPES = {
    "worktree_outside": worktree_outside,
    "gitfile_outside": gitfile_outside,
    "repo_above_root": repo_above_root,
    "commondir_outside": commondir_outside,
    "alternates_outside": alternates_outside,
}


@pytest.mark.parametrize("how", RESOLVERS)
@pytest.mark.parametrize("escape", ESCAPES)
def test_git_repository_outside_the_roots_is_missing(tmp_path: Path, escape: str, how: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    cwd, reason = ESCAPES[escape](tmp_path, root)
    values = RESOLVERS[how](cwd, root)
    assert values["status"] == Missing(reason)
    for value in values.values():
        text = value.reason if isinstance(value, Missing) else value
        assert SECRET not in text

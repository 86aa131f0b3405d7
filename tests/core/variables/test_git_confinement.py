"""Attacks on what libgit2 opens, written as the attacks, on real repositories.

(a) A repository inside the roots whose ``.git/refs/heads``, ``.git/objects/pack`` and
``.git/objects/XX`` are symlinks into a repository outside the roots, with no index:
libgit2 would list the outside repository's HEAD tree. The worker's Landlock
confinement stops it (no Python check looks inside ``.git`` that far).

(b) Configuration and ignore files outside the roots must not count: an
``include.path``, ``core.excludesFile``, a symlinked ``.git/info/exclude``, a symlinked
in-tree ``.gitignore``. The attacker's oracle is a difference: the values with a
guessed line in the outside file against those without it. There must be none, and
no outside text may appear in any value or reason — with Landlock and, through the
path checks, without it.

(c) Issue 20: the core alone, with no allowed roots, reads ``git:`` (and ``file:``) in
the working directory.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sysprompt_core.variables import (
    Missing,
    ResolveContext,
    ResolverOptions,
    Value,
    default_registry,
    resolve_prompt,
)
from tests.core.variables.support import context, git, make_repo, shared_git

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Landlock is Linux's")

BOTH = ("branch", "status")
SECRET = "outside-secret-name"


def resolve(cwd: Path, root: Path, *, landlock: bool = True) -> dict[str, Value]:
    return shared_git().resolve(BOTH, context(cwd, roots=(root,), landlock=landlock))


def texts(values: dict[str, Value]) -> str:
    return "\n".join(v.reason if isinstance(v, Missing) else v for v in values.values())


# --- (a) symlinks inside .git into a repository outside the roots ----------------------


def borrowed_objects_repo(tmp_path: Path) -> Path:
    """``root/proj``: its refs/heads, objects/pack and objects/XX are the outside
    repository's; no index. Returns the project."""
    outside = make_repo(tmp_path / "outside")
    for n in range(3):
        (outside / f"{SECRET}-{n}.txt").write_text(f"{n}\n")
    git(outside, "add", "-A")
    git(outside, "commit", "--quiet", "-m", "secrets")
    git(outside, "repack", "--quiet", "-a", "-d")
    (outside / f"{SECRET}-loose.txt").write_text("loose\n")
    git(outside, "add", "-A")
    git(outside, "commit", "--quiet", "-m", "loose objects")
    project = tmp_path / "root" / "proj"
    project.mkdir(parents=True)
    git(project, "init", "--quiet", "--initial-branch=main")
    dotgit = project / ".git"
    shutil.rmtree(dotgit / "refs" / "heads")
    (dotgit / "refs" / "heads").symlink_to(outside / ".git" / "refs" / "heads")
    objects = outside / ".git" / "objects"
    shutil.rmtree(dotgit / "objects" / "pack")
    (dotgit / "objects" / "pack").symlink_to(objects / "pack")
    for folder in objects.iterdir():
        if len(folder.name) == 2:
            (dotgit / "objects" / folder.name).symlink_to(folder)
    assert not (dotgit / "index").exists()
    assert SECRET in git(project, "status", "--short")  # what git itself would list
    return project


def test_git_symlinks_inside_dot_git_leak_no_outside_name(tmp_path: Path) -> None:
    project = borrowed_objects_repo(tmp_path)
    values = resolve(project, tmp_path / "root")
    assert SECRET not in texts(values)
    assert all(isinstance(value, Missing) for value in values.values())


def test_git_symlinks_inside_dot_git_leak_no_name_through_resolve_prompt(
    tmp_path: Path,
) -> None:
    project = borrowed_objects_repo(tmp_path)
    ctx = context(project, roots=(tmp_path / "root",))
    resolution = resolve_prompt("[git:branch]\n[git:status]\n", ctx, default_registry())
    assert SECRET not in (resolution.prompt or "")
    assert SECRET not in texts(resolution.values.resolve_all())


# --- (b) configuration and ignore files outside the roots --------------------------------

GUESS = "guessed.txt"

Attack = Callable[[Path, Path, str], Path]
"""``attack(root, outside, text)``: a repository in ``root`` that makes git read the
file ``outside/file`` holding ``text``; returns the working directory."""


def project_with_untracked_guess(root: Path) -> Path:
    repo = make_repo(root / "repo")
    (repo / GUESS).write_text("an untracked file named like the guessed line\n")
    return repo


def include_path(root: Path, outside: Path, text: str) -> Path:
    repo = project_with_untracked_guess(root)
    (outside / "file").write_text(f"[status]\n\tshowUntrackedFiles = {text}\n")
    git(repo, "config", "include.path", str(outside / "file"))
    return repo


def excludes_file(root: Path, outside: Path, text: str) -> Path:
    repo = project_with_untracked_guess(root)
    (outside / "file").write_text(f"{text}\n")
    git(repo, "config", "core.excludesFile", str(outside / "file"))
    return repo


def symlinked_info_exclude(root: Path, outside: Path, text: str) -> Path:
    repo = project_with_untracked_guess(root)
    (outside / "file").write_text(f"{text}\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to(outside / "file")
    return repo


def symlinked_gitignore(root: Path, outside: Path, text: str) -> Path:
    repo = project_with_untracked_guess(root)
    (outside / "file").write_text(f"{text}\n")
    (repo / ".gitignore").symlink_to(outside / "file")
    return repo


ATTACKS: dict[str, Attack] = {
    "include_path": include_path,
    "excludes_file": excludes_file,
    "symlinked_info_exclude": symlinked_info_exclude,
    "symlinked_gitignore": symlinked_gitignore,
}


def attacked(tmp_path: Path, attack: Attack, text: str, landlock: bool) -> dict[str, Value]:
    """The values in the attacked repository, made afresh at the same paths."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for folder in (root, outside):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    return resolve(attack(root, outside, text), root, landlock=landlock)


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "path-checks"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_git_outside_configuration_and_ignore_files_do_not_count(
    tmp_path: Path, attack: str, landlock: bool
) -> None:
    guessed = attacked(tmp_path, ATTACKS[attack], GUESS, landlock)
    other = attacked(tmp_path, ATTACKS[attack], "other.txt", landlock)
    assert guessed == other  # no oracle: the outside line changes nothing
    assert GUESS not in texts(guessed).replace(f"?? {GUESS}", "")
    assert guessed["branch"] == "main" or attack == "include_path"


def test_git_outside_include_is_not_echoed(tmp_path: Path) -> None:
    """Before, the preview's reason showed the outside file's value."""
    values = attacked(tmp_path, include_path, SECRET, landlock=True)
    assert SECRET not in texts(values)
    assert isinstance(values["status"], Missing)


def test_git_symlinked_gitignore_inside_the_roots_is_declined_as_git_ignores_it(
    tmp_path: Path,
) -> None:
    repo = project_with_untracked_guess(tmp_path)
    (repo / "rules").write_text(f"{GUESS}\n")
    (repo / ".gitignore").symlink_to(repo / "rules")
    assert f"?? {GUESS}" in git(repo, "status", "--short")  # git does not follow it
    reason = ".gitignore is a symbolic link, which git does not follow (git 2.32 and later)"
    assert resolve(repo, tmp_path)["status"] == Missing(f"{reason}; not reproduced")


# --- (c) the core alone, with no allowed roots -------------------------------------------


def test_core_without_roots_reads_git_and_files_in_the_working_directory(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("Use tabs.\n")
    ctx = ResolveContext(cwd=str(repo), options=ResolverOptions(allowed_roots=()))
    resolution = resolve_prompt("[git:branch] [git:status]\n[file:AGENTS.md]", ctx)
    assert resolution.prompt == "main ?? AGENTS.md\nUse tabs."


def test_core_default_options_read_git_and_files_in_a_working_directory_anywhere(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")  # under /tmp: outside the home directory
    (repo / "AGENTS.md").write_text("Use tabs.\n")
    (tmp_path / "outside.md").write_text("secret\n")
    ctx = ResolveContext(cwd=str(repo))
    resolution = resolve_prompt(
        f"[git:branch]\n[file:AGENTS.md]\n[file:{tmp_path}/outside.md]", ctx
    )
    assert resolution.prompt == "main\nUse tabs.\n"
    assert resolution.values.resolve_all()[f"file:{tmp_path}/outside.md"] == Missing(
        "outside the allowed roots"
    )


def test_core_without_roots_reads_no_repository_above_the_working_directory(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    ctx = ResolveContext(cwd=str(repo / "sub"), options=ResolverOptions(allowed_roots=()))
    values = resolve_prompt("[git:branch]", ctx).values.resolve_all()
    assert values == {"git:branch": Missing("not a git repository")}
    assert os.path.isdir(repo / ".git")

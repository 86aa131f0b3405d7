"""The index facts read by scanning a version-2 index's bytes equal those of the loop
over every entry, on real indexes written by git: nested ``.gitattributes`` and
``.gitignore`` files (a long path, names that merely end alike), submodules,
conflicts and assume-unchanged entries; and indexes the scan must leave to the loop
(version 3, with intent-to-add or skip-worktree entries)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from sysprompt_core.variables.git import _looped_facts, _scanned_facts
from tests.core.variables.support import GIT_IDENTITY, git, make_repo

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")


def write(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def varied(root: Path) -> Path:
    repo = make_repo(root / "repo")
    long = "/".join(["d" * 200] * 8)  # a path of 1,600 bytes
    for folder in ("", "a/", "a/b c/", "é/", f"{long}/"):
        write(repo / f"{folder}.gitattributes", "*.txt text\n")
        write(repo / f"{folder}.gitignore", "*.tmp\n")
    write(repo / "not.gitattributes")
    write(repo / "x.gitignore")
    write(repo / ".gitattributes-not")
    origin = make_repo(root / "origin")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", str(origin), "sub")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "varied")
    git(repo, "update-index", "--assume-unchanged", "a.txt")
    return repo


def conflicted(root: Path) -> Path:
    repo = make_repo(root / "repo")
    git(repo, "checkout", "--quiet", "-b", "other")
    write(repo / "a.txt", "other\n")
    git(repo, "commit", "--quiet", "-am", "other")
    git(repo, "checkout", "--quiet", "main")
    write(repo / "a.txt", "main\n")
    write(repo / "dir/.gitattributes", "* -text\n")
    write(repo / "dir/.gitignore", "*.tmp\n")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "main")
    merged = subprocess.run(["git", *GIT_IDENTITY, "merge", "--quiet", "other"], cwd=repo)
    assert merged.returncode == 1  # the conflict
    return repo


def index_of(repo: Path) -> pygit2.Index:
    index: pygit2.Index = pygit2.Repository(str(repo)).index
    return index


@pytest.mark.parametrize("build", [varied, conflicted])
def test_git_index_scan_equals_the_loop(tmp_path: Path, build: Callable[[Path], Path]) -> None:
    repo = build(tmp_path)
    index = index_of(repo)
    assert (repo / ".git" / "index").read_bytes()[4:8] == (2).to_bytes(4, "big")
    scanned = _scanned_facts(index._index, str(repo / ".git" / "index"))
    looped = _looped_facts(index._index)
    assert scanned is not None
    assert scanned.stages == looped.stages
    assert scanned.gitlinks == looped.gitlinks
    assert sorted(scanned.attributes) == sorted(looped.attributes)
    assert sorted(scanned.ignores) == sorted(looped.ignores)
    assert scanned.intent_to_add == looped.intent_to_add == set()
    for path in looped.paths:
        assert scanned.is_unchanged(path) == looped.is_unchanged(path), path
    assert looped.attributes and looped.ignores


@pytest.mark.parametrize(
    "how", [("add", "-N", "new.txt"), ("update-index", "--skip-worktree", "a.txt")]
)
def test_git_index_with_extended_flags_is_left_to_the_loop(
    tmp_path: Path, how: tuple[str, ...]
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "new.txt")
    git(repo, *how)
    assert (repo / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    index = index_of(repo)
    assert _scanned_facts(index._index, str(repo / ".git" / "index")) is None

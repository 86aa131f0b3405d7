"""file: variables — reading text near the conversation, and nothing beyond the roots."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from sysprompt_core.paths import descriptor_path, directory_real_path, is_inside
from sysprompt_core.variables import Missing, ResolveContext, ResolverOptions, Value
from sysprompt_core.variables.file import FileResolver, read_file_variable, read_text
from tests.core.variables.support import context, real, recording

LIMIT = 32
OUTSIDE = Missing("outside the allowed roots")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")


@dataclass(frozen=True)
class Tree:
    """``project`` is the cwd, ``root`` an allowed root, ``outside`` neither."""

    base: Path
    project: Path
    root: Path
    outside: Path

    def context(self) -> ResolveContext:
        return context(self.project, roots=(self.root,), max_file_bytes=LIMIT)

    def resolve(self, name: str) -> Value:
        return read_file_variable(name.format(base=self.base), self.context())


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    project, root, outside = tmp_path / "project", tmp_path / "home" / "a", tmp_path / "outside"
    for directory in (project / "sub", project / "adir", root, tmp_path / "home" / "ab", outside):
        directory.mkdir(parents=True)
    files: dict[Path, bytes] = {
        project / "notes.txt": b"hello\n",
        project / "sub" / "deep.txt": b"deep",
        project / "empty.txt": b"",
        project / "newline.txt": b"\n",
        project / "crlf.txt": b"a\r\nb\r\n\r\n",
        project / "lf2.txt": b"a\n\n",
        project / "cr.txt": b"a\r",
        project / "bom.txt": b"\xef\xbb\xbfwith bom\n",
        project / "utf8.txt": "héllo ✓ [system:os]\n".encode(),
        project / "latin1.txt": "héllo".encode("latin-1"),
        project / "binary.bin": b"\x00\xff\xfe\x01",
        project / "nul.txt": b"valid utf-8 \x00 with a NUL\n",
        project / "exact.txt": b"x" * LIMIT,
        project / "big.txt": b"x" * (LIMIT + 1),
        root / "shared.md": b"shared\n",
        tmp_path / "home" / "ab" / "sibling.txt": b"sibling",
        outside / "secret.txt": b"secret\n",
    }
    for path, data in files.items():
        path.write_bytes(data)
    (project / "to-secret").symlink_to(outside / "secret.txt")
    (project / "to-outside-dir").symlink_to(outside)
    (project / "to-shared").symlink_to(root / "shared.md")
    (project / "to-missing").symlink_to(project / "nothing-here")
    (root / "back-to-project").symlink_to(project / "notes.txt")
    return Tree(tmp_path, project, root, outside)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("notes.txt", "hello"),
        ("./notes.txt", "hello"),
        ("sub/deep.txt", "deep"),
        ("sub/../notes.txt", "hello"),
        ("{base}/project/notes.txt", "hello"),
        ("{base}/home/a/shared.md", "shared"),
        ("../home/a/shared.md", "shared"),
        ("to-shared", "shared"),
        ("{base}/home/a/back-to-project", "hello"),
        ("utf8.txt", "héllo ✓ [system:os]"),
        ("bom.txt", "with bom"),
        ("exact.txt", "x" * LIMIT),
    ],
)
def test_file_inside_roots_is_read(tree: Tree, name: str, expected: str) -> None:
    assert tree.resolve(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("empty.txt", ""),
        ("newline.txt", ""),
        ("crlf.txt", "a\r\nb\r\n"),
        ("lf2.txt", "a\n"),
        ("cr.txt", "a\r"),
    ],
)
def test_file_one_trailing_line_ending_is_removed(tree: Tree, name: str, expected: str) -> None:
    assert tree.resolve(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "{base}/outside/secret.txt",
        "to-secret",
        "to-outside-dir/secret.txt",
        "{base}/home/ab/sibling.txt",
        "{base}",
        "/etc/hostname",
    ],
)
def test_file_outside_roots_is_missing(tree: Tree, name: str) -> None:
    assert tree.resolve(name) == OUTSIDE


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("missing.txt", Missing("no such file")),
        ("to-missing", Missing("no such file")),
        ("sub/missing/deeper.txt", Missing("no such file")),
        ("big.txt", Missing(f"larger than {LIMIT} bytes")),
        ("binary.bin", Missing("binary: contains NUL bytes")),
        ("nul.txt", Missing("binary: contains NUL bytes")),
        ("latin1.txt", Missing("not UTF-8")),
        ("adir", Missing("not a regular file")),
        (".", Missing("not a regular file")),
        ("notes.txt\0.png", Missing("not a valid path")),
        ("", Missing("not a valid path")),
    ],
)
def test_file_unreadable_is_missing(tree: Tree, name: str, expected: Missing) -> None:
    assert tree.resolve(name) == expected


@posix_only
def test_file_fifo_is_missing_without_blocking(tree: Tree) -> None:
    os.mkfifo(tree.project / "pipe")
    started = time.monotonic()
    assert tree.resolve("pipe") == Missing("not a regular file")
    assert time.monotonic() - started < 20  # opening it to read would block for ever


@posix_only
def test_file_character_device_is_missing(tree: Tree) -> None:
    options_context = context(tree.project, roots=("/dev",))
    assert read_file_variable("/dev/zero", options_context) == Missing("not a regular file")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_file_size_is_checked_on_what_is_read(tree: Tree) -> None:
    """``/proc`` files claim size 0; the limit still holds on the bytes actually read."""
    assert os.stat("/proc/self/status").st_size == 0
    proc = context(None, roots=("/proc",), max_file_bytes=LIMIT)
    assert read_file_variable("/proc/self/status", proc) == Missing(f"larger than {LIMIT} bytes")


def test_file_relative_without_cwd_is_missing(tree: Tree) -> None:
    no_cwd = context(None, roots=(tree.root,))
    assert read_file_variable("notes.txt", no_cwd) == Missing(
        "a relative path needs a working directory"
    )
    assert read_file_variable(f"{tree.root}/shared.md", no_cwd) == "shared"


def test_file_cwd_itself_is_a_root(tree: Tree) -> None:
    assert read_file_variable("notes.txt", context(tree.project)) == "hello"
    assert read_file_variable("../notes.txt", context(tree.project / "sub")) == OUTSIDE


def test_file_root_given_through_a_symlink_is_followed(tree: Tree) -> None:
    (tree.base / "link-to-root").symlink_to(tree.root)
    linked = context(None, roots=(tree.base / "link-to-root",))
    assert read_file_variable(f"{tree.root}/shared.md", linked) == "shared"
    assert read_file_variable(f"{tree.base}/link-to-root/shared.md", linked) == "shared"


def test_file_empty_or_relative_root_admits_nothing(tree: Tree) -> None:
    odd_roots = context(None, roots=("", "relative/root"))
    assert read_file_variable(f"{tree.root}/shared.md", odd_roots) == OUTSIDE


def test_file_resolver_is_dynamic_and_resolves_each_name(tree: Tree) -> None:
    resolver = FileResolver()
    assert resolver.names() is None
    assert not resolver.batch
    assert resolver.resolve(["notes.txt", "missing.txt"], tree.context()) == {
        "notes.txt": "hello",
        "missing.txt": Missing("no such file"),
    }


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/home/a", "/home/a", True),
        ("/home/a/x", "/home/a", True),
        ("/home/a/x", "/home/a/", True),
        ("/home/ab", "/home/a", False),
        ("/home/ab/x", "/home/a", False),
        ("/home", "/home/a", False),
        ("/anything", "/", True),
    ],
)
def test_file_is_inside_is_a_path_prefix_check(path: str, root: str, inside: bool) -> None:
    assert is_inside(path, root) is inside


def test_file_outside_roots_is_never_opened(tree: Tree, audit_hook_installed: None) -> None:
    names = ["../outside/secret.txt", "{base}/outside/secret.txt", "to-secret", "to-outside-dir"]
    with recording() as log:
        values = [tree.resolve(name) for name in names]
    assert values == [OUTSIDE] * len(names)
    assert not {path for path in log.opened() if path.startswith(real(tree.outside))}
    assert log.opened() == set()


def test_file_inside_roots_is_opened_positive_control(
    tree: Tree, audit_hook_installed: None
) -> None:
    with recording() as log:
        assert tree.resolve("to-shared") == "shared"
    assert real(tree.root / "shared.md") in log.opened()


# Race-free confinement: what counts is the opened descriptor, and the checked cwd.


def test_file_descriptor_path_is_the_real_path_when_opened_through_a_link(tree: Tree) -> None:
    fd = os.open(tree.project / "to-shared", os.O_RDONLY)
    try:
        assert descriptor_path(fd) == real(tree.root / "shared.md")
    finally:
        os.close(fd)
    assert directory_real_path(str(tree.project / "to-outside-dir")) == real(tree.outside)


def test_file_opened_descriptor_outside_roots_is_missing(tree: Tree) -> None:
    """The check after the open, on its own: a name that led outside is refused."""
    roots = [real(tree.project), real(tree.root)]
    outside = str(tree.outside / "secret.txt")
    assert read_text(outside, tree.context(), roots) == OUTSIDE
    assert read_text(str(tree.project / "notes.txt"), tree.context(), roots) == "hello"


def test_file_relative_paths_use_the_checked_directory_not_cwd(tree: Tree) -> None:
    """cwd swapped for a link to outside after the check: reads stay in the checked one."""
    checked = ResolveContext(
        cwd=str(tree.base / "cwd"), directory=real(tree.project), options=tree.context().options
    )
    (tree.base / "cwd").symlink_to(tree.outside)
    assert read_file_variable("notes.txt", checked) == "hello"
    assert read_file_variable("secret.txt", checked) == Missing("no such file")


def test_file_directory_defaults_to_the_real_cwd(tree: Tree) -> None:
    (tree.base / "link").symlink_to(tree.project)
    made = ResolveContext(cwd=str(tree.base / "link"))
    assert (made.cwd, made.directory) == (str(tree.base / "link"), real(tree.project))
    assert ResolveContext(cwd=None).directory is None


# The read budget of one resolution, and files reached by many names.


def _budget(tree: Tree, budget: int) -> ResolveContext:
    return ResolveContext(
        cwd=str(tree.project),
        options=ResolverOptions(
            allowed_roots=(str(tree.root),), max_file_bytes=LIMIT, max_read_bytes=budget
        ),
    )


def test_file_read_budget_exhausted_is_missing(tree: Tree) -> None:
    for name in ("one", "two", "three"):
        (tree.project / name).write_bytes(name.encode() * 4)
    limited = _budget(tree, 26)
    assert read_file_variable("one", limited) == "oneoneoneone"  # 12 bytes
    assert read_file_variable("two", limited) == "twotwotwotwo"  # 24 bytes: 2 left
    refused = read_file_variable("three", limited)
    assert isinstance(refused, Missing)
    assert "read budget" in refused.reason and "SYSPROMPT_MAX_READ_BYTES" in refused.reason
    assert read_file_variable("empty.txt", limited) == ""  # what fits still reads
    assert limited.reads.used == 24


def test_file_read_budget_fits_exactly(tree: Tree) -> None:
    limited = _budget(tree, LIMIT)
    assert read_file_variable("exact.txt", limited) == "x" * LIMIT
    assert limited.reads.used == LIMIT


def test_file_same_file_by_many_names_is_read_once(tree: Tree) -> None:
    (tree.project / "links").mkdir()
    for index in range(50):
        (tree.project / "links" / f"l{index:03}").symlink_to(tree.project / "exact.txt")
    limited = _budget(tree, LIMIT)
    values = [read_file_variable(f"links/l{index:03}", limited) for index in range(50)]
    assert values == ["x" * LIMIT] * 50
    assert limited.reads.used == LIMIT


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_file_read_budget_holds_when_size_is_unknown(tree: Tree) -> None:
    """``/proc`` files claim size 0: the budget still holds on what is read."""
    proc = ResolveContext(
        cwd=None, options=ResolverOptions(allowed_roots=("/proc",), max_read_bytes=16)
    )
    refused = read_file_variable("/proc/self/status", proc)
    assert isinstance(refused, Missing) and "read budget" in refused.reason
    assert proc.reads.used == 17

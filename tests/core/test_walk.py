"""sysprompt_core.walk: listing files below a directory, confined to the roots."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

import pytest

from sysprompt_core.walk import confined_files
from tests.core.walk_support import unprivileged, world_readable_folder


def _tree(root: Path, *files: str) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")


def test_confined_files_lists_breadth_first_by_name(tmp_path: Path) -> None:
    _tree(tmp_path, "b.md", "a.md", "z/deep/c.md", "y/d.md", ".git/HEAD")

    found = confined_files(str(tmp_path), [str(tmp_path)], max_entries=100, skip={".git"})

    assert found == ["a.md", "b.md", "y/d.md", "z/deep/c.md"]


def test_confined_files_stops_after_max_entries(tmp_path: Path) -> None:
    _tree(tmp_path, *(f"f{n:03}.md" for n in range(50)), "sub/late.md")

    found = confined_files(str(tmp_path), [str(tmp_path)], max_entries=10)

    assert len(found) <= 10 and "sub/late.md" not in found


def test_confined_files_filters_before_opening_links(tmp_path: Path) -> None:
    _tree(tmp_path, "AGENTS.md", "notes.txt")

    def wanted(path: str) -> bool:
        return "agents" in path.lower()

    found = confined_files(str(tmp_path), [str(tmp_path)], max_entries=100, wanted=wanted)

    assert found == ["AGENTS.md"]


def test_confined_files_offers_links_only_to_files_inside_roots(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    _tree(root, "real.md", "folder/inner.md")
    _tree(outside, "secret.md", "dir/secret2.md")
    (root / "alias.md").symlink_to(root / "real.md")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "leakdir").symlink_to(outside / "dir", target_is_directory=True)
    (root / "indir").symlink_to(root / "folder", target_is_directory=True)
    (root / "relative.md").symlink_to("../outside/secret.md")

    found = confined_files(str(root), [str(root)], max_entries=100)

    assert found == ["alias.md", "real.md", "folder/inner.md"]


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda root, outside: str(outside), errno.EACCES),  # a directory outside the roots
        (lambda root, outside: str(root / "link"), errno.ENOTDIR),  # the top is a symlink
        (lambda root, outside: str(root / "file.md"), errno.ENOTDIR),
        (lambda root, outside: str(root / "missing"), errno.ENOENT),
        (lambda root, outside: str(root / ("n" * 300)), errno.ENAMETOOLONG),
    ],
    ids=["outside", "symlink", "file", "missing", "long name"],
)
def test_confined_files_refuses_top_when_not_a_directory_inside(
    tmp_path: Path, make: Callable[[Path, Path], str], error: int
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    _tree(root, "file.md")
    _tree(outside, "secret.md")
    (root / "link").symlink_to(outside, target_is_directory=True)

    with pytest.raises(OSError) as raised:
        confined_files(make(root, outside), [str(root)], max_entries=100)

    assert raised.value.errno == error


def test_confined_files_skips_unreadable_folder() -> None:
    with world_readable_folder() as root:
        _tree(root, "open.md", "locked/hidden.md", "locked/deeper/more.md")
        (root / "locked").chmod(0o700)

        with unprivileged():
            found = confined_files(str(root), [str(root)], max_entries=100)

    assert found == ["open.md"]

"""``/editor/files`` on odd input: a clear 400 or a listing, never a 500.

Table-driven: each case builds a working directory (or a tree below one) inside the
allowed root, asks for its suggestions with a client that answers a 500 instead of
raising, and checks the status and what is listed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from tests.core.walk_support import unprivileged, world_readable_folder

Setup = Callable[[Path], tuple[str, str]]
"""Given the project folder (inside the allowed root, holding ``AGENTS.md``), the
``cwd`` and ``q`` to ask with."""


def _nul_in_cwd(project: Path) -> tuple[str, str]:
    return f"{project}\x00/etc", ""


def _nul_in_query(project: Path) -> tuple[str, str]:
    return str(project), "AGENTS\x00"


def _huge_cwd(project: Path) -> tuple[str, str]:
    return "/" + "a" * 100_000, ""


def _long_component(project: Path) -> tuple[str, str]:
    return str(project / ("a" * 300)), ""  # ENAMETOOLONG


def _long_path(project: Path) -> tuple[str, str]:
    return str(project / "/".join(["abcdefgh"] * 450)), ""  # over PATH_MAX once joined


def _cwd_loop(project: Path) -> tuple[str, str]:
    os.symlink("loop", project / "loop")
    return str(project / "loop"), ""  # ELOOP


def _cwd_is_file(project: Path) -> tuple[str, str]:
    return str(project / "AGENTS.md"), ""  # ENOTDIR


def _cwd_dangling(project: Path) -> tuple[str, str]:
    os.symlink(project / "missing", project / "dangling")
    return str(project / "dangling"), ""


def _cwd_fifo(project: Path) -> tuple[str, str]:
    os.mkfifo(project / "fifo")
    return str(project / "fifo"), ""


def _relative(project: Path) -> tuple[str, str]:
    return "project", ""


def _dot_dot_outside(project: Path) -> tuple[str, str]:
    return f"{project}/../../..", ""


def _odd_entries(project: Path) -> tuple[str, str]:
    os.symlink("loop", project / "loop")  # ELOOP when followed
    os.symlink(project / "missing", project / "dangling.md")
    os.mkfifo(project / "fifo.md")
    os.symlink(project / "fifo.md", project / "to-fifo.md")
    os.symlink("/dev/null", project / "device.md")
    (project / "deep").mkdir()
    os.symlink(project / "deep", project / "deep" / "cycle")
    return str(project), ""


def _undecodable_name(project: Path) -> tuple[str, str]:
    (project / os.fsdecode(b"caf\xe9.md")).write_text("x")
    return str(project), ""


CASES: list[tuple[str, Setup, int, list[str] | None]] = [
    ("NUL byte in cwd", _nul_in_cwd, 400, []),
    ("NUL byte in q", _nul_in_query, 400, []),
    ("100,000-character cwd", _huge_cwd, 400, []),
    ("300-character name (ENAMETOOLONG)", _long_component, 400, []),
    ("path over PATH_MAX", _long_path, 400, []),
    ("cwd a symlink loop (ELOOP)", _cwd_loop, 400, []),
    ("cwd a file, not a directory (ENOTDIR)", _cwd_is_file, 400, []),
    ("cwd a dangling symlink", _cwd_dangling, 400, []),
    ("cwd a FIFO", _cwd_fifo, 400, []),
    ("relative cwd", _relative, 400, []),
    ("cwd climbing out with ..", _dot_dot_outside, 400, []),
    ("loops, dangling links, FIFOs and devices inside", _odd_entries, 200, ["AGENTS.md"]),
    ("a name that is not UTF-8", _undecodable_name, 200, None),
]


@pytest.fixture
def quiet_author(author: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(author)
    return client


@pytest.mark.parametrize(
    ("setup", "status", "files"),
    [pytest.param(setup, status, files, id=name) for name, setup, status, files in CASES],
)
def test_files_odd_input_answers_without_server_error(
    quiet_author: Client, workdir: Path, setup: Setup, status: int, files: list[str] | None
) -> None:
    cwd, query = setup(workdir)

    response = quiet_author.get("/editor/files", {"cwd": cwd, "q": query})

    assert response.status_code == status, response.content[:300]
    body = response.json()
    if files is not None:
        assert body["files"] == files
    if status == 400:
        assert isinstance(body["error"], str) and body["error"]


def test_files_permission_denied_skips_unreadable_folder(
    quiet_author: Client, settings: Settings
) -> None:
    """An unreadable folder below the cwd is left out: the walk reads as the server's
    user (here ``nobody``, as the tests run as root)."""
    with world_readable_folder() as root:
        settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(root)]}
        (root / "locked").mkdir(mode=0o700)
        (root / "locked" / "hidden.md").write_text("x")
        (root / "open.md").write_text("x")

        with unprivileged():
            inside = quiet_author.get("/editor/files", {"cwd": str(root)})
            refused = quiet_author.get("/editor/files", {"cwd": str(root / "locked")})

    assert inside.status_code == 200
    assert inside.json() == {"files": ["open.md"]}
    assert refused.status_code == 400

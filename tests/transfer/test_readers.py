"""Reading trees from real zip files and real folders: what is read, refused, ignored."""

from __future__ import annotations

import io
import os
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_django import Settings

from sysprompt.transfer.readers import (
    ARCHIVE,
    MAX_DEPTH,
    Archive,
    ArchiveLimits,
    read_directory,
    read_zip,
)
from tests.transfer.support import LLXPRT, SETTINGS, llxprt_folder, symlink_member, zip_of

GOOD = {path: text.encode() for path, text in LLXPRT.items()}


def reasons(archive: Archive) -> dict[str, str]:
    return {refusal.path: refusal.reason for refusal in archive.refusals}


@pytest.fixture(autouse=True)
def small_templates(settings: Settings) -> None:
    """Templates of at most 1,000 bytes, so "too large" is cheap to build."""
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 1000}


# --- what is read ------------------------------------------------------------------------


def test_read_zip_reads_every_file() -> None:
    archive = read_zip(zip_of())

    assert archive.refusals == [] and archive.ignored == []
    assert {path: data for path, data in archive.files.items() if path != "sysprompt.json"} == GOOD
    assert b'"compress": true' in archive.files["sysprompt.json"]


def test_read_directory_reads_every_file(tmp_path: Path) -> None:
    archive = read_directory(llxprt_folder(tmp_path / "prompts"))

    assert archive.refusals == [] and archive.ignored == []
    assert set(archive.files) == {*GOOD, "sysprompt.json"}
    assert {path: archive.files[path] for path in GOOD} == GOOD


def test_read_zip_skips_folder_entries() -> None:
    data = zip_of({"env/git-repository.md": "git"}, None, [("env/", b""), ("tools/", b"")])

    archive = read_zip(data)

    assert (archive.files, archive.refusals, archive.ignored) == (
        {"env/git-repository.md": b"git"},
        [],
        [],
    )


def test_read_directory_follows_a_linked_top(tmp_path: Path) -> None:
    llxprt_folder(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")

    assert read_directory(tmp_path / "link").files == read_directory(tmp_path / "real").files


def test_read_directory_of_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_directory(tmp_path / "missing")


# --- what is ignored --------------------------------------------------------------------

IGNORED = [
    ("README", "neither a .md file"),
    ("notes.txt", "neither a .md file"),
    ("providers/anthropic/sysprompt.json", "neither a .md file"),
    (".DS_Store", "hidden"),
    ("env/.core.md.swp", "hidden"),
    ("env/.backup.md", "hidden"),
]


@pytest.mark.parametrize(("path", "reason"), IGNORED)
def test_read_zip_ignores_files_outside_the_layout(path: str, reason: str) -> None:
    archive = read_zip(zip_of(members=[(path, b"\xff\xfe anything")]))

    assert [(note.path, reason in note.reason) for note in archive.ignored] == [(path, True)]
    assert path not in archive.files and archive.refusals == []


@pytest.mark.parametrize(("path", "reason"), IGNORED)
def test_read_directory_ignores_files_outside_the_layout(
    tmp_path: Path, path: str, reason: str
) -> None:
    top = llxprt_folder(tmp_path / "prompts", {**LLXPRT, path: b"\xff\xfe anything"})

    archive = read_directory(top)

    assert [(note.path, reason in note.reason) for note in archive.ignored] == [(path, True)]
    assert path not in archive.files and archive.refusals == []


def test_read_zip_ignores_macos_metadata() -> None:
    archive = read_zip(zip_of(members=[("__MACOSX/._core.md", b"\x00\x05\x16\x07")]))

    assert [note.path for note in archive.ignored] == ["__MACOSX/._core.md"]
    assert archive.refusals == []


def test_read_directory_ignores_a_hidden_folder_without_reading_it(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts", {**LLXPRT, ".git/config": "[core]"})
    (top / ".git" / "link").symlink_to("/etc/passwd")

    archive = read_directory(top)

    assert [note.path for note in archive.ignored] == [".git"]
    assert archive.refusals == []


# --- what is refused: zip files ----------------------------------------------------------


def _lying_header(size: int) -> bytes:
    """A zip whose one member says it holds 10 bytes but inflates to ``size``."""
    data = bytearray(zip_of({"core.md": b"\n" * size}, None))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = struct.pack("<I", 10)
    return bytes(data)


def _encrypted() -> bytes:
    """A zip whose one member is marked encrypted (bit 0 of its flags)."""
    data = bytearray(zip_of({"core.md": b"secret"}, None))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        data[data.index(signature) + offset] |= 0x1
    return bytes(data)


ZIP_REFUSALS: list[tuple[str, Callable[[], bytes], str, str]] = [
    ("zip-slip", lambda: zip_of(members=[("../x.md", "x")]), "../x.md", "'..'"),
    ("deep zip-slip", lambda: zip_of(members=[("env/../../x.md", "x")]), "env/../../x.md", "'..'"),
    ("absolute", lambda: zip_of(members=[("/etc/x.md", "x")]), "/etc/x.md", "absolute"),
    ("drive letter", lambda: zip_of(members=[("C:/x.md", "x")]), "C:/x.md", "absolute"),
    ("backslash", lambda: zip_of(members=[("env\\x.md", "x")]), "env\\x.md", "backslash"),
    ("slip in a folder entry", lambda: zip_of(members=[("../up/", "")]), "../up/", "'..'"),
    (
        "symlink member",
        lambda: zip_of(members=[(symlink_member("env/sandbox.md", "/etc/passwd"), "/etc/passwd")]),
        "env/sandbox.md",
        "symbolic link",
    ),
    (
        "symlink that is not markdown",
        lambda: zip_of(members=[(symlink_member("README", "/etc/passwd"), "/etc/passwd")]),
        "README",
        "symbolic link",
    ),
    (
        "name twice",
        lambda: zip_of(members=[("core.md", "again")]),
        "core.md",
        "in the archive twice",
    ),
    (
        "oversized member",
        lambda: zip_of(members=[("big.md", "x" * 1001)]),
        "big.md",
        "1,001 bytes; a file may have at most 1,000",
    ),
    (
        "zip bomb (declared size)",
        lambda: zip_of(members=[("bomb.md", b"\0" * 10_000_000)]),
        "bomb.md",
        "at most 1,000",
    ),
    ("zip bomb (lying header)", lambda: _lying_header(10_000_000), "core.md", "damaged"),
    ("encrypted", _encrypted, "core.md", "encrypted"),
    ("not a zip", lambda: b"core.md: hello", ARCHIVE, "not a readable zip file"),
    ("empty file", lambda: b"", ARCHIVE, "not a readable zip file"),
    ("truncated zip", lambda: zip_of()[:-30], ARCHIVE, "not a readable zip file"),
]


@pytest.mark.parametrize(
    ("build", "path", "reason"),
    [pytest.param(build, path, reason, id=case) for case, build, path, reason in ZIP_REFUSALS],
)
def test_read_zip_refuses(build: Callable[[], bytes], path: str, reason: str) -> None:
    archive = read_zip(build())

    assert path in reasons(archive), archive.refusals
    assert reason in reasons(archive)[path]
    assert path not in archive.files or path == "core.md"


def test_read_zip_refuses_a_damaged_member() -> None:
    data = bytearray(zip_of({"core.md": "x" * 500}, None))
    start = data.index(b"PK\x03\x04") + 30 + len("core.md")
    data[start : start + 8] = b"\xff" * 8

    archive = read_zip(bytes(data))

    assert "damaged" in reasons(archive)["core.md"]
    assert archive.files == {}


def test_read_zip_refuses_too_many_members_without_reading_them() -> None:
    data = zip_of({f"f{number}.md": "x" for number in range(6)}, None)

    archive = read_zip(data, limits=ArchiveLimits(max_entries=5))

    assert list(reasons(archive)) == [ARCHIVE]
    assert "more than 5 files and folders" in reasons(archive)[ARCHIVE]
    assert archive.files == {}


def test_read_zip_refuses_more_than_the_total_and_stops() -> None:
    data = zip_of({f"f{number}.md": "x" * 400 for number in range(5)}, None)

    archive = read_zip(data, limits=ArchiveLimits(max_total_bytes=1000))

    assert "more than 1,000 bytes of files in all" in reasons(archive)[ARCHIVE]
    assert sorted(archive.files) == ["f0.md", "f1.md"]


def test_read_zip_allows_a_larger_settings_file() -> None:
    settings = {"files": {"core.md": {"defaults": {"text": "x" * 5000}}}}

    archive = read_zip(zip_of({"core.md": "core"}, settings))

    assert archive.refusals == []
    assert len(archive.files["sysprompt.json"]) > 5000


def test_read_zip_refuses_a_settings_file_over_its_limit() -> None:
    settings = {"files": {"core.md": {"defaults": {"text": "x" * 5000}}}}
    limits = ArchiveLimits(max_settings_bytes=4000)

    archive = read_zip(zip_of({"core.md": "core"}, settings), limits=limits)

    assert "at most 4,000" in reasons(archive)["sysprompt.json"]


def test_read_zip_never_inflates_past_the_limit() -> None:
    """A bomb's declared size is checked before reading and the read stops one byte past
    the limit, so a 64 MiB member is refused in a moment and without taking the memory."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("bomb.md", "w", force_zip64=True) as member,
    ):
        for _ in range(64):
            member.write(b"\0" * 1_048_576)

    result = read_zip(buffer.getvalue())

    assert "at most 1,000" in reasons(result)["bomb.md"]


# --- what is refused: folders ----------------------------------------------------------


def test_read_directory_refuses_a_symlinked_file(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    (tmp_path / "secret.md").write_text("secret")
    (top / "env" / "sandbox.md").symlink_to(tmp_path / "secret.md")

    archive = read_directory(top)

    assert "symbolic link (to a file)" in reasons(archive)["env/sandbox.md"]
    assert b"secret" not in b"".join(archive.files.values())


def test_read_directory_refuses_a_symlinked_folder_without_entering(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    llxprt_folder(tmp_path / "elsewhere", {"core.md": "elsewhere"}, None)
    (top / "providers" / "google").symlink_to(tmp_path / "elsewhere")

    archive = read_directory(top)

    assert "symbolic link (to a folder)" in reasons(archive)["providers/google"]
    assert "providers/google/core.md" not in archive.files


def test_read_directory_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    (top / "gone.md").symlink_to(tmp_path / "missing.md")

    assert "symbolic link" in reasons(read_directory(top))["gone.md"]


def test_read_directory_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    os.mkfifo(top / "pipe.md")

    assert "not a regular file" in reasons(read_directory(top))["pipe.md"]


def test_read_directory_refuses_an_oversized_file(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts", {**LLXPRT, "big.md": "x" * 1001})

    archive = read_directory(top)

    assert "at most 1,000" in reasons(archive)["big.md"]
    assert "big.md" not in archive.files


def test_read_directory_refuses_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    with open(os.path.join(os.fsencode(top), b"caf\xe9.md"), "wb") as file:
        file.write(b"x")

    archive = read_directory(top)

    assert "not UTF-8" in reasons(archive)["caf\ufffd.md"]


def test_read_directory_refuses_too_many_entries(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")

    archive = read_directory(top, limits=ArchiveLimits(max_entries=3))

    assert "more than 3 files and folders" in reasons(archive)[ARCHIVE]
    assert len(archive.files) <= 3


def test_read_directory_refuses_more_than_the_total(tmp_path: Path) -> None:
    files = {f"f{number}.md": "x" * 400 for number in range(5)}
    top = llxprt_folder(tmp_path / "prompts", files, None)

    archive = read_directory(top, limits=ArchiveLimits(max_total_bytes=1000))

    assert "more than 1,000 bytes of files in all" in reasons(archive)[ARCHIVE]
    assert sorted(archive.files) == ["f0.md", "f1.md"]


def test_read_directory_refuses_folders_nested_too_deep(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    deep = top.joinpath(*["d"] * (MAX_DEPTH + 2))
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("x")

    archive = read_directory(top)

    assert reasons(archive)["/".join(["d"] * (MAX_DEPTH + 1))].startswith("nested more than")
    assert all(not path.startswith("d/") for path in archive.files)


def test_settings_fixture_matches_the_folder() -> None:
    assert set(SETTINGS["files"]) <= set(LLXPRT)

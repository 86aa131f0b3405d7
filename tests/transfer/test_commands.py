"""``manage.py library_export`` and ``library_import`` with real folders and zip files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command, execute_from_command_line
from django.core.management.base import CommandError
from django.db import connections

from sysprompt.library.selectors import variant_current
from sysprompt.transfer.services import export_files, export_zip
from tests.transfer.support import LLXPRT, llxprt_folder, symlink_member, versions, zip_of

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """The llxprt folder, imported."""
    top = llxprt_folder(tmp_path / "prompts")
    run("library_import", str(top))
    return top


# --- library_export ---------------------------------------------------------------------


@pytest.mark.usefixtures("library")
def test_library_export_writes_a_zip_file(tmp_path: Path) -> None:
    target = tmp_path / "library.zip"

    output = run("library_export", str(target))

    assert target.read_bytes() == export_zip()
    assert f"5 fragment variants to {target}" in output


@pytest.mark.usefixtures("library")
@pytest.mark.parametrize("create", [False, True], ids=["new", "empty"])
def test_library_export_writes_a_folder(tmp_path: Path, create: bool) -> None:
    target = tmp_path / "out" / "library"
    if create:
        target.mkdir(parents=True)

    run("library_export", str(target))

    written = {
        str(path.relative_to(target)): path.read_bytes()
        for path in target.rglob("*")
        if path.is_file()
    }
    assert written == export_files()


def test_library_export_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")

    with pytest.raises(CommandError, match="is not empty"):
        run("library_export", str(tmp_path))
    assert [path.name for path in tmp_path.iterdir()] == ["keep.txt"]


def test_library_export_refuses_an_existing_zip_file(tmp_path: Path) -> None:
    target = tmp_path / "library.zip"
    target.write_bytes(b"mine")

    with pytest.raises(CommandError, match="exists"):
        run("library_export", str(target))
    assert target.read_bytes() == b"mine"


def test_library_export_never_writes_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "victim").write_bytes(b"mine")
    (tmp_path / "library.zip").symlink_to(tmp_path / "victim")

    with pytest.raises(CommandError, match="exists"):
        run("library_export", str(tmp_path / "library.zip"))
    assert (tmp_path / "victim").read_bytes() == b"mine"


def test_library_export_refuses_a_file_as_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")

    with pytest.raises(CommandError, match="not a folder"):
        run("library_export", str(tmp_path / "file"))


# --- library_import ---------------------------------------------------------------------


def test_library_import_from_a_folder_reports_each_file(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts", {**LLXPRT, "README": "x"})

    output = run("library_import", str(top))

    lines = output.splitlines()
    assert lines[0].split()[:2] == ["ignored", "README"]
    assert [line.split()[:2] for line in lines[1:-1]] == [
        ["created", path] for path in sorted(LLXPRT)
    ]
    assert lines[-1] == "Imported: 5 created, 1 ignored."
    assert variant_current("core", "openai", "gpt-5") is not None


def test_library_import_lists_archive_path_and_what_it_becomes(tmp_path: Path) -> None:
    path = "providers/gemini/models/gemini-2.5-flash/core.md"
    top = llxprt_folder(tmp_path / "prompts", {path: "Gemini."}, None)

    output = run("library_import", "--dry-run", str(top))

    assert output.splitlines()[0] == (
        f"created    {path} → core · gemini / gemini-2-5-flash  "
        "fragment core, variant for gemini / gemini-2-5-flash: new, version 1."
    )


def test_library_import_from_a_zip_file(tmp_path: Path) -> None:
    (tmp_path / "library.zip").write_bytes(zip_of())

    output = run("library_import", str(tmp_path / "library.zip"))

    assert output.splitlines()[-1] == "Imported: 5 created."
    assert versions() == (5, 0)


@pytest.mark.usefixtures("library")
def test_library_import_of_an_export_changes_nothing(tmp_path: Path) -> None:
    run("library_export", str(tmp_path / "library.zip"))
    before = versions()

    output = run("library_import", str(tmp_path / "library.zip"))

    assert output.splitlines()[-1] == "Imported: 6 unchanged."
    assert versions() == before


def test_library_import_dry_run_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "library.zip").write_bytes(zip_of())

    output = run("library_import", str(tmp_path / "library.zip"), "--dry-run")

    assert output.splitlines()[-1] == "Dry run, nothing was written: 5 would be created."
    assert versions() == (0, 0)


def test_library_import_refusal_exits_1_and_lists_the_files(tmp_path: Path) -> None:
    data = zip_of(members=[(symlink_member("env/x.md", "/etc/passwd"), "/etc/passwd")])
    (tmp_path / "library.zip").write_bytes(data)
    out = io.StringIO()

    with pytest.raises(CommandError) as raised:
        call_command("library_import", str(tmp_path / "library.zip"), stdout=out)

    assert raised.value.returncode == 1
    assert "Refused: nothing was imported (5 would be created, 1 refused)" in str(raised.value)
    assert "refused    env/x.md  a symbolic link" in out.getvalue()
    assert versions() == (0, 0)


def test_library_import_refusal_sets_the_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    top = llxprt_folder(tmp_path / "prompts", {**LLXPRT, "Bad.md": "x"})
    # manage.py closes every connection when a command ends: keep the test's open.
    monkeypatch.setattr(connections, "close_all", lambda: None)

    with pytest.raises(SystemExit) as exited:
        execute_from_command_line(["manage.py", "library_import", str(top)])

    assert exited.value.code == 1
    captured = capsys.readouterr()
    assert "refused    Bad.md" in captured.out
    assert "Refused: nothing was imported" in captured.err
    assert versions() == (0, 0)


def test_library_import_refuses_a_corrupt_zip_file(tmp_path: Path) -> None:
    (tmp_path / "library.zip").write_bytes(b"PK\x03\x04 not really")

    with pytest.raises(CommandError, match="1 refused"):
        run("library_import", str(tmp_path / "library.zip"))


def test_library_import_of_a_missing_path_fails(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot be read"):
        run("library_import", str(tmp_path / "missing.zip"))


def test_library_export_zip_reads_back_as_a_zip(tmp_path: Path) -> None:
    run("library_export", str(tmp_path / "library.zip"))

    with zipfile.ZipFile(tmp_path / "library.zip") as archive:
        assert archive.namelist() == ["sysprompt.json", "system-prompt.md"]

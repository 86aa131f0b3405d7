"""Exporting the real database, and round trips through export and import."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from sysprompt.conf import DEFAULT_TEMPLATE
from sysprompt.library.services import variant_delete, variant_save
from sysprompt.prompts.services import template_save
from sysprompt.transfer.services import (
    ExportImpossible,
    export_files,
    export_zip,
    library_import,
    read_directory,
    read_zip,
)
from sysprompt.transfer.writers import write_directory
from tests.transfer.support import LLXPRT, SETTINGS, actions, llxprt_folder, versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def library(tmp_path: Path, author: User) -> None:
    """The llxprt folder imported, and a saved root template with compress on."""
    report = library_import(
        archive=read_directory(llxprt_folder(tmp_path / "prompts")), dry_run=False, author=author
    )
    assert report.applied
    template_save(text="Root [fragment:core]\n", compress=True, author=author)


def test_export_files_of_an_empty_library_is_the_default_root() -> None:
    files = export_files()

    assert files == {
        "system-prompt.md": DEFAULT_TEMPLATE.encode(),
        "sysprompt.json": b'{\n  "files": {}\n}\n',
    }


@pytest.mark.usefixtures("library")
def test_export_files_holds_every_variant_byte_for_byte() -> None:
    files = export_files()

    assert {path: files[path].decode() for path in LLXPRT} == LLXPRT
    assert files["system-prompt.md"] == b"Root [fragment:core]\n"
    assert set(files) == {*LLXPRT, "system-prompt.md", "sysprompt.json"}


@pytest.mark.usefixtures("library")
def test_export_files_writes_the_settings() -> None:
    settings = json.loads(export_files()["sysprompt.json"])

    assert settings == {
        "files": {**SETTINGS["files"], "system-prompt.md": {"compress": True}},
    }


@pytest.mark.usefixtures("library")
def test_export_files_leaves_out_deleted_variants(author: User) -> None:
    variant_delete(name="core", provider="anthropic", author=author)

    files = export_files()

    assert "providers/anthropic/core.md" not in files
    assert "core.md" in files


@pytest.mark.usefixtures("library")
def test_export_files_takes_the_newest_version() -> None:
    variant_save(name="core", text="Second core.", author=None)

    assert export_files()["core.md"] == b"Second core."


@pytest.mark.parametrize("name", ["system-prompt", "providers/acme/core"])
def test_export_files_refuses_a_name_the_layout_cannot_hold(name: str) -> None:
    variant_save(name=name, text="x", author=None)

    with pytest.raises(ExportImpossible, match="cannot be exported"):
        export_files()


@pytest.mark.usefixtures("library")
def test_export_zip_is_deterministic() -> None:
    first = export_zip()

    assert export_zip() == first
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        names = archive.namelist()
        assert names == sorted(names)
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {path: archive.read(path) for path in names} == export_files()


@pytest.mark.usefixtures("library")
def test_export_then_import_is_a_no_op() -> None:
    before = versions()

    report = library_import(archive=read_zip(export_zip()), dry_run=False, author=None)

    assert report.applied is True
    assert set(actions(report).values()) == {"unchanged"}
    assert len(report.items) == len(LLXPRT) + 1
    assert versions() == before


@pytest.mark.usefixtures("library")
def test_export_to_a_folder_then_import_is_a_no_op(tmp_path: Path) -> None:
    before = versions()
    write_directory(tmp_path / "export", export_files())

    report = library_import(archive=read_directory(tmp_path / "export"), dry_run=True, author=None)

    assert set(actions(report).values()) == {"unchanged"}
    assert versions() == before


def test_export_import_into_an_empty_database_exports_the_same_bytes(
    tmp_path: Path, author: User
) -> None:
    with transaction.atomic():
        library_import(
            archive=read_directory(llxprt_folder(tmp_path / "prompts")),
            dry_run=False,
            author=author,
        )
        template_save(text="Root\n", compress=True, author=author)
        variant_save(name="tools/grep", text="old", author=author)
        variant_save(name="tools/grep", text="new", strategy="prepend", author=author)
        variant_save(name="env/sandbox", text="gone", author=author)
        variant_delete(name="env/sandbox", author=author)
        exported = export_zip()
        transaction.set_rollback(True)  # back to the empty database
    assert versions() == (0, 0)

    report = library_import(archive=read_zip(exported), dry_run=False, author=None)

    assert report.applied is True
    assert export_zip() == exported

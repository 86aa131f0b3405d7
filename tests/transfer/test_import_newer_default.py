"""An import through the bulk path records the shipped text each variant started from,
as a single save does: an imported edit is flagged only once a newer default ships."""

from __future__ import annotations

import io
import zipfile

import pytest

from sysprompt.library.selectors import VariantState, variant_current
from sysprompt.library.services import library_install
from sysprompt.transfer.readers import read_zip
from sysprompt.transfer.services import library_import
from tests.library.support import record

pytestmark = pytest.mark.django_db

OLD = [record("core", "Old core.")]
NEW = [record("core", "New core.")]


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, text in files.items():
            zipped.writestr(name, text)
    return buffer.getvalue()


def core() -> VariantState:
    state = variant_current("core", None)
    assert state is not None
    return state


def test_import_of_an_edited_default_is_not_flagged_until_a_newer_one_ships() -> None:
    library_install(shipped=OLD)

    library_import(archive=read_zip(archive({"core.md": "Mine."})), dry_run=False, author=None)

    assert core().text == "Mine." and core().edited and not core().newer_default
    library_install(shipped=NEW)
    assert core().newer_default and core().shipped_text == "New core."

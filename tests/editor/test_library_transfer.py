"""Export and Import in the web UI: the zip download, the dry-run report, Apply of the
very bytes reported on (kept in the session), and who may do what."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from sysprompt.editor import transfer
from sysprompt.library import selectors
from tests.editor.library_support import SCRIPT, save


def zip_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return buffer.getvalue()


def upload(client: Client, data: bytes, name: str = "library.zip") -> Any:
    return client.post(
        "/library/-/import", {"archive": SimpleUploadedFile(name, data, "application/zip")}
    )


def test_export_downloads_the_library_zip(author_web: Client) -> None:
    save("env/git", "Git.")

    response = author_web.get("/library/-/export")

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith('attachment; filename="sysprompt-library-')
    data = response.getvalue()  # the streamed chunks, joined
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "env/git.md" in names


def test_export_is_for_authors(viewer_web: Client) -> None:
    save("env/git", "Git.")

    response = viewer_web.get("/library/-/export")
    library = viewer_web.get("/library/").content.decode()

    assert response.status_code == 403
    assert not response.streaming and b"Git." not in response.content
    assert 'id="library-transfer-link"' not in library


def test_import_report_shows_archive_path_and_what_it_becomes(author_web: Client) -> None:
    data = zip_of({"providers/gemini/models/gemini-2.5-flash/core.md": "Gemini."})

    response = upload(author_web, data)

    content = response.content.decode()
    assert "providers/gemini/models/gemini-2.5-flash/core.md" in content
    assert "gemini-2-5-flash/core.md" not in content
    assert "core · gemini / gemini-2-5-flash" in content


def test_import_dry_run_reports_and_changes_nothing(author_web: Client) -> None:
    save("core", "Old core.")
    data = zip_of({"core.md": "New core.", f"{SCRIPT}.md": "bad name", "env/new.md": "N"})

    response = upload(author_web, data)

    content = response.content.decode()
    assert response.status_code == 200
    actions = {item.path: item.action for item in response.context["report"].items}
    assert actions["core.md"] == "changed" and actions["env/new.md"] == "created"
    assert "refused" in actions.values()
    assert SCRIPT not in content
    assert 'id="import-apply"' not in content  # all or nothing: refusals offer no Apply
    assert selectors.variant_current("core").text == "Old core."  # type: ignore[union-attr]


def test_import_apply_imports_the_reported_bytes_once(author_web: Client) -> None:
    dry = upload(author_web, zip_of({"env/new.md": "New.\n"}))
    digest = dry.context["digest"]
    assert 'id="import-apply"' in dry.content.decode()

    applied = author_web.post("/library/-/import/apply", {"digest": digest})
    again = author_web.post("/library/-/import/apply", {"digest": digest}, follow=True)

    assert applied.status_code == 200 and applied.context["report"].applied
    assert selectors.variant_current("env/new").text == "New.\n"  # type: ignore[union-attr]
    assert "upload the zip again" in again.content.decode().lower()
    assert selectors.variant_current("env/new").version == 1  # type: ignore[union-attr]


def test_import_apply_refuses_another_digest(author_web: Client) -> None:
    upload(author_web, zip_of({"env/new.md": "New."}))

    response = author_web.post("/library/-/import/apply", {"digest": "0" * 64}, follow=True)

    assert "upload the zip again" in response.content.decode().lower()
    assert selectors.variant_current("env/new") is None


def test_import_refuses_a_file_over_the_limit(
    author_web: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transfer, "IMPORT_MAX_BYTES", 10)

    response = upload(author_web, zip_of({"env/new.md": "New."}))

    assert response.status_code == 400
    assert "at most 10 bytes" in response.content.decode()


def test_import_reports_what_is_not_a_zip_as_refused(author_web: Client) -> None:
    response = upload(author_web, b"not a zip at all")

    assert response.status_code == 200
    assert [item.action for item in response.context["report"].items] == ["refused"]
    assert 'id="import-refused"' in response.content.decode()


def test_import_is_for_authors(viewer_web: Client) -> None:
    page = viewer_web.get("/library/-/transfer").content.decode()

    assert 'id="export-link"' not in page and 'id="import-archive"' not in page
    assert 'id="export-authors-only"' in page
    assert upload(viewer_web, zip_of({"a.md": "A"})).status_code == 403
    assert viewer_web.post("/library/-/import/apply", {"digest": "0" * 64}).status_code == 403

"""Export, then Import with its dry-run report, then Apply, in a real browser."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.library import selectors, services


def test_export_then_import_dry_run_then_apply(
    author_page: Page, author: User, tmp_path: Path
) -> None:
    services.variant_save(name="env/git", text="Git.\n", author=author)
    services.variant_save(name="core", text="Core.\n", author=author)
    page = author_page

    page.goto("/library/")
    page.locator("#library-transfer-link").click()
    with page.expect_download() as download_info:
        page.locator("#export-link").click()
    exported = tmp_path / "export.zip"
    download_info.value.save_as(exported)
    files = zipfile.ZipFile(exported).namelist()
    assert {"env/git.md", "core.md", "system-prompt.md"} <= set(files)

    # change one file, add one, keep the rest
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(exported) as source, zipfile.ZipFile(edited, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            target.writestr(name, b"Git, imported.\n" if name == "env/git.md" else data)
        target.writestr("env/docker.md", "Docker.\n")
    page.locator("#import-archive").set_input_files(str(edited))
    page.locator("#import-dry-run").click()

    report = page.locator("#import-report")
    expect(report.locator("tr.import-changed th")).to_have_text(["env/git.md"])
    expect(report.locator("tr.import-created th")).to_have_text(["env/docker.md"])
    expect(report.locator("tr.import-unchanged")).not_to_have_count(0)
    expect(page.locator("#import-report-title")).to_contain_text("Dry run")
    assert selectors.variant_current("env/docker") is None  # nothing yet

    page.locator("#import-apply").click()
    page.locator("#confirm-accept").click()  # the page's own confirm dialog
    expect(page.locator("#import-report-title")).to_contain_text("Imported")
    expect(page.locator(".message-success")).to_contain_text("edited.zip")
    docker = selectors.variant_current("env/docker")
    git = selectors.variant_current("env/git")
    assert docker is not None and docker.text == "Docker.\n" and docker.source == "import"
    assert git is not None and git.text == "Git, imported.\n"


def test_import_refused_file_offers_no_apply(author_page: Page, tmp_path: Path) -> None:
    archive = tmp_path / "bad.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        target.writestr("Bad Name.md", "x")
        target.writestr("ok.md", "fine")
    archive.write_bytes(buffer.getvalue())
    page = author_page

    page.goto("/library/-/transfer")
    page.locator("#import-archive").set_input_files(str(archive))
    page.locator("#import-dry-run").click()

    expect(page.locator("#import-report tr.import-refused")).to_contain_text("Bad Name.md")
    expect(page.locator("#import-refused")).to_be_visible()
    expect(page.locator("#import-apply")).to_have_count(0)
    assert selectors.variant_current("ok") is None

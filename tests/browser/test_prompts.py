"""Browser tests: the Prompts page (New, search, Rename, Duplicate, Archive; the folder
tree with counts), the header's switcher (absent while only ``default`` exists), and a
prompt's own editor under ``/editor/p/<name>/-/`` saving to that prompt; no console
error and no CSP violation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import get_resolver
from playwright.sync_api import expect

from sysprompt.prompts.catalog_services import prompt_create
from sysprompt.prompts.models import Prompt, PromptAlias, TemplateVersion
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)


@pytest.fixture(autouse=True)
def urls_loaded() -> None:
    """The URLconf imported before the first page (the live server shares this process):
    its imports (the model SDKs) take seconds on a loaded machine, beyond a page's
    timeout."""
    assert get_resolver().url_patterns


def test_prompts_page_new_search_rename_archive_and_switch(
    watched: Watched,  # noqa: F811
    author: User,
    project: Path,
) -> None:
    page, watch = watched(author)
    page.goto("/")
    expect(page.locator("#prompt-switcher")).to_have_count(0)  # only default: as before
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Prompts").click()
    expect(page.locator('#prompt-rows tr[data-prompt="default"]')).to_be_visible()

    page.get_by_label("Name", exact=True).fill("support/triage")
    page.get_by_label("Description", exact=True).fill("Sorts tickets.")
    page.get_by_label("Tags", exact=True).fill("support, tier-1")
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(re.compile(r"/editor/p/support/triage/-/$"))
    expect(page.locator("#prompt-name")).to_have_text("support/triage")
    expect(page.locator("#prompt-switcher")).to_be_visible()
    expect(page.locator("#prompt-switch")).to_have_value("support/triage")

    page.locator("#prompt-switch").select_option("default")
    page.locator("#prompt-switch-go").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("h1")).to_have_text("System prompt template")

    page.goto("/prompts/")
    expect(page.locator('#prompt-folders li[data-folder="support/"] .count')).to_have_text("1")
    page.get_by_label("Search names, descriptions and tags").fill("tickets")
    expect(page.locator("#prompt-rows tr[data-prompt]")).to_have_count(1)
    row = page.locator('#prompt-rows tr[data-prompt="support/triage"]')
    expect(row).to_contain_text("Sorts tickets.")
    expect(row).to_contain_text("production → latest")

    row.locator("summary").click()
    row.locator('form[data-action="rename"] input[name="name"]').fill("support/sorter")
    row.locator('form[data-action="rename"]').get_by_role("button", name="Rename").click()
    expect(page.locator(".messages")).to_contain_text("renamed to support/sorter")
    assert PromptAlias.objects.filter(name="support/triage", prompt__name="support/sorter").exists()

    row = page.locator('#prompt-rows tr[data-prompt="support/sorter"]')
    row.locator("summary").click()
    row.locator('form[data-action="duplicate"] input[name="name"]').fill("support/copy")
    row.locator('form[data-action="duplicate"]').get_by_role("button", name="Duplicate").click()
    expect(page.locator(".messages")).to_contain_text("duplicated as support/copy")

    row = page.locator('#prompt-rows tr[data-prompt="support/copy"]')
    row.locator("summary").click()
    row.get_by_role("button", name="Archive").click()
    expect(page.locator(".messages")).to_contain_text("archived")
    expect(page.locator('#prompt-rows tr[data-prompt="support/copy"]')).to_have_count(0)
    assert Prompt.objects.get(name="support/copy").archived
    watch.assert_clean(page)


def test_scoped_editor_saves_to_its_prompt(
    watched: Watched,  # noqa: F811
    author: User,
    project: Path,
) -> None:
    prompt_create(name="coding/reviewer", template="Review the diff.", author=author)
    page, watch = watched(author)
    page.goto("/editor/p/coding/reviewer/-/")
    expect(page.locator(".template-excerpt")).to_contain_text("Review the diff.")
    page.locator("#open-editor").click()
    expect(page.locator("#editor-modal")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/editor$"))
    page.locator("#template-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Review the diff carefully.")
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_contain_text("Saved")

    texts = list(
        TemplateVersion.objects.filter(prompt__name="coding/reviewer")
        .order_by("number")
        .values_list("text", flat=True)
    )
    assert texts == ["Review the diff.", "Review the diff carefully."]
    assert not TemplateVersion.objects.filter(prompt__name="default").exists()
    page.locator("#tab-history").click()
    expect(page.locator("#side-history")).to_contain_text("v")
    watch.assert_clean(page)

"""Browser tests: the Prompts page (New, search, Rename, Duplicate, Archive; the folder
tree with counts), the header's switcher (absent while only ``default`` exists, keeping
the section when it is used), a prompt's own editor under ``/editor/p/<name>/-/`` saving
to that prompt, and its Releases, Evaluations and Conversations pages writing to it; no
console error and no CSP violation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import get_resolver
from playwright.sync_api import expect

from sysprompt.evaluations.models import Suite
from sysprompt.prompts.catalog_services import prompt_create
from sysprompt.prompts.models import Prompt, PromptAlias, TemplateVersion
from sysprompt.releases.models import Release
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


def test_scoped_pages_follow_the_switcher_and_write_to_their_prompt(
    watched: Watched,  # noqa: F811
    author: User,
    project: Path,
) -> None:
    prompt_create(name="coding/reviewer", template="Review the diff.", author=author)
    author.user_permissions.add(Permission.objects.get(codename="view_conversationprompt"))
    page, watch = watched(author)
    page.goto("/releases/")
    expect(page.locator("#releases-prompt")).to_have_count(0)  # default's, as before

    page.locator("#prompt-switch").select_option("coding/reviewer")
    page.locator("#prompt-switch-go").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/releases/$"))
    expect(page.locator("#releases-prompt")).to_have_text("coding/reviewer")
    page.locator("#create-release").get_by_label("Message").fill("First review rules")
    page.locator("#create-release").get_by_role("button", name="Create release").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/releases/"))
    expect(page.locator('#release-rows tr[data-release="1"]')).to_contain_text("First review rules")
    assert list(Release.objects.values_list("prompt__name", "number")) == [("coding/reviewer", 1)]

    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Evaluations").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/evaluations/$"))
    page.locator("#suite-name").fill("diff-review")
    page.locator("#suite-create").get_by_role("button", name="Create suite").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/evaluations/suites/"))
    assert list(Suite.objects.values_list("prompt__name", "name")) == [
        ("coding/reviewer", "diff-review")
    ]

    nav.get_by_role("link", name="Conversations").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/conversations/$"))
    expect(page.locator("#prompt-name")).to_have_text("coding/reviewer")
    nav.get_by_role("link", name="Template").click()
    expect(page).to_have_url(re.compile(r"/editor/p/coding/reviewer/-/$"))
    page.locator("#prompt-switch").select_option("default")
    page.locator("#prompt-switch-go").click()
    expect(page).to_have_url(re.compile(r"/$"))
    watch.assert_clean(page)

"""A shipped default and a person's edit, in a real browser: an edit saved in the
editor raises no "newer default" (nothing newer shipped); a later release does, and
the variant's page shows the diff from your text to the new one, then Adopt default or
Keep mine."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.library import selectors, services
from sysprompt_core.library import TreeRecord

NEWER = "You are a coding agent, as shipped by a newer release.\n"


def edit_core_in_the_editor(page: Page) -> None:
    page.goto("/library/core/-/edit")
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    page.evaluate("() => window.syspromptEditor.editor.setText('My own core.\\n')")
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 2.")
    page.locator("#close-editor").click()
    expect(page).to_have_url(re.compile(r"/library/core$"))


def test_an_edit_with_nothing_newer_shipped_is_not_flagged(author_page: Page, author: User) -> None:
    services.library_install()
    page = author_page

    edit_core_in_the_editor(page)

    expect(page.locator("#variant-flags .badge-edited")).to_be_visible()
    expect(page.locator("#variant-flags .badge-newer")).to_have_count(0)
    expect(page.locator("#newer-default")).to_have_count(0)
    page.goto("/library/")
    row = page.locator('.tree-node[data-name="core"] .variant-row').first
    expect(row.locator(".badge-edited")).to_be_visible()
    expect(row.locator(".badge-newer")).to_have_count(0)


@pytest.mark.parametrize("choice", ["adopt", "keep"])
def test_newer_default_adopt_or_keep_mine(author_page: Page, author: User, choice: str) -> None:
    services.library_install()
    page = author_page
    edit_core_in_the_editor(page)
    services.library_install(shipped=[TreeRecord("core", None, None, NEWER)])

    page.goto("/library/")
    row = page.locator('.tree-node[data-name="core"] .variant-row').first
    expect(row.locator(".badge-newer")).to_be_visible()
    row.get_by_role("link").click()
    card = page.locator("#newer-default")
    expect(card).to_be_visible()
    expect(card.locator("tr.diff-delete")).to_contain_text("My own core.")
    expect(card.locator("tr.diff-insert")).to_contain_text("as shipped by a newer release")
    page.locator("#adopt-default" if choice == "adopt" else "#keep-mine").click()

    expect(page.locator(".message-success")).to_be_visible()
    expect(page.locator("#newer-default")).to_have_count(0)
    state = selectors.variant_current("core")
    assert state is not None and not state.newer_default
    if choice == "adopt":
        assert state.text == NEWER and state.version == 3
    else:
        assert state.text == "My own core.\n" and state.pinned
        expect(page.locator("#variant-flags .badge-pinned")).to_be_visible()

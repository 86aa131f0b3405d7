"""A variant whose shipped default changed under a person's edit, in a real browser:
the diff shipped-vs-yours, then Adopt default or Keep mine."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.library import selectors, services


@pytest.mark.parametrize("choice", ["adopt", "keep"])
def test_newer_default_adopt_or_keep_mine(author_page: Page, author: User, choice: str) -> None:
    services.library_install()
    shipped = selectors.variant_current("core")
    assert shipped is not None
    services.variant_save(name="core", text="My own core.\n", author=author)
    page = author_page

    page.goto("/library/")
    row = page.locator('.tree-node[data-name="core"] .variant-row').first
    expect(row.locator(".badge-newer")).to_be_visible()
    row.get_by_role("link").click()
    card = page.locator("#newer-default")
    expect(card).to_be_visible()
    expect(card.locator("tr.diff-delete")).to_contain_text("My own core.")
    page.locator("#adopt-default" if choice == "adopt" else "#keep-mine").click()

    expect(page.locator(".message-success")).to_be_visible()
    expect(page.locator("#newer-default")).to_have_count(0)
    state = selectors.variant_current("core")
    assert state is not None and not state.newer_default
    if choice == "adopt":
        assert state.text == shipped.text and state.version == 3
    else:
        assert state.text == "My own core.\n" and state.pinned
        expect(page.locator("#variant-flags .badge-pinned")).to_be_visible()

"""Editing a fragment's variant in the editor, in a real browser: save with settings,
a new variant, history with diff and restore, and a conflict (Keep mine, Take theirs).
What the database holds afterwards is read through the library's selectors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import cast

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.library import selectors, services
from tests.browser.conftest import PageErrors


@pytest.fixture(autouse=True)
def no_browser_dialogs(dialogs: list[str]) -> Iterator[None]:
    yield
    assert dialogs == []


def open_variant(page: Page, path: str) -> None:
    page.goto(path)
    expect(page.locator("#editor-modal")).to_be_visible()
    page.wait_for_function("() => window.syspromptEditor !== undefined")


def text_of(page: Page) -> str:
    return cast(str, page.evaluate("() => window.syspromptEditor.editor.getText()"))


def set_text(page: Page, text: str) -> None:
    page.evaluate("(text) => window.syspromptEditor.editor.setText(text)", text)


def current(name: str, provider: str | None = None) -> selectors.VariantState:
    state = selectors.variant_current(name, provider)
    assert state is not None
    return state


def test_variant_edit_and_save_with_settings(author_page: Page, author: User) -> None:
    services.variant_save(name="env/git", text="Git.\n", author=author)
    page = author_page

    page.goto("/library/env/git")
    page.locator("#open-editor").click()
    expect(page).to_have_url(re.compile(r"/library/env/git/-/edit$"))
    expect(page.locator("#editor-title")).to_contain_text("env/git (default)")
    set_text(page, "Git repo [var:repo].\r\n")
    page.locator("#tab-settings").click()
    page.locator("#setting-strategy").select_option("prepend")
    page.locator("#setting-defaults").fill("repo=demo")
    expect(page.locator("#dirty-marker")).to_be_visible()
    page.keyboard.press("ControlOrMeta+s")

    expect(page.locator("#save-status")).to_have_text("Saved as version 2.")
    expect(page.locator("#editor-version")).to_have_text("v2")
    expect(page.locator("#dirty-marker")).to_be_hidden()
    state = current("env/git")
    assert (state.text, state.strategy, dict(state.defaults)) == (
        "Git repo [var:repo].\r\n",
        "prepend",
        {"repo": "demo"},
    )
    page.locator("#close-editor").click()
    expect(page).to_have_url(re.compile(r"/library/env/git$"))
    expect(page.locator("#overview-version")).to_contain_text("version 2")


def test_new_variant_is_created_by_saving(author_page: Page, author: User) -> None:
    services.variant_save(name="core", text="Default core.", author=author)
    page = author_page

    page.goto("/library/core")
    page.locator("#variant-new-provider").fill("OpenAI")
    page.locator("#new-variant").click()
    expect(page).to_have_url(re.compile(r"/library/core/-/edit\?provider=openai$"))
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    expect(page.locator("#editor-version")).to_have_text("new")
    assert text_of(page) == "Default core."
    assert selectors.variant_current("core", "openai") is None
    set_text(page, "Core for OpenAI.")
    page.locator("#save-button").click()

    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    assert current("core", "openai").text == "Core for OpenAI."


def test_variant_history_diff_and_restore(author_page: Page, author: User) -> None:
    for text in ("one\nshared\n", "two\nshared\n", "three\nshared\n"):
        services.variant_save(
            name="core",
            provider="anthropic",
            text=text,
            author=author,
            compress=text == "one\nshared\n",
        )
    page = author_page

    open_variant(page, "/library/core/-/edit?provider=anthropic")
    page.locator("#tab-history").click()
    items = page.locator(".history-item")
    expect(items).to_have_count(3)
    page.get_by_label("Compare from v1").check()
    page.get_by_label("to v3").check()
    page.get_by_role("button", name="Compare").click()
    diff = page.locator("#history-diff")
    expect(diff.locator("h3")).to_have_text("Version 1 → version 3")
    expect(diff.locator("tr.diff-insert .diff-text")).to_have_text(["added: three"])
    items.filter(has_text="v2").get_by_role("button", name="Diff with editor").click()
    expect(diff.locator("h3")).to_have_text("Version 2 → the editor's text")

    items.filter(has_text="v1").get_by_role("button", name="Restore").click()
    expect(page.locator("#save-status")).to_contain_text("Version 1 restored")
    assert text_of(page) == "one\nshared\n"
    page.locator("#tab-settings").click()
    expect(page.locator("#setting-compress")).to_be_checked()  # its settings came too
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 4.")
    state = current("core", "anthropic")
    assert (state.text, state.compress) == ("one\nshared\n", True)


@pytest.mark.parametrize("choice", ["keep", "take"])
def test_variant_conflict_keep_mine_or_take_theirs(
    author_page: Page, author: User, choice: str, page_errors: PageErrors
) -> None:
    services.variant_save(name="core", text="Base.\n", author=author)
    page = author_page
    open_variant(page, "/library/core/-/edit")
    services.variant_save(name="core", text="Theirs.\n", strategy="prepend", author=None)

    set_text(page, "Mine.\n")
    page.locator("#save-button").click()
    dialog = page.locator("#conflict-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("saved version 2")
    expect(dialog.locator("tr.diff-insert")).to_contain_text("Mine.")
    page_errors.take("status of 412 (Precondition Failed)", 1)

    if choice == "keep":
        page.locator("#conflict-keep-mine").click()
        expect(page.locator("#save-status")).to_have_text("Saved as version 3.")
        assert current("core").text == "Mine.\n"
    else:
        page.locator("#conflict-take-theirs").click()
        expect(dialog).to_be_hidden()
        assert text_of(page) == "Theirs.\n"
        expect(page.locator("#dirty-marker")).to_be_hidden()
        page.locator("#tab-settings").click()
        expect(page.locator("#setting-strategy")).to_have_value("prepend")
        assert current("core").version == 2


def test_variant_delete_and_restore(author_page: Page, author: User) -> None:
    services.variant_save(name="env/docker", text="Docker.", author=author)
    page = author_page

    page.goto("/library/env/docker")
    page.locator("#delete-variant").click()
    page.locator("#confirm-accept").click()
    expect(page.locator("#variant-deleted")).to_be_visible()
    assert current("env/docker").deleted
    page.locator("#restore-variant").click()

    expect(page.locator(".message-success")).to_contain_text("Restored version 1")
    state = current("env/docker")
    assert (state.deleted, state.text, state.version) == (False, "Docker.", 3)

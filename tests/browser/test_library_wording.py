"""What a person sees, in a real browser: the strategy field of a text override and of
a preset (only the chosen kind's shows, and a text's offers no "preset's own"); one
History control in the editor; a provider variant's installer version."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect

from sysprompt.accounts import services as accounts
from sysprompt.library import selectors, services
from sysprompt_core.library import TreeRecord
from tests.browser.conftest import LoginAs, make_user


@pytest.fixture
def manager(transactional_db: None, project: Path) -> User:
    user = make_user("grace")
    user.user_permissions.add(Permission.objects.get(codename="add_token"))
    # build-01 is on production, which is protected: its override is a publisher's
    user.user_permissions.add(Permission.objects.get(codename="publish_release"))
    return user


def test_override_strategy_follows_the_chosen_kind(login_as: LoginAs, manager: User) -> None:
    accounts.agent_host_ensure(name="build-01")
    page: Page = login_as(manager)

    page.goto("/agent-hosts/")
    details = page.locator('.host-override[data-host="build-01"]')
    details.locator("summary").click()
    details.get_by_label("Text", exact=True).check()
    expect(details.get_by_role("combobox", name="Strategy")).to_have_count(1)  # one shows
    strategy = details.locator("select[name=text_strategy]")
    expect(strategy).to_be_visible()
    expect(strategy.locator("option")).to_have_text(
        ["append (after the template)", "prepend (before the template)"]
    )
    details.get_by_label("Text to add").fill("Be brief.")
    strategy.select_option("prepend")
    details.get_by_label("Preset", exact=True).check()
    expect(strategy).to_be_hidden()
    preset_strategy = details.get_by_role("combobox", name="Strategy")
    expect(preset_strategy).to_have_attribute("name", "preset_strategy")
    expect(preset_strategy.locator("option").first).to_have_text("the preset's own (else append)")
    details.get_by_label("Text", exact=True).check()
    details.get_by_role("button", name="Save override").click()

    expect(page.locator('.host-override[data-host="build-01"] .override-summary')).to_have_text(
        "text, prepend: Be brief."
    )
    assert selectors.host_override_state("build-01").override == {
        "content": "Be brief.",
        "strategy": "prepend",
    }


def test_editor_has_one_history_control(author_page: Page, author: User) -> None:
    services.library_install(shipped=[TreeRecord("core", "anthropic", None, "For Claude.\n")])
    page = author_page

    page.goto("/library/core?provider=anthropic")
    expect(page.locator("#overview-version")).to_contain_text("(the shipped default)")
    expect(page.locator("#overview-version")).not_to_contain_text("(default)")
    page.locator("#open-editor").click()
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    history = page.get_by_role("button", name="History").or_(
        page.get_by_role("tab", name="History")
    )
    expect(history).to_have_count(1)
    history.click()
    expect(page.locator(".history-item .badge-source")).to_have_text("shipped default")

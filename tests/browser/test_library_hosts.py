"""An agent host's instance override on the Agent hosts page, in a real browser: a
preset with variables, a refusal shown inline, and the override in effect."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect

from sysprompt.accounts import services as accounts
from sysprompt.library import selectors, services
from tests.browser.conftest import LoginAs, PageErrors, make_user


@pytest.fixture
def manager(transactional_db: None, project: Path) -> User:
    user = make_user("grace")
    user.user_permissions.add(Permission.objects.get(codename="add_token"))
    return user


def test_host_instance_override_preset_and_refusal(
    login_as: LoginAs, manager: User, page_errors: PageErrors
) -> None:
    accounts.agent_host_ensure(name="build-01")
    services.variant_save(name="presets/review", text="Review [var:area].", author=manager)
    page: Page = login_as(manager)

    page.goto("/agent-hosts/")
    details = page.locator('.host-override[data-host="build-01"]')
    expect(details.locator(".override-summary")).to_have_text("none")
    details.locator("summary").click()
    expect(details.locator(".override-preset")).to_be_hidden()  # "No override" is chosen
    details.get_by_label("Preset", exact=True).check()
    expect(details.locator(".override-text")).to_be_hidden()
    details.get_by_label("Preset (a fragment)").fill("presets/nope")
    details.get_by_role("button", name="Save override").click()

    details = page.locator('.host-override[data-host="build-01"]')
    expect(details.locator(".override-error")).to_be_visible()
    expect(details.get_by_label("Preset (a fragment)")).to_have_value("presets/nope")
    assert selectors.host_override_state("build-01").override is None
    page_errors.take("status of 400 (Bad Request)", 1)  # the refusal's answer

    details.get_by_label("Preset (a fragment)").fill("presets/review")
    details.get_by_label("Preset variables (one key=value per line)").fill("area=tests")
    details.locator("select[name=preset_strategy]").select_option("prepend")
    details.get_by_role("button", name="Save override").click()

    expect(page.locator(".message-success")).to_contain_text("Instance override of build-01 saved")
    expect(page.locator('.host-override[data-host="build-01"] .override-summary')).to_have_text(
        "preset presets/review, prepend"
    )
    assert selectors.host_override_state("build-01").override == {
        "preset": "presets/review",
        "variables": {"area": "tests"},
        "strategy": "prepend",
    }

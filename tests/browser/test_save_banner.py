"""Browser tests: the save banner of the template editor flips from "ships" to "draft"
once production points at a release, and an agent host's label is set, refused and
cleared on the Agent hosts page; no console error, no CSP violation."""

from __future__ import annotations

from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services as prompts
from sysprompt.releases import selectors
from sysprompt.releases import services as releases
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)


def grant(user: User, *codenames: str) -> User:
    for codename in codenames:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return User.objects.get(pk=user.pk)


def test_save_banner_flips_to_draft_when_production_serves_a_release(
    watched: Watched,  # noqa: F811
    author: User,
) -> None:
    publisher = grant(author, "publish_release")
    prompts.template_save(text="Version one.\n", author=publisher)
    page, watch = watched(publisher)

    page.goto("/")
    banner = page.locator("main .save-banner")
    expect(banner).to_have_attribute("data-save-banner", "ships")
    expect(banner).to_contain_text("Saving ships: production follows the working copy")

    release = releases.release_create(author=publisher).release.number
    releases.label_set(name="production", target={"release": release}, author=publisher)
    page.reload()

    expect(banner).to_have_attribute("data-save-banner", "draft")
    expect(banner).to_contain_text(
        f"Saving edits a draft: production serves release {release}. To ship, publish on the "
        "Releases page."
    )
    page.locator("#open-editor").click()
    in_editor = page.locator("#editor-modal .save-banner")
    expect(in_editor).to_be_visible()
    expect(in_editor).to_contain_text(f"production serves release {release}")
    watch.assert_clean(page)


def test_host_label_form_sets_refuses_and_clears(
    watched: Watched,  # noqa: F811
    author: User,
) -> None:
    # production is protected: moving a host off it, or back, is a publisher's
    manager = grant(author, "add_token", "publish_release")
    accounts.agent_host_ensure(name="build-01")
    releases.label_set(name="staging", target="latest", author=manager)
    page, watch = watched(manager)

    page.goto("/agent-hosts/")
    cell = page.locator('tr[data-host="build-01"] td.host-label')
    expect(cell.locator(".host-label-current")).to_have_text("production (default)")
    cell.get_by_label("Label of build-01").fill("staging")
    cell.get_by_role("button", name="Set label").click()

    expect(page.locator(".message-success")).to_contain_text("Label of build-01 set to staging")
    expect(cell.locator(".host-label-current")).to_have_text("staging")
    assert selectors.host_label_state("build-01").label == "staging"

    watch.assert_clean(page)

    cell.get_by_label("Label of build-01").fill("No Such Label")
    cell.get_by_role("button", name="Set label").click()
    expect(cell.locator(".host-label-error")).to_contain_text("is not a label name")
    expect(cell.locator(".host-label-current")).to_have_text("staging")
    # The refusal's page is answered 400, which the browser reports: that, and nothing else.
    assert [error.split(": ", 1)[1] for error in watch.errors] == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]
    watch.errors.clear()

    cell.get_by_role("button", name="Use production").click()
    expect(cell.locator(".host-label-current")).to_have_text("production (default)")
    assert selectors.host_label_state("build-01").label is None
    watch.assert_clean(page)

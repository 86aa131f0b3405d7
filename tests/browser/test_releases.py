"""Browser tests: the Releases page — labels with a split drawn as a bar, what the
working copy changes since production, Create release, Publish with the impact report
first and then the confirm, a label set to a split then rolled back, test contexts
created and deleted; no CSP violation or console error on any of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from sysprompt.library import services as library
from sysprompt.prompts.services import template_save
from sysprompt.releases import selectors, services
from tests.browser.conftest import LoginAs, PageErrors, make_user
from tests.browser.test_csp import Watch, Watched, watched  # noqa: F401  (the fixture)


def refused_as_expected(watch: Watch, count: int) -> None:
    """The browser logs each 400 answer to a refused form as a console error: exactly
    the ``count`` the test caused are taken out, anything else still fails the test."""
    refused = [error for error in watch.errors if "status of 400 (Bad Request)" in error]
    assert len(refused) == count
    watch.errors = [error for error in watch.errors if error not in refused]


@pytest.fixture
def released(author: User) -> int:
    """production → latest as installed, the working copy released once (release 1)."""
    services.production_ensure()
    template_save(text="Root.\n[fragment:core]", author=author)
    library.variant_save(name="core", text="Core v1.", author=author)
    return services.release_create(message="first", author=author).release.number


@pytest.fixture
def publisher(author: User) -> User:
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    return User.objects.get(pk=author.pk)


def test_labels_split_bar_and_working_copy_diff(
    watched: Watched,  # noqa: F811
    publisher: User,
    released: int,
) -> None:
    services.label_set(name="production", target={"release": released}, author=publisher)
    services.label_set(
        name="canary",
        target={
            "split": [{"release": released, "weight": 8000}, {"release": "latest", "weight": 2000}]
        },
        author=publisher,
    )
    library.variant_save(name="core", text="Core v2 <b>bold</b>.", author=publisher)
    page, watch = watched(publisher)

    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Releases").click()
    canary = page.locator('tr[data-label="canary"]')
    expect(canary.locator("svg.split-bar rect")).to_have_count(2)
    bar = canary.locator("svg.split-bar").bounding_box()
    first = canary.locator("rect.split-arm-0").bounding_box()
    assert bar is not None and first is not None
    assert abs(first["width"] / bar["width"] - 0.8) < 0.02  # drawn to its weight
    expect(canary.locator(".split-legend")).to_contain_text("release 1 80%")
    expect(canary.locator(".split-legend")).to_contain_text("latest 20%")
    expect(page.locator('tr[data-label="production"]')).to_contain_text("protected")

    working = page.locator("#working-copy")
    expect(working).to_contain_text("release 1 → working copy")
    expect(working.locator(".udiff-delete")).to_have_text("-Core v1.")
    expect(working.locator(".udiff-insert")).to_have_text("+Core v2 <b>bold</b>.")
    watch.assert_clean(page)


def test_create_release_then_compare(
    watched: Watched,  # noqa: F811
    author: User,
    released: int,
) -> None:
    page, watch = watched(author)
    page.goto("/releases/")
    expect(page.locator("#ships-directly")).to_be_visible()  # production → latest
    library.variant_save(name="core", text="Core v2.", author=author)

    page.get_by_label("Message").first.fill("second")
    page.get_by_role("button", name="Create release").click()

    expect(page.locator(".messages")).to_contain_text("Release 2 created.")
    expect(page.locator("#release-rows tr").first).to_contain_text("second")
    page.get_by_label("Compare release").fill("1")
    page.get_by_label("with").fill("2")
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_role("heading", name="Release 1 → release 2")).to_be_visible()
    expect(page.locator("#comparison .udiff-insert")).to_have_text("+Core v2.")
    watch.assert_clean(page)


def test_publish_shows_impact_first_then_confirms(
    watched: Watched,  # noqa: F811
    publisher: User,
    released: int,
    project: Path,
) -> None:
    services.label_set(name="production", target={"release": released}, author=publisher)
    services.test_context_save(name="repo", fields={"cwd": str(project)}, author=publisher)
    library.variant_save(name="core", text="Core v2.", author=publisher)
    page, watch = watched(publisher)

    page.goto("/releases/")
    publish = page.locator("#publish")
    publish.get_by_label("Label").select_option("production")
    publish.get_by_label("Candidate").select_option("1")
    publish.get_by_role("button", name="Show the impact").click()
    expect(page.locator("#impact-summary")).to_contain_text("0 of 1 context changed")
    expect(page.locator("#publish-confirm")).to_be_visible()

    page.get_by_label("Candidate").select_option("latest")  # htmx swaps the report
    page.get_by_role("button", name="Show the impact").click()
    expect(page.locator("#impact-summary")).to_contain_text("1 of 1 context changed")
    expect(page).to_have_url(re.compile(r"candidate=latest"))
    row = page.locator('tr[data-key="test:repo"]')
    expect(row).to_contain_text("changed")
    page.get_by_text("Diff of test:repo").click()
    expect(page.locator(".impact-diff-row .udiff-insert")).to_have_text("+Core v2.")
    assert selectors.label_get("production").target.as_json() == {"release": released}

    page.get_by_label("Message", exact=True).fill("ship core v2")
    page.get_by_role("button", name="Publish to production").click()

    expect(page.locator(".messages")).to_contain_text("Release 2 created and published")
    expect(page.locator("#label-target")).to_have_text("release 2")
    expect(page.locator("#label-history tr.move").first).to_contain_text("ship core v2")
    watch.assert_clean(page)


def test_set_label_split_then_rollback(
    watched: Watched,  # noqa: F811
    author: User,
    released: int,
) -> None:
    page, watch = watched(author)
    page.goto("/releases/")
    form = page.locator("#set-label")
    form.get_by_label("Name").fill("staging")
    form.get_by_label("A split of releases").check()
    expect(form.get_by_label("Release number", exact=True)).to_be_hidden()
    form.get_by_label(re.compile("^Arms")).fill("1 90%\nlatest 5%")
    form.get_by_role("button", name="Set label").click()

    form = page.locator("#set-label")
    expect(form.locator("#label-arms-error")).to_contain_text("add up to 9,500")
    assert "staging" not in [label.name for label in selectors.labels_list()]
    form.get_by_label(re.compile("^Arms")).fill("1 90%\nlatest 10%")
    form.get_by_role("button", name="Set label").click()
    expect(page.locator("#label-target")).to_have_text("split: release 1 90%, latest 10%")

    page.goto("/releases/")
    form = page.locator("#set-label")
    form.get_by_label("Name").fill("staging")
    form.get_by_label("A release", exact=True).check()
    form.get_by_label("Release number", exact=True).fill("1")
    form.get_by_label("Message").fill("all in")
    form.get_by_role("button", name="Set label").click()
    expect(page.locator("#label-target")).to_have_text("release 1")

    page.get_by_role("button", name="Rollback").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    expect(page.locator("#confirm-message")).to_contain_text("split: release 1 90%, latest 10%")
    page.locator("#confirm-accept").click()
    expect(page.locator(".messages")).to_contain_text("Rolled back")
    expect(page.locator("#label-target")).to_have_text("split: release 1 90%, latest 10%")
    expect(page.locator("#label-history tr.move")).to_have_count(3)
    expect(page.locator("#label-history tr.move").first).to_contain_text("rollback")
    refused_as_expected(watch, 1)
    watch.assert_clean(page)


def test_test_context_create_and_delete(
    watched: Watched,  # noqa: F811
    author: User,
    project: Path,
) -> None:
    page, watch = watched(author)
    page.goto("/releases/")
    expect(page.locator("#test-contexts-empty")).to_be_visible()
    page.get_by_role("link", name="New test context").click()

    page.get_by_label("Name", exact=True).fill("repo")
    page.get_by_label("cwd", exact=True).fill("not/absolute")
    page.get_by_role("button", name="Create test context").click()
    expect(page.locator("#tc-cwd-error")).to_be_visible()
    assert not selectors.test_contexts_list().exists()

    page.get_by_label("cwd", exact=True).fill(str(project))
    page.get_by_label("Tools", exact=True).fill("shell, edit")
    page.get_by_label(re.compile("^Variables")).fill("project=demo")
    page.get_by_role("button", name="Create test context").click()
    expect(page.locator(".messages")).to_contain_text("Test context repo created.")
    row = page.locator('tr[data-test-context="repo"]')
    expect(row).to_contain_text("shell, edit")
    assert selectors.test_context_get("repo").variables == {"project": "demo"}

    row.get_by_role("button", name="Delete repo").click()
    page.locator("#confirm-accept").click()
    expect(page.locator(".messages")).to_contain_text("Test context repo deleted.")
    expect(page.locator("#test-contexts-empty")).to_be_visible()
    assert not selectors.test_contexts_list().exists()
    refused_as_expected(watch, 1)
    watch.assert_clean(page)


def test_releases_page_refuses_non_authors(
    login_as: LoginAs, transactional_db: None, page_errors: PageErrors
) -> None:
    page = login_as(make_user("host", can_edit=False))
    page.goto("/")
    expect(page.get_by_role("link", name="Releases")).to_have_count(0)
    response = page.goto("/releases/")
    assert response is not None and response.status == 403
    page_errors.take("status of 403 (Forbidden)", 1)

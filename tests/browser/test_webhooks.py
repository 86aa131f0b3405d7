"""Browser tests: the Webhooks page (create with the secret shown once, a test event
whose attempt appears in the delivery log, edit, the paused notice and Resume, delete)
and the Audit page with its filters; no CSP violation on either."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.delivery import webhook_pause
from sysprompt.events.models import AuditRecord, Webhook
from sysprompt.library import services as library
from sysprompt.prompts.services import template_save
from tests.browser.conftest import LoginAs, PageErrors, make_user
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)
from tests.events.support import ALLOW_LOCAL, Receiver, receiving, run_queued


@pytest.fixture
def receiver(settings: Settings) -> Iterator[Receiver]:
    settings.SYSPROMPT = {**settings.SYSPROMPT, **ALLOW_LOCAL}
    with receiving() as running:
        yield running


def test_create_shows_secret_once_and_a_test_event_reaches_the_log(
    watched: Watched,  # noqa: F811
    author: User,
    receiver: Receiver,
) -> None:
    page, watch = watched(author)
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Webhooks").click()
    expect(page.locator("#webhooks-empty")).to_be_visible()

    page.get_by_label("Receiver URL").fill(receiver.url)
    page.get_by_label("template.saved").check()
    page.get_by_role("button", name="Create webhook").click()
    secret = page.locator("#webhook-secret").inner_text().strip()
    assert secret.startswith("whsec_")
    page.get_by_role("button", name="Copy secret").click()
    expect(page.locator("#copy-status")).not_to_be_empty()
    receiver.secret = secret

    page.get_by_role("link", name="Open the webhook").click()
    assert secret not in page.content()
    page.get_by_role("button", name="Send a test event").click()
    expect(page.locator(".messages")).to_contain_text("Test event msg_")
    run_queued()
    row = page.locator("#delivery-log-rows tr.attempt").first
    expect(row).to_contain_text("ping", timeout=10_000)  # the log refreshes by itself
    expect(row.locator(".attempt-result")).to_contain_text("200")
    [item] = receiver.wait_for(1)
    assert item.verified is not None and item.verified["type"] == "ping"

    page.goto("/webhooks/")
    expect(page.locator("#webhooks tbody tr")).to_contain_text(receiver.url)
    assert secret not in page.content()
    watch.assert_clean(page)


def test_create_refusal_shows_under_the_field(
    login_as: LoginAs, author: User, page_errors: PageErrors
) -> None:
    page = login_as(author)
    page.goto("/webhooks/")

    page.get_by_label("Receiver URL").fill("http://ci.example.com/hooks")
    page.get_by_label("fragment.saved").check()
    page.get_by_role("button", name="Create webhook").click()

    expect(page.locator("#webhook-url-error")).to_contain_text("Webhooks use https")
    expect(page.get_by_label("Receiver URL")).to_have_value("http://ci.example.com/hooks")
    assert not Webhook.objects.exists()
    page_errors.take("status of 400 (Bad Request)", 1)  # the refused form's answer


def test_edit_then_delete(login_as: LoginAs, author: User) -> None:
    created = services.webhook_create(
        url="https://ci.example.com/a", events=["template.saved", "host.changed"], author=author
    )
    page = login_as(author)
    page.goto(f"/webhooks/{created.webhook.id}/")

    page.get_by_label("host.changed").uncheck()
    page.get_by_label("Include prompt text").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".messages")).to_contain_text("Webhook saved.")
    stored = Webhook.objects.get()
    assert (stored.events, stored.include_text) == (["template.saved"], True)

    page.get_by_role("button", name="Delete").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-accept").click()
    expect(page.locator(".messages")).to_contain_text("deleted")
    expect(page.locator("#webhooks-empty")).to_be_visible()
    assert not Webhook.objects.exists()


def test_paused_webhook_says_why_and_resumes(login_as: LoginAs, author: User) -> None:
    created = services.webhook_create(
        url="https://ci.example.com/a", events=["template.saved"], author=author
    )
    webhook_pause(created.webhook.id, "Event msg_x failed all 13 attempts in a row.")
    page = login_as(author)

    page.goto("/webhooks/")
    expect(page.locator("#webhooks tbody tr .badge", has_text="paused")).to_be_visible()
    page.get_by_role("link", name="https://ci.example.com/a").click()
    expect(page.locator("#paused-notice")).to_contain_text("failed all 13 attempts")
    page.get_by_role("button", name="Resume").click()

    expect(page.locator(".messages")).to_contain_text("resumed")
    expect(page.locator("#paused-notice")).to_have_count(0)
    assert Webhook.objects.get().active


def test_audit_page_filters_by_actor_and_action(
    watched: Watched,  # noqa: F811
    author: User,
) -> None:
    grace = make_user("grace")
    template_save(text="by ada", author=author)
    template_save(text="by grace", author=grace)
    library.variant_save(name="core", text="Core.", author=grace)
    page, watch = watched(author)

    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit").click()
    rows = page.locator("#audit-rows tr")
    # the three changes, and the records of the users and permissions the test made
    expect(rows).to_have_count(AuditRecord.objects.count())
    expect(rows.filter(has_text=re.compile(r"template\.saved|fragment\."))).to_have_count(3)
    page.get_by_label("Who").select_option("grace")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    page.get_by_label("Action").select_option("template.saved")
    page.get_by_role("button", name="Filter").click()

    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(re.compile(r"grace\s+template\.saved\s+template version 2"))
    watch.assert_clean(page)


def test_pages_refuse_users_who_are_no_authors(
    login_as: LoginAs, transactional_db: None, page_errors: PageErrors
) -> None:
    page = login_as(make_user("host", can_edit=False))

    page.goto("/")
    expect(page.get_by_role("link", name="Webhooks")).to_have_count(0)
    for path in ("/webhooks/", "/audit/"):
        response = page.goto(path)
        assert response is not None and response.status == 403
    page_errors.take("status of 403 (Forbidden)", 2)

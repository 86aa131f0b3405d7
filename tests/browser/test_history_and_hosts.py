"""Browser tests: comparing two saved versions in the History tab, and the Agent hosts
page, whose one-time token then works against the API of the live server."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services
from tests.browser.conftest import LoginAs, PageErrors, make_user
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)


def open_history(page: Page) -> None:
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    page.locator("#tab-history").click()
    expect(page.locator("#side-history")).to_be_visible()


def test_history_compare_two_versions_shows_their_diff(author_page: Page, author: User) -> None:
    services.template_save(text="Intro\nold line\nOutro\n", author=author)
    services.template_save(text="Something else\n", author=author)
    services.template_save(text="Intro\nnew line\nOutro\nExtra\n", author=author)
    page = author_page

    open_history(page)
    expect(page.locator(".history-item")).to_have_count(3)
    page.get_by_label("Compare from v1").check()
    page.get_by_label("to v3").check()
    page.get_by_role("button", name="Compare").click()

    diff = page.locator("#history-diff")
    expect(diff.locator("h3")).to_have_text("Version 1 → version 3")
    expect(diff.locator("tr.diff-insert .diff-text")).to_have_text(
        ["added: new line", "added: Extra"]
    )
    expect(diff.locator("tr.diff-delete .diff-text")).to_have_text(["removed: old line"])
    # "Diff with editor" still compares with the editor's text
    page.locator('.history-item[data-version="2"]').get_by_role(
        "button", name="Diff with editor"
    ).click()
    expect(diff.locator("h3")).to_have_text("Version 2 → the editor's text")


def test_history_says_just_now_for_fresh_version(author_page: Page, author: User) -> None:
    services.template_save(text="Fresh\n", author=author)
    page = author_page

    open_history(page)

    expect(page.locator('.history-item[data-version="1"] time')).to_have_text("just now")


@pytest.fixture
def manager(transactional_db: None, project: Path) -> User:
    """A prompt author who may also create API tokens (``authtoken.add_token``)."""
    user = make_user("grace")
    user.user_permissions.add(Permission.objects.get(codename="add_token"))
    return user


def health(live_server: LiveServer, token: str) -> tuple[int, object]:
    request = urllib.request.Request(
        f"{live_server.url}/api/health", headers={"Authorization": f"Token {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_agent_host_created_in_page_token_works_on_api(
    login_as: LoginAs, manager: User, live_server: LiveServer, dialogs: list[str]
) -> None:
    page = login_as(manager)
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Agent hosts").click()
    expect(page).to_have_url(re.compile(r"/agent-hosts/$"))
    expect(page.locator("#agent-hosts-empty")).to_be_visible()

    page.get_by_label("Name").fill("build-01")
    page.get_by_role("button", name="Create agent host").click()

    token = page.locator("#agent-token").inner_text().strip()
    assert re.fullmatch(r"[0-9a-f]{40}", token)
    expect(page.get_by_text("you will not see it again", exact=False)).to_be_visible()
    page.get_by_role("button", name="Copy token").click()
    expect(page.locator("#copy-status")).to_have_text(re.compile("Copied|Selected"))
    assert health(live_server, token) == (200, {"status": "ok", "database": "ok"})
    assert health(live_server, "0" * 40)[0] in (401, 403)

    # back on the list: the host, no token
    page.get_by_role("link", name="Back to agent hosts").click()
    row = page.locator("#agent-hosts tbody tr", has_text="build-01")
    expect(row).to_contain_text("Has a token")
    assert token not in page.content()

    # rotate: asks first in the page's own dialog, then shows the new token once
    row.get_by_role("button", name="Rotate token").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-accept").click()
    rotated = page.locator("#agent-token").inner_text().strip()
    assert rotated != token
    assert health(live_server, token)[0] in (401, 403)
    assert health(live_server, rotated)[0] == 200
    assert dialogs == []


def test_agent_hosts_link_absent_without_permission(
    author_page: Page, page_errors: PageErrors
) -> None:
    accounts.agent_host_ensure(name="build-01")
    page = author_page

    page.goto("/")

    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    expect(page.get_by_role("link", name="Agent hosts")).to_have_count(0)
    response = page.goto("/agent-hosts/")
    assert response is not None and response.status == 403
    page_errors.take("status of 403 (Forbidden)", 1)


def test_csp_history_compare_and_agent_hosts_no_violation(
    watched: Watched,  # noqa: F811
    manager: User,
) -> None:
    services.template_save(text="one\n", author=manager)
    services.template_save(text="one\ntwo\n", author=manager)
    page, watch = watched(manager)

    open_history(page)
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#history-diff tr.diff-insert")).to_contain_text("two")

    page.goto("/agent-hosts/")
    page.get_by_label("Name").fill("csp-host")
    page.get_by_role("button", name="Create agent host").click()
    expect(page.locator("#agent-token")).to_be_visible()
    page.get_by_role("button", name="Copy token").click()
    expect(page.locator("#copy-status")).not_to_be_empty()

    watch.assert_clean(page)

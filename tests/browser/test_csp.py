"""The Content-Security-Policy in a real browser: Debian's chromium walks the main flows
(log in, the overview, the editor with typing, preview, a variable button, autocomplete,
saving and a history diff, the conversations, the admin, the Swagger UI) and no flow may
cause a single CSP violation or console error, while each still works.

An init script records every ``securitypolicyviolation`` event into
``window.__cspViolations`` and reports it to the test, so violations on pages that were
left by a navigation are kept too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.prompts import services
from tests.browser.conftest import BRANCH, PASSWORD, LoginAs, PageErrors

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const violation = {
    page: location.pathname,
    directive: event.effectiveDirective,
    blocked: event.blockedURI,
    source: event.sourceFile,
    line: event.lineNumber,
    sample: event.sample,
  };
  window.__cspViolations.push(violation);
  if (window.__reportCspViolation) window.__reportCspViolation(violation);
});
"""


STYLE_STATE = """() => ({
  styleElements: document.querySelectorAll("style").length,
  scrollerDisplay: getComputedStyle(document.querySelector(".cm-scroller")).display,
})"""


class Watch:
    """What went wrong in a page: CSP violations, and (``errors``, the same list as the
    autouse ``page_errors``) console errors and uncaught exceptions."""

    def __init__(self, page_errors: PageErrors) -> None:
        self.violations: list[Any] = []
        self.page_errors = page_errors

    @property
    def errors(self) -> list[str]:
        return self.page_errors.errors

    @errors.setter
    def errors(self, errors: list[str]) -> None:
        self.page_errors.errors[:] = errors

    def report(self, violation: Any) -> None:
        self.violations.append(violation)

    def assert_clean(self, page: Page) -> None:
        in_page = page.evaluate("() => window.__cspViolations")
        assert in_page == []
        assert self.violations == []
        assert self.errors == []


Watched = Callable[[User | None], tuple[Page, Watch]]


@pytest.fixture
def watched(login_as: LoginAs, page_errors: PageErrors) -> Watched:
    def open_page(user: User | None) -> tuple[Page, Watch]:
        page = login_as(user)  # its console errors and exceptions go to page_errors
        watch = Watch(page_errors)
        page.context.expose_function("__reportCspViolation", watch.report)
        page.context.add_init_script(RECORD_VIOLATIONS)
        return page, watch

    return open_page


@pytest.fixture
def superuser(author: User) -> User:
    author.is_staff = True
    author.is_superuser = True
    author.save()
    return author


def log_in(page: Page, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def text_of(page: Page) -> str:
    text = page.evaluate("() => window.syspromptEditor.text()")
    assert isinstance(text, str)
    return text


def test_csp_editor_flows_no_violation(watched: Watched, author: User, project: Path) -> None:
    page, watch = watched(None)

    # log in, landing in the editor
    page.goto("/editor/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    log_in(page, author.username)
    expect(page).to_have_url(re.compile(r"/editor/$"))
    expect(page.locator("#editor-modal")).to_be_visible()
    editor = page.locator("#template-editor .cm-content")
    expect(editor).to_be_visible()
    # CodeMirror's theme applied: it lives in a <style> element (style-mod uses
    # constructed style sheets only in shadow roots), allowed on this page only.
    assert page.evaluate(STYLE_STATE) == {"styleElements": 1, "scrollerDisplay": "flex"}

    # typing: the preview follows, in the project
    page.locator("#preview-cwd").fill(str(project))
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Working in [prompt:cwd] on ")
    expect(page.locator("#preview-prompt")).to_contain_text(f"Working in {project} on")

    # a variable by its button
    page.locator('#editor-modal button[data-insert="[git:branch]"]').click()
    expect(page.locator("#preview-prompt")).to_contain_text(f"on {BRANCH}")
    assert text_of(page).endswith("[git:branch]")

    # autocomplete after "["
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type(". Model: [prompt:mo")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip).to_be_visible()
    expect(tooltip).to_contain_text("prompt:model")
    page.wait_for_timeout(300)  # CodeMirror ignores keys for 75 ms after the list opens
    expect(tooltip.locator("li[aria-selected]")).to_contain_text("prompt:model")  # the first
    page.keyboard.press("Enter")
    expect(tooltip).to_be_hidden()
    assert text_of(page).endswith("Model: [prompt:model]")

    # save, then a history diff against further edits
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    editor.click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type("\nMore.")
    page.locator("#tab-history").click()
    item = page.locator('.history-item[data-version="1"]')
    item.get_by_role("button", name="Diff with editor").click()
    expect(page.locator("#history-diff .diff tr.diff-insert")).to_contain_text("More.")

    # close: back on the overview, which reloads after a save
    page.evaluate("() => window.syspromptEditor.editor.setText(window.syspromptEditor.savedText)")
    page.locator("#close-editor").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("#open-editor")).to_be_visible()
    expect(page.locator("#overview-version")).to_contain_text("1")

    watch.assert_clean(page)


def test_csp_conversations_no_violation(watched: Watched, superuser: User, project: Path) -> None:
    services.template_save(text="Line one\nBranch: [git:branch]\n")
    for conversation_id in ("alpha-1", "beta-2"):
        services.conversation_prompt_resolve(
            conversation_id=conversation_id, cwd=str(project), model="", user=superuser
        )
    services.template_save(text="Line one\nOn branch [git:branch]\n")
    page, watch = watched(superuser)

    page.goto("/conversations/")
    rows = page.locator("#conversation-rows tr th a")
    expect(rows).to_have_text(["beta-2", "alpha-1"])
    page.locator("#conversation-search").fill("alpha")  # htmx filters
    expect(rows).to_have_text(["alpha-1"])
    rows.first.click()

    expect(page).to_have_url(re.compile(r"/conversations/alpha-1/(\?host=[\w.@+-]+)?$"))
    expect(page.locator("#frozen-prompt")).to_contain_text(f"Branch: {BRANCH}")
    page.locator("#reconstruct-button").click()  # the page's own confirm dialog
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-dialog button[value=cancel]").click()
    expect(page.locator("#confirm-dialog")).to_be_hidden()

    watch.assert_clean(page)


def test_csp_admin_login_and_pages_no_violation(watched: Watched, superuser: User) -> None:
    services.template_save(text="Admin sees [prompt:cwd]\n")
    page, watch = watched(None)

    page.goto("/admin/")
    expect(page).to_have_url(re.compile(r"/admin/login/"))
    page.locator("#id_username").fill(superuser.username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("input[type=submit]").click()

    expect(page).to_have_url(re.compile(r"/admin/$"))
    expect(page.locator("#site-name")).to_be_visible()
    assert page.locator("#header").evaluate("h => getComputedStyle(h).display") != "inline"
    for path in ("/admin/sysprompt/templateversion/", "/admin/sysprompt/templateversion/1/change/"):
        page.goto(path)
        expect(page.locator("#content")).to_be_visible()
    page.goto("/admin/axes/accessattempt/")
    expect(page.locator("#changelist")).to_be_visible()
    page.goto("/admin/auth/user/")
    page.locator("#changelist-filter").first.wait_for(state="attached")
    page.get_by_role("link", name=superuser.username).click()  # widgets, related links
    expect(page.locator("#user_form")).to_be_visible()

    watch.assert_clean(page)


def test_csp_swagger_ui_renders_operations_no_violation(watched: Watched, author: User) -> None:
    page, watch = watched(author)

    page.goto("/api/docs/")

    operations = page.locator(".opblock")
    expect(operations.first).to_be_visible()
    assert operations.count() >= 10
    resolve = page.locator(".opblock", has_text="/system-prompt/resolve").first
    resolve.locator(".opblock-summary").click()
    expect(resolve.locator(".opblock-body")).to_be_visible()
    assert page.evaluate("() => getComputedStyle(document.body).margin") == "0px"  # nonce'd

    watch.assert_clean(page)

"""Browser tests of the pages around the editor: conversations, login and logout, CSRF,
escaping, highlighting against the server's parser, layout and keyboard use.

Debian's chromium drives the live server, a real git project and the test database
(fixtures in ``conftest.py``); nothing is mocked. Conversations are created the way an
agent host creates them, through ``services.conversation_prompt_resolve``.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Dialog, Locator, Page, expect

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion
from sysprompt_core.template.lexer import tokenize
from sysprompt_core.template.parser import parse
from sysprompt_core.tokens import count
from tests.browser.conftest import BRANCH, PASSWORD, LoginAs, PageErrors, make_user

# --- helpers ------------------------------------------------------------------------


@pytest.fixture
def author(transactional_db: None) -> User:
    """A prompt author, in the "Prompt authors" group: the Conversations pages need its
    view permission, Re-construct and the compaction diff its change, Forget its delete."""
    user = make_user("ada")
    accounts.groups_ensure()
    user.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    return user


def resolve(conversation_id: str, cwd: Path, model: str = "") -> ConversationPrompt:
    """A conversation's first turn, as an agent host makes it through the API."""
    host, _ = User.objects.get_or_create(username="agent-host")
    stored = services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(cwd), model=model, user=host
    )
    return stored.prompt


def show_compaction(page: Page) -> Locator:
    """Press "Show what compaction would change"; the diff's container."""
    diff = page.locator("#compaction-diff")
    expect(diff.locator(".diff, .status-ok, .error")).to_have_count(0)  # not on GET
    page.get_by_role("button", name="Show what compaction would change").click()
    expect(page.locator("#compaction-button")).to_have_count(0)
    return diff


def row_links(page: Page) -> Locator:
    return page.locator("#conversation-rows tr:not(.more-row) th a")


def fact(page: Page, label: str) -> Locator:
    """The <dd> of a fact on a conversation's page, by its label."""
    row = page.locator("#conversation-facts > div").filter(
        has=page.locator("dt", has_text=re.compile(f"^{re.escape(label)}$"))
    )
    return row.locator("dd")


def mark_page(page: Page) -> None:
    """A marker that survives htmx swaps but not a full page load."""
    page.evaluate("() => { window.__samePage = true; }")


def assert_same_page(page: Page) -> None:
    assert page.evaluate("() => window.__samePage === true"), "the page was reloaded"


def watch_confirm(page: Page) -> None:
    """Count submit events (of forms that post, not the dialog's own form) and note when
    the confirm dialog has closed.

    The submit listener runs in the capture phase, before app.js's; the close listener
    is added before app.js adds its own, so once ``__confirmClosed`` is seen from a later
    task, app.js has decided whether to submit.
    """
    page.evaluate(
        """() => {
          window.__submits = 0;
          window.__confirmClosed = false;
          document.addEventListener('submit', (event) => {
            if (event.target.method !== 'dialog') window.__submits += 1;
          }, true);
          document.getElementById('confirm-dialog')
            .addEventListener('close', () => { window.__confirmClosed = true; });
        }"""
    )


def submits_after_confirm_closed(page: Page) -> int:
    page.wait_for_function("() => window.__confirmClosed === true")
    count = page.evaluate("() => window.__submits")
    assert isinstance(count, int)
    return count


def tab_to(page: Page, selector: str, limit: int = 40) -> None:
    """Press Tab until ``selector`` has the focus."""
    target = page.locator(selector)
    for _ in range(limit):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    pytest.fail(f"{limit} presses of Tab never reached {selector}")


def open_editor(page: Page) -> None:
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    expect(page.locator("#template-editor .cm-content")).to_be_visible()


# --- 1. the conversations list ------------------------------------------------------


def test_conversations_list_shows_newest_first(author_page: Page, project: Path) -> None:
    services.template_save(text="Working in [prompt:cwd] on [git:branch].\n")
    resolve("alpha-1", project)
    beta_prompt = resolve("beta-2", project, model="claude-test").system_prompt or ""
    resolve("gamma-3", project)
    page = author_page

    page.goto("/conversations/")

    expect(row_links(page)).to_have_text(["gamma-3", "beta-2", "alpha-1"])
    beta = page.locator("#conversation-rows tr").nth(1)
    # the row names the conversation's agent host (ids are scoped to the host)
    expect(beta.locator("th a")).to_have_attribute(
        "href", re.compile(r"^/conversations/beta-2/\?host=[\w.@+-]+$")
    )
    size = count(beta_prompt, model="claude-test")  # not OpenAI's: an estimate, "≈N"
    expect(beta.locator("td")).to_have_text(
        [
            *("production", "latest", "—", "v1", "claude-test", size.short),
            *(str(project), "just now", "agent-host"),
        ]
    )
    estimate = beta.locator(".conversation-tokens .token-count")
    expect(estimate).to_have_attribute("title", re.compile(r"^estimate: "))
    expect(page.locator("#conversation-rows tr").first.locator("td").nth(4)).to_have_text("—")


def test_conversations_search_filters_by_part_of_id(author_page: Page, project: Path) -> None:
    services.template_save(text="Working in [prompt:cwd].\n")
    for conversation_id in ("alpha-1", "beta-2", "alphabet-3"):
        resolve(conversation_id, project)
    page = author_page
    page.goto("/conversations/")
    expect(row_links(page)).to_have_count(3)
    mark_page(page)
    search = page.locator("#conversation-search")

    search.fill("ALPHA")
    expect(row_links(page)).to_have_text(["alphabet-3", "alpha-1"])
    expect(page).to_have_url(re.compile(r"/conversations/\?q=ALPHA$"))

    search.fill("bet")
    expect(row_links(page)).to_have_text(["alphabet-3", "beta-2"])
    expect(page).to_have_url(re.compile(r"/conversations/\?q=bet$"))

    search.fill("zzz")
    expect(page.locator("#conversation-rows")).to_have_text("No conversation id contains “zzz”.")
    assert_same_page(page)  # filtered by htmx, not by loading the page

    page.reload()  # the pushed URL renders the same filter on the server
    expect(page.locator("#conversation-search")).to_have_value("zzz")
    expect(row_links(page)).to_have_count(0)


def test_conversations_more_than_50_load_older_page(author_page: Page, project: Path) -> None:
    services.template_save(text="Working in [prompt:cwd].\n")
    ids = [f"conv-{number:03d}" for number in range(53)]
    for conversation_id in ids:
        resolve(conversation_id, project)
    newest_first = ids[::-1]
    page = author_page

    page.goto("/conversations/")
    expect(row_links(page)).to_have_text(newest_first[:50])
    mark_page(page)

    page.get_by_role("link", name="Older conversations").click()

    expect(row_links(page)).to_have_text(newest_first)
    expect(page.locator("#conversation-rows .more-row")).to_have_count(0)
    assert_same_page(page)


# --- 2. a conversation's page -------------------------------------------------------


def test_conversation_page_shows_frozen_prompt_and_facts(author_page: Page, project: Path) -> None:
    services.template_save(
        text="Branch: [git:branch]\nRules: [file:AGENTS.md]\nModel: [prompt:model]\n"
    )
    stored = resolve("facts-1", project, model="claude-facts")
    prompt = stored.system_prompt
    assert prompt is not None and BRANCH in prompt and "Always run the tests." in prompt
    page = author_page

    page.goto("/conversations/facts-1/")

    expect(page.locator("#frozen-prompt")).to_be_visible()
    assert page.locator("#frozen-prompt").text_content() == prompt
    expect(fact(page, "Template version")).to_have_text("v1")
    expect(fact(page, "SHA-256")).to_have_text(hashlib.sha256(prompt.encode()).hexdigest())
    expect(fact(page, "Working directory")).to_have_text(str(project))
    expect(fact(page, "Model")).to_have_text("claude-facts")
    expect(fact(page, "Owner")).to_have_text("agent-host")
    constructed = fact(page, "Constructed").locator("time").get_attribute("datetime")
    assert constructed is not None
    assert datetime.fromisoformat(constructed) == stored.constructed_at


def test_conversation_page_frozen_prompt_keeps_leading_newline(
    author_page: Page, project: Path
) -> None:
    """An HTML parser drops one newline right after <pre>: the page must not lose it."""
    services.template_save(text="\nAfter a blank line, on [git:branch].\n")
    stored = resolve("leading-1", project)
    assert stored.system_prompt == f"\nAfter a blank line, on {BRANCH}.\n"
    page = author_page

    page.goto("/conversations/leading-1/")

    expect(page.locator("#frozen-prompt")).to_be_visible()
    assert page.locator("#frozen-prompt").text_content() == stored.system_prompt


def test_conversation_page_compaction_diff_shows_changed_line(
    author_page: Page, project: Path
) -> None:
    services.template_save(text="Line one\nBranch: [git:branch]\nLine three\n")
    resolve("diff-1", project)
    services.template_save(text="Line one\nOn branch [git:branch]\nLine three\n")
    page = author_page

    page.goto("/conversations/diff-1/")

    diff = show_compaction(page)
    expect(diff.locator("tr.diff-delete .diff-text")).to_have_text([f"removed: Branch: {BRANCH}"])
    expect(diff.locator("tr.diff-insert .diff-text")).to_have_text([f"added: On branch {BRANCH}"])
    expect(diff.locator(".diff-counts")).to_have_text("+1 −1")
    expect(diff.locator("tr.diff-equal .diff-text")).to_have_text(["Line one", "Line three"])
    # The page only shows the fresh render: the stored prompt is still the old one.
    assert ConversationPrompt.objects.get(conversation_id="diff-1").template_version_id == 1


def test_conversations_hidden_from_user_without_view_permission(
    login_as: LoginAs, project: Path, page_errors: PageErrors
) -> None:
    services.template_save(text="Rules: [file:AGENTS.md]\n")
    stored = resolve("secret-1", project)
    assert stored.system_prompt is not None
    page = login_as(make_user("bob"))  # may change the template, not see conversations

    page.goto("/")
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    expect(page.get_by_role("link", name="Conversations")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("conversations stored")
    for url in ("/conversations/", "/conversations/secret-1/"):
        response = page.goto(url)
        assert response is not None and response.status == 403
        assert "Always run the tests." not in page.content()
    page_errors.take("status of 403 (Forbidden)", 2)


def test_conversation_page_compaction_diff_says_when_nothing_changes(
    author_page: Page, project: Path
) -> None:
    services.template_save(text="Stable: [git:branch] in [prompt:cwd]\n")
    resolve("same-1", project)
    page = author_page

    page.goto("/conversations/same-1/")

    diff = show_compaction(page)
    expect(diff.locator(".status-ok")).to_have_text(
        "Nothing: a fresh render gives the same prompt, byte for byte."
    )
    expect(diff.locator("#compaction-fresh-from")).to_have_text(
        "The fresh render is of what production serves now: the working copy (latest)."
    )
    expect(diff.locator(".diff")).to_have_count(0)


# --- 3. re-construct and forget ----------------------------------------------------------


def test_reconstruct_cancel_changes_nothing(
    author_page: Page, project: Path, dialogs: list[str]
) -> None:
    services.template_save(text="Old rule on [git:branch]\n")
    before = resolve("conv-1", project)
    services.template_save(text="New rule on [git:branch]\n")
    page = author_page
    page.goto("/conversations/conv-1/")
    watch_confirm(page)

    page.locator("#reconstruct-button").click()

    confirm = page.locator("#confirm-dialog")
    expect(confirm).to_be_visible()
    assert confirm.evaluate("dialog => dialog.matches(':modal')")
    expect(page.locator("#confirm-message")).to_contain_text(
        "Replace this conversation's frozen prompt"
    )
    expect(page.locator("#confirm-accept")).to_have_text("Re-construct")
    assert dialogs == []  # the page's own dialog, not window.confirm

    confirm.locator("button[value=cancel]").click()

    expect(confirm).to_be_hidden()
    assert submits_after_confirm_closed(page) == 1  # only the intercepted first one
    after = ConversationPrompt.objects.get(conversation_id="conv-1")
    assert (after.system_prompt, after.template_version_id, after.sha256) == (
        before.system_prompt,
        1,
        before.sha256,
    )
    assert after.constructed_at == before.constructed_at
    expect(page.locator("#frozen-prompt")).to_have_text(f"Old rule on {BRANCH}")
    assert dialogs == []


def test_reconstruct_confirm_replaces_prompt_with_fresh_render(
    author_page: Page, project: Path, dialogs: list[str]
) -> None:
    services.template_save(text="Old rule on [git:branch]\n")
    before = resolve("conv-1", project)
    services.template_save(text="New rule on [git:branch]\n")
    page = author_page
    page.goto("/conversations/conv-1/")

    page.locator("#reconstruct-button").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-accept").click()

    expect(page.locator(".message-success")).to_have_text(
        "Re-constructed from what production serves now: the working copy (latest)."
    )
    expect(page).to_have_url(re.compile(r"/conversations/conv-1/(\?host=[\w.@+-]+)?$"))
    after = ConversationPrompt.objects.get(conversation_id="conv-1")
    assert after.system_prompt == f"New rule on {BRANCH}\n"
    assert after.template_version_id == 2
    assert after.constructed_at > before.constructed_at
    assert after.created_at == before.created_at
    expect(page.locator("#frozen-prompt")).to_have_text(f"New rule on {BRANCH}")
    expect(fact(page, "Template version")).to_have_text("v2")
    expect(show_compaction(page)).to_contain_text("Nothing:")
    assert dialogs == []


def test_forget_confirm_deletes_row_and_returns_to_list(
    author_page: Page, project: Path, dialogs: list[str]
) -> None:
    services.template_save(text="Rule on [git:branch]\n")
    resolve("keep-1", project)
    resolve("forget-1", project)
    page = author_page
    page.goto("/conversations/forget-1/")

    page.locator("#forget-button").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    expect(page.locator("#confirm-message")).to_contain_text("Forget this conversation's prompt?")
    expect(page.locator("#confirm-accept")).to_have_text("Forget")
    page.locator("#confirm-accept").click()

    expect(page).to_have_url(re.compile(r"/conversations/$"))
    expect(page.locator(".message-success")).to_have_text("Forgot the prompt of forget-1.")
    expect(row_links(page)).to_have_text(["keep-1"])
    assert not ConversationPrompt.objects.filter(conversation_id="forget-1").exists()
    assert ConversationPrompt.objects.filter(conversation_id="keep-1").exists()
    assert dialogs == []


# --- 4. hostile text is shown, never run ---------------------------------------------

SCRIPT_1 = "<script>alert(1)</script>"
IMG_2 = "<img src=x onerror=alert(2)>"
SCRIPT_3 = "<script>alert(3)</script>"
MODEL_4 = "<img src=x onerror=alert(4)>"
CWD_5 = "<img src=y onerror=alert(5)>"
HOSTILE_V1 = f"{SCRIPT_1}\n{IMG_2}\n[file:AGENTS.md]\n"
HOSTILE_V2 = f"{SCRIPT_1} v2\n{IMG_2}\n[file:AGENTS.md]\n"

# Elements or attributes the hostile text would have created, had it been parsed as HTML.
INJECTED = """() => {
  const found = [];
  for (const element of document.querySelectorAll('img, iframe, object, embed')) {
    found.push(element.outerHTML);
  }
  for (const script of document.querySelectorAll('script')) {
    if (script.type !== 'application/json' && script.textContent.includes('alert(')) {
      found.push(script.outerHTML);
    }
  }
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      if (attribute.name.startsWith('on')) found.push(`${element.tagName} ${attribute.name}`);
    }
  }
  return found;
}"""


def assert_nothing_injected(page: Page) -> None:
    assert page.evaluate(INJECTED) == []


def test_hostile_text_is_shown_literally_and_never_runs(
    author_page: Page, project: Path, dialogs: list[str]
) -> None:
    (project / "AGENTS.md").write_text(f"{SCRIPT_3}\n")
    hostile_dir = project / CWD_5
    hostile_dir.mkdir()
    services.template_save(text=HOSTILE_V1)
    resolve("xss-1", project, model=MODEL_4)
    resolve("xss-2", hostile_dir)
    services.template_save(text=HOSTILE_V2)
    page = author_page
    opened: list[str] = []

    def record(dialog: Dialog) -> None:
        opened.append(dialog.message)

    page.on("dialog", record)

    # The editor: its text, the server-rendered preview, and a diff from the history.
    open_editor(page)
    expect(page.locator("#template-editor .cm-content")).to_contain_text(f"{SCRIPT_1} v2")
    page.locator("#preview-cwd").fill(str(project))
    preview = page.locator("#preview-prompt")
    expect(preview).to_contain_text(SCRIPT_3)
    text = preview.inner_text()
    assert f"{SCRIPT_1} v2" in text and IMG_2 in text and SCRIPT_3 in text
    expect(page.locator("#preview-variables")).to_contain_text(SCRIPT_3)
    assert_nothing_injected(page)
    page.locator("#tab-history").click()
    page.locator("li[data-version='1']").get_by_role("button", name="Diff with editor").click()
    history_diff = page.locator("#history-diff")
    expect(history_diff.locator("tr.diff-delete .diff-text")).to_have_text([f"removed: {SCRIPT_1}"])
    expect(history_diff.locator("tr.diff-insert .diff-text")).to_have_text(
        [f"added: {SCRIPT_1} v2"]
    )
    expect(history_diff.locator("tr.diff-equal .diff-text").first).to_have_text(IMG_2)
    assert_nothing_injected(page)

    # The overview behind the editor shows the template's excerpt.
    page.goto("/")
    expect(page.locator(".template-excerpt")).to_contain_text(f"{SCRIPT_1} v2\n{IMG_2}")
    assert_nothing_injected(page)

    # The list: model and working directory.
    page.goto("/conversations/")
    expect(page.locator("#conversation-rows")).to_contain_text(MODEL_4)
    expect(page.locator("#conversation-rows")).to_contain_text(CWD_5)
    assert_nothing_injected(page)

    # A conversation's page: the frozen prompt, the facts, the compaction diff.
    page.goto("/conversations/xss-1/")
    frozen = page.locator("#frozen-prompt").inner_text()
    assert SCRIPT_1 in frozen and IMG_2 in frozen and SCRIPT_3 in frozen
    expect(fact(page, "Model")).to_have_text(MODEL_4)
    compaction = show_compaction(page)
    expect(compaction.locator("tr.diff-delete .diff-text")).to_have_text([f"removed: {SCRIPT_1}"])
    expect(compaction.locator("tr.diff-insert .diff-text")).to_have_text([f"added: {SCRIPT_1} v2"])
    assert_nothing_injected(page)

    page.goto("/conversations/xss-2/")
    expect(fact(page, "Working directory")).to_have_text(str(hostile_dir))
    assert_nothing_injected(page)

    assert dialogs == []
    assert opened == []


# --- 5. highlighting agrees with the server's lexer and parser -------------------------

HIGHLIGHT_CASES: dict[str, str] = {
    "matched if": "[if a:b]x[endif]",
    "matched if-else": "[if !a:b]x[else]y[endif]",
    "unmatched if": "[if a:b]x",
    "nested": "[if a:b][if c:d]x[else]y[endif]z[endif]",
    "nested, outer unclosed": "[if a:b][if c:d]x[endif]",
    "nested, both unclosed": "[if a:b]x[if c:d]y",
    "second else": "[if a:b]x[else]y[else]z[endif]",
    "stray endif": "x[endif]",
    "stray else": "[else]x",
    "stray endif before a block": "[endif][if a:b]x[endif]",
    "else of an unclosed if": "[if a:b]x[else]y",
    "else of an unclosed outer if": "[if a:b]x[else][if c:d]y[endif]",
    "uppercase If": "[If a:b]x[endif]",
    "uppercase type": "[A:b] [a:b]",
    "digit first type": "[1a:b] [a1_-:b]",
    "endif with a space": "[if a:b]x[endif ]",
    "else with a space": "[if a:b]x[ else]y[endif]",
    "if without a space": "[ifa:b]x[endif]",
    "if with spaces and tab": "[if  \ta:b]x[endif]",
    "if with a spaced !": "[if ! a:b]x[endif]",
    "nested brackets": "[a:[b:c]]",
    "brackets in a name": "[a:b]c] [a:b[c]",
    "name with inner spaces": "[file:My Notes.md] [a:b  c]",
    "name with an edge space": "[a:b ] [a: b] [ a:b]",
    "name across a line": "[a:b\nc] [if a:b\nc]x[endif]",
    "empty name": "[a:] [:b] []",
    "CRLF": "[if a:b]\r\nx\r\n[else]\r\ny\r\n[endif]\r\n[a:b\r\nc]",
    "standalone lines": "  [if a:b]  \nx\n\t[else]\t\ny\n[endif]\n",
    "non-BMP text before tags": "é😀[a:b] 🧪[if c:d]😀[endif]",
    "tab and NBSP in a name": "[a:b\tc] [a:b\u00a0c]",
    "real variables": "[system:time] [prompt:cwd] [git:branch] [file:AGENTS.md]",
}

# Characters on which JavaScript's \\s and Python's \\s disagree: U+001C-U+001F and U+0085
# are whitespace to Python only, U+FEFF to JavaScript only.
UNICODE_WHITESPACE_CASES: dict[str, str] = {
    "U+001C alone as a name": "[a:\x1c]",
    "U+0085 alone as a name": "[a:\x85]",
    "U+FEFF ending a name": "[a:b\ufeff]",
    "U+FEFF in a condition": "[if a:b\ufeff]x[endif]",
}

CLASSIFY = """texts => texts.map(text =>
  window.SyspromptCodeMirror.classify(text).map(({from, to, kind, literal}) =>
    ({from, to, kind, literal})))"""


def utf16(text: str, offset: int) -> int:
    """A Python (code point) offset as a JavaScript (UTF-16 unit) offset."""
    return len(text[:offset].encode("utf-16-le")) // 2


def server_tags(text: str) -> list[dict[str, Any]]:
    """What the server makes of ``text``'s tags: lexer spans, parser's literal ordinals."""
    literal = {finding.ordinal for finding in parse(text).findings}
    return [
        {
            "from": utf16(text, token.start),
            "to": utf16(text, token.end),
            "kind": token.kind.value,
            "literal": ordinal in literal,
        }
        for ordinal, token in enumerate(tokenize(text))
    ]


def highlight_mismatches(page: Page, cases: dict[str, str]) -> dict[str, Any]:
    page.goto("/")
    page.wait_for_function("() => window.SyspromptCodeMirror !== undefined")
    browser_tags = page.evaluate(CLASSIFY, list(cases.values()))
    assert isinstance(browser_tags, list) and len(browser_tags) == len(cases)
    mismatches = {}
    for (name, text), tags in zip(cases.items(), browser_tags, strict=True):
        expected = server_tags(text)
        if tags != expected:
            mismatches[name] = {"text": text, "browser": tags, "server": expected}
    return mismatches


def test_highlighting_classify_matches_server_parser(author_page: Page) -> None:
    assert highlight_mismatches(author_page, HIGHLIGHT_CASES) == {}


def test_highlighting_classify_matches_server_on_unicode_whitespace(
    author_page: Page,
) -> None:
    assert highlight_mismatches(author_page, UNICODE_WHITESPACE_CASES) == {}


def test_highlighting_marks_literal_block_and_variable_tags(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    text = "[if a:b]open forever\n[if prompt:model]x[else]y[endif] [prompt:cwd]\n[endif ]"
    assert server_tags(text) == [
        {"from": 0, "to": 8, "kind": "if", "literal": True},
        {"from": 21, "to": 38, "kind": "if", "literal": False},
        {"from": 39, "to": 45, "kind": "else", "literal": False},
        {"from": 46, "to": 53, "kind": "endif", "literal": False},
        {"from": 54, "to": 66, "kind": "variable", "literal": False},
    ]

    page.evaluate("text => window.syspromptEditor.editor.setText(text)", text)

    content = page.locator("#template-editor .cm-content")
    expect(content.locator(".cm-sp-literal")).to_have_text(["[if a:b]"])
    expect(content.locator(".cm-sp-literal")).to_have_attribute("title", re.compile("never closed"))
    expect(content.locator(".cm-sp-block")).to_have_text(["[if prompt:model]", "[else]", "[endif]"])
    expect(content.locator(".cm-sp-variable")).to_have_text(["[prompt:cwd]"])
    expect(content.locator(".cm-sp-variable .cm-sp-type")).to_have_text(["prompt"])


# --- 6. login and logout ------------------------------------------------------------------


@pytest.fixture
def anonymous_page(login_as: LoginAs) -> Page:
    return login_as(None)


def assert_app_stylesheet(page: Page) -> None:
    """The page links the app's stylesheet and the browser applied it."""
    rules = page.evaluate(
        """() => [...document.styleSheets]
          .filter(sheet => sheet.href && sheet.href.endsWith('/static/css/app.css'))
          .map(sheet => sheet.cssRules.length)"""
    )
    assert isinstance(rules, list) and len(rules) == 1 and rules[0] > 0
    assert page.locator(".topbar").evaluate("bar => getComputedStyle(bar).display") == "flex"


def log_in(page: Page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_login_page_anonymous_editor_redirects_to_styled_form(
    anonymous_page: Page, author: User
) -> None:
    page = anonymous_page

    page.goto("/editor/")

    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/editor/$"))
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.get_by_label("Username")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_attribute("type", "password")
    expect(page.locator("input[name=next]")).to_have_value("/editor/")
    expect(page.locator(".topbar-nav")).to_have_count(0)  # no navigation before login
    assert_app_stylesheet(page)


def test_login_wrong_password_shows_error(anonymous_page: Page, author: User) -> None:
    page = anonymous_page
    page.goto("/editor/")

    log_in(page, author.username, "not-the-password")

    expect(page.get_by_role("alert")).to_contain_text(
        "Please enter a correct username and password"
    )
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    expect(page.get_by_label("Username")).to_have_value(author.username)
    expect(page.locator("input[name=next]")).to_have_value("/editor/")
    assert_app_stylesheet(page)


def test_login_lands_in_editor_and_logout_shows_logged_out_page(
    anonymous_page: Page, author: User, project: Path
) -> None:
    page = anonymous_page
    page.goto("/editor/")

    log_in(page, author.username, PASSWORD)

    expect(page).to_have_url(re.compile(r"/editor/$"))
    expect(page.locator("#editor-modal")).to_be_visible()
    page.locator("#close-editor").click()
    expect(page.locator("#editor-modal")).to_be_hidden()
    expect(page.locator(".topbar-user")).to_have_text(author.username)

    page.locator(".topbar").get_by_role("button", name="Log out").click()

    expect(page.get_by_role("heading", name="You are logged out")).to_be_visible()
    again = page.get_by_role("link", name="Log in again")
    expect(again).to_have_attribute("href", "/accounts/login/")
    expect(page.locator(".topbar-nav")).to_have_count(0)
    assert_app_stylesheet(page)

    again.click()
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()

    page.goto("/")  # the session is gone
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))


# --- 7. CSRF on htmx writes ------------------------------------------------------------------

POST_WITHOUT_TOKEN = """async ([url, fields]) => {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  const response = await fetch(url, {method: 'POST', body});
  return {status: response.status, text: await response.text()};
}"""

POST_WITH_TOKEN = """async ([url, fields]) => {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  const token = JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken'];
  const response = await fetch(url, {method: 'POST', body, headers: {'X-CSRFToken': token}});
  return {status: response.status, text: await response.text()};
}"""


def test_csrf_save_without_token_refused_and_htmx_save_works(
    author_page: Page, project: Path, page_errors: PageErrors
) -> None:
    page = author_page
    open_editor(page)

    refused = page.evaluate(
        POST_WITHOUT_TOKEN, ["/editor/save", {"template": "Forged\n", "base_etag": ""}]
    )

    assert refused["status"] == 403
    assert "CSRF" in refused["text"]
    assert TemplateVersion.objects.count() == 0
    page_errors.take("status of 403 (Forbidden)", 1)

    page.evaluate("text => window.syspromptEditor.editor.setText(text)", "Saved by htmx\n")
    with page.expect_request("**/editor/save") as request_info:
        page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    assert request_info.value.headers.get("x-csrftoken")
    assert list(TemplateVersion.objects.values_list("text", flat=True)) == ["Saved by htmx\n"]


def test_csrf_preview_without_token_refused(
    author_page: Page, project: Path, page_errors: PageErrors
) -> None:
    page = author_page
    open_editor(page)
    fields = {"template": "Hello [prompt:cwd]", "cwd": str(project)}

    refused = page.evaluate(POST_WITHOUT_TOKEN, ["/editor/preview", fields])
    allowed = page.evaluate(POST_WITH_TOKEN, ["/editor/preview", fields])

    assert refused["status"] == 403
    assert "CSRF" in refused["text"]
    assert allowed["status"] == 200
    assert f"Hello {project}" in allowed["text"]
    page_errors.take("status of 403 (Forbidden)", 1)


# --- 8. usable on a laptop and on a phone ----------------------------------------------------

VIEWPORTS = [
    pytest.param(1280, 800, id="1280x800"),
    pytest.param(390, 844, id="390x844"),
]

NO_PAGE_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_editor_usable_at_viewport(
    author_page: Page, project: Path, width: int, height: int
) -> None:
    services.template_save(
        text=(
            "You work in [prompt:cwd] on [git:branch].\n"
            "[if file:AGENTS.md]Project rules:\n[file:AGENTS.md][endif]\n"
            "Unbroken: " + "x" * 300 + "\n"
            "[file:docs/architecture/decisions/0001-record-architecture-decisions.md]\n"
        )
    )
    page = author_page
    page.set_viewport_size({"width": width, "height": height})
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    page.locator("#preview-cwd").fill(str(project))
    expect(page.locator("#preview-prompt")).to_contain_text("Project rules:")

    for selector in ("#save-button", "#close-editor", "#template-editor .cm-content"):
        target = page.locator(selector)
        expect(target).to_be_visible()
        expect(target).to_be_in_viewport()
        target.click(trial=True)  # visible, enabled, stable and not covered

    assert page.evaluate(NO_PAGE_OVERFLOW)
    assert page.locator("#editor-modal").evaluate("modal => modal.scrollWidth <= modal.clientWidth")
    preview = page.locator("#preview-prompt")
    preview.scroll_into_view_if_needed()
    expect(preview).to_be_in_viewport()
    assert page.locator("#preview-variables").evaluate(
        "list => list.scrollWidth <= list.clientWidth"
    )


def test_conversation_pages_no_page_overflow_on_phone(author_page: Page, project: Path) -> None:
    services.template_save(text="Working in [prompt:cwd] on [git:branch].\n")
    long_id = "session-" + "0123456789abcdef" * 9
    resolve(long_id, project, model="claude-a-model-with-a-rather-long-name-1234567890")
    page = author_page
    page.set_viewport_size({"width": 390, "height": 844})

    page.goto("/conversations/")
    expect(row_links(page)).to_have_text([long_id])
    assert page.evaluate(NO_PAGE_OVERFLOW)
    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("wrap => wrap.scrollWidth > wrap.clientWidth")  # it scrolls inside
    assert wrap.evaluate("wrap => getComputedStyle(wrap).overflowX") == "auto"
    expect(page.locator("#conversation-search")).to_be_in_viewport()

    page.goto(f"/conversations/{long_id}/")
    expect(page.locator("#frozen-prompt")).to_be_visible()
    assert page.evaluate(NO_PAGE_OVERFLOW)
    for selector in ("#reconstruct-button", "#forget-button", "#compaction-button"):
        page.locator(selector).click(trial=True)


# --- 9. keyboard ----------------------------------------------------------------------------


def test_conversations_keyboard_tab_reaches_search_and_filters(
    author_page: Page, project: Path
) -> None:
    services.template_save(text="Working in [prompt:cwd].\n")
    for conversation_id in ("alpha-1", "beta-2"):
        resolve(conversation_id, project)
    page = author_page
    page.goto("/conversations/")
    expect(row_links(page)).to_have_count(2)

    tab_to(page, "#conversation-search")
    page.keyboard.type("bet")

    expect(row_links(page)).to_have_text(["beta-2"])
    expect(page).to_have_url(re.compile(r"\?q=bet$"))
    expect(page.locator("#conversation-search")).to_be_focused()


def test_conversation_keyboard_forget_escape_keeps_row(
    author_page: Page, project: Path, dialogs: list[str]
) -> None:
    services.template_save(text="Rule on [git:branch]\n")
    resolve("conv-1", project)
    page = author_page
    page.goto("/conversations/conv-1/")
    watch_confirm(page)

    tab_to(page, "#forget-button")
    page.keyboard.press("Enter")

    confirm = page.locator("#confirm-dialog")
    expect(confirm).to_be_visible()
    expect(page.locator("#confirm-accept")).to_have_text("Forget")
    expect(confirm.locator("button[value=cancel]")).to_be_focused()

    page.keyboard.press("Escape")

    expect(confirm).to_be_hidden()
    assert submits_after_confirm_closed(page) == 1
    expect(page.locator("#forget-button")).to_be_focused()
    assert ConversationPrompt.objects.filter(conversation_id="conv-1").exists()
    expect(page).to_have_url(re.compile(r"/conversations/conv-1/$"))
    assert dialogs == []

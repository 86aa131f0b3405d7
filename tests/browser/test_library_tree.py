"""The Library page in a real browser: the tree with its flags, the search box (htmx,
``?q=`` in the address bar, Back), hostile text shown as text, and no CSP violation on
any of the Library's pages."""

from __future__ import annotations

import re

from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect

from sysprompt.accounts import services as accounts
from sysprompt.library import services
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)

SCRIPT = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'


def seed(author: User) -> None:
    services.variant_save(name="core", text="Core.", author=None, source="default")
    services.variant_save(name="core", provider="anthropic", text="Core A.", author=author)
    services.variant_save(name="env/git-repository", text="Git.", author=author)
    services.variant_save(name="env/sandbox", text="You run in a sandbox.", author=author)
    services.variant_save(name="old", text="Old.", author=author)
    services.variant_delete(name="old", author=author)


def test_library_tree_and_search(author_page: Page, author: User) -> None:
    seed(author)
    page = author_page

    page.goto("/")
    page.get_by_role("link", name="Library").click()
    expect(page).to_have_url(re.compile(r"/library/$"))
    tree = page.locator("#library-tree")
    expect(tree.locator(".tree-fragment")).to_have_count(4)
    env = tree.locator('.tree-node[data-name="env"]')
    expect(env.locator(".tree-segment").first).to_have_text("env/")
    expect(env.locator(".tree-fragment")).to_have_count(2)
    core = tree.locator('.tree-node[data-name="core"] .variant-row')
    expect(core).to_have_count(2)
    expect(core.nth(1)).to_contain_text("anthropic")
    # Its size in tokens: anthropic's has no offline tokenizer, so an estimate, said so.
    size = core.nth(1).locator(".variant-size .token-count")
    expect(size).to_have_text(re.compile(r"^≈[\d,]+ tokens?$"))
    expect(size).to_have_attribute("title", re.compile(r"^estimate: anthropic has no public"))
    expect(core.nth(1).locator(".badge-edited")).to_be_visible()
    expect(tree.locator('.tree-node[data-name="old"] .badge-deleted')).to_be_visible()

    page.locator("#library-search").fill("sandbox")
    expect(page).to_have_url(re.compile(r"/library/\?q=sandbox$"))
    expect(tree.locator(".tree-fragment")).to_have_count(1)
    expect(page.locator("#library-count")).to_contain_text("1 fragment match")
    tree.get_by_role("link", name="default").click()
    expect(page).to_have_url(re.compile(r"/library/env/sandbox$"))
    expect(page.locator("#variant-text")).to_contain_text("You run in a sandbox.")
    page.go_back()
    expect(page.locator("#library-search")).to_have_value("sandbox")
    expect(page.locator("#library-tree .tree-fragment")).to_have_count(1)


def test_library_hostile_text_is_shown_as_text(author_page: Page, author: User) -> None:
    services.variant_save(name="evil", text=f"Hi {SCRIPT}", author=author)
    page = author_page

    page.goto("/library/evil")
    expect(page.locator("#variant-text")).to_contain_text(SCRIPT)
    page.locator("#open-editor").click()
    expect(page.locator("#editor-modal")).to_be_visible()
    expect(page.locator("#template-editor .cm-content")).to_contain_text(SCRIPT)
    expect(page.locator("main img, #editor-modal img")).to_have_count(0)
    page.goto("/library/?q=onerror")
    expect(page.locator("#library-tree .tree-fragment")).to_have_count(1)
    expect(page.locator("main img")).to_have_count(0)

    assert page.evaluate("() => window.__xss") is None


def test_library_pages_no_csp_violation(watched: Watched, author: User) -> None:  # noqa: F811
    seed(author)
    author.user_permissions.add(Permission.objects.get(codename="add_token"))
    accounts.agent_host_ensure(name="build-01")
    page, watch = watched(User.objects.get(pk=author.pk))

    page.goto("/library/")
    page.locator("#library-search").fill("core")
    expect(page.locator("#library-tree .tree-fragment")).to_have_count(1)
    page.goto("/library/core/-/edit?provider=anthropic")
    expect(page.locator("#editor-modal")).to_be_visible()
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type(" [fragment:env/git-repository]")
    expect(page.locator("#preview-fragments")).to_contain_text("env/git-repository")
    page.evaluate("() => window.syspromptEditor.editor.setText(window.syspromptEditor.savedText)")
    page.locator("#tab-history").click()
    expect(page.locator(".history-item")).to_have_count(1)
    page.locator("#tab-settings").click()
    expect(page.locator("#setting-compress")).to_be_visible()
    page.goto("/library/-/transfer")
    expect(page.locator("#export-link")).to_be_visible()
    page.goto("/agent-hosts/")
    page.locator('.host-override[data-host="build-01"] summary').click()
    expect(page.locator(".override-form")).to_be_visible()

    watch.assert_clean(page)

"""The preview and the insert tools with the library, in a real browser: provider,
model, tools and variables; the fragments used with their variant; compression; lint
of an unknown fragment and of a cycle; insert buttons and autocomplete for fragment:,
tool: and var:."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.library import services


def open_root_editor(page: Page, project: Path) -> None:
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    page.locator("#preview-cwd").fill(str(project))


def set_text(page: Page, text: str) -> None:
    page.evaluate("(text) => window.syspromptEditor.editor.setText(text)", text)


def text_of(page: Page) -> str:
    return cast(str, page.evaluate("() => window.syspromptEditor.editor.getText()"))


def wait_text_ends(page: Page, end: str) -> None:
    """The dialog's close event (which inserts) runs a moment after it is hidden."""
    page.wait_for_function(
        "(end) => window.syspromptEditor.editor.getText().endsWith(end)", arg=end
    )


def test_preview_with_host_context_lists_fragments_used(
    author_page: Page, author: User, project: Path
) -> None:
    services.variant_save(name="core", text="Default core. [fragment:env/git]", author=author)
    services.variant_save(
        name="core", provider="anthropic", model="claude-x", text="Claude core.", author=author
    )
    services.variant_save(name="env/git", text="On git.", author=author)
    page = author_page
    open_root_editor(page, project)

    set_text(page, "[fragment:core] Tools:[if tool:shell] shell[endif] for [var:who]")
    expect(page.locator("#preview-prompt")).to_contain_text("Default core. On git. Tools: for")
    rows = page.locator("#preview-fragments tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("core")
    expect(rows.nth(0).locator(".fragment-variant")).to_have_text("default")

    page.locator("#preview-provider").fill("Anthropic")
    page.locator("#preview-model").fill("Claude X")
    page.locator("#preview-tools").fill("shell, grep")
    page.locator("#preview-vars").fill("who=the team")
    expect(page.locator("#preview-prompt")).to_have_text("Claude core. Tools: shell for the team")
    expect(rows).to_have_count(1)
    expect(rows.nth(0).locator(".fragment-variant")).to_have_text("anthropic / claude-x")
    expect(rows.nth(0).locator(".fragment-version")).to_have_text("v1")

    # The size: an estimate for anthropic, said so; exact once the model is OpenAI's.
    size = page.locator("#preview-tokens .token-count")
    expect(size).to_have_attribute("data-exact", "false")
    expect(page.locator("#preview-tokens")).to_contain_text("(estimate)")
    page.locator("#preview-provider").fill("openai")
    page.locator("#preview-model").fill("gpt-4o")
    expect(size).to_have_attribute("data-exact", "true")
    expect(size).to_have_attribute("title", "exact: counted with OpenAI's tokenizer (o200k_base)")

    page.locator("#preview-tools").fill("bad]name")
    expect(page.locator('.field-error[data-field="tools"]')).to_be_visible()


def test_preview_compression_counts(author_page: Page, project: Path) -> None:
    page = author_page
    open_root_editor(page, project)
    set_text(page, "## Title\n\n\n\n- **Label**:    text\n")

    page.locator("#tab-settings").click()
    page.locator("#setting-compress").check()
    page.locator("#tab-preview").click()

    expect(page.locator("#preview-compression")).to_contain_text("→")
    expect(page.locator("#preview-prompt")).to_have_text("# Title\n\n- Label: text")


def test_lint_reports_unknown_fragment_and_cycle(
    author_page: Page, author: User, project: Path
) -> None:
    services.variant_save(name="core", text="Core [fragment:env/git]", author=author)
    services.variant_save(name="env/git", text="Git", author=author)
    page = author_page

    open_root_editor(page, project)
    set_text(page, "[fragment:missing/one]")
    diagnostics = page.locator("#preview-diagnostics")
    expect(diagnostics).to_contain_text("missing/one")
    set_text(page, page.evaluate("() => window.syspromptEditor.savedText"))  # no "leave?"

    page.goto("/library/env/git/-/edit")
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    page.locator("#preview-cwd").fill(str(project))
    set_text(page, "Git includes [fragment:core]")
    expect(diagnostics).to_contain_text("core")
    expect(diagnostics).to_contain_text("env/git")
    expect(
        page.locator(
            "#template-editor .cm-lintRange-warning, #template-editor .cm-lintRange-error"
        ).first
    ).to_be_visible()


def test_insert_and_autocomplete_fragment_tool_and_var(
    author_page: Page, author: User, project: Path
) -> None:
    services.variant_save(name="env/sandbox", text="Sandbox.", author=author)
    page = author_page
    open_root_editor(page, project)
    page.locator("#preview-tools").fill("read_file, shell")
    page.locator("#preview-vars").fill("project=demo")
    set_text(page, "")

    # the buttons: a dialog with the names suggested
    page.locator('#editor-modal button[data-variable-dialog="fragment"]').click()
    expect(page.locator("#variable-dialog-title")).to_have_text("Insert a fragment")
    options = page.locator("#file-suggestions option")
    expect(options).to_have_count(1)
    expect(options.first).to_have_text("env/sandbox")
    page.locator("#file-path").fill("Bad Name")
    page.locator("#variable-dialog-insert").click()
    expect(page.locator("#variable-dialog-error")).to_be_visible()
    page.locator("#file-path").fill("env/sandbox")
    page.locator("#variable-dialog-insert").click()
    wait_text_ends(page, "[fragment:env/sandbox]")
    assert text_of(page) == "[fragment:env/sandbox]"

    page.locator('#editor-modal button[data-variable-dialog="tool"]').click()
    expect(page.locator("#file-suggestions option")).to_have_count(2)
    page.locator("#file-path").fill("shell")
    page.locator("#variable-dialog-insert").click()
    wait_text_ends(page, "[fragment:env/sandbox][tool:shell]")

    # autocomplete after "[var:" and "[fragment:"
    page.locator("#template-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+End")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    for typed, offered in (("[var:", "var:project"), ("[fragment:env", "fragment:env/sandbox")):
        page.keyboard.type(f" {typed}")
        expect(tooltip).to_be_visible()
        expect(tooltip).to_contain_text(offered)
        page.wait_for_timeout(300)  # CodeMirror ignores picks for a moment after opening
        page.keyboard.press("Tab")
        expect(tooltip).to_be_hidden()
        assert text_of(page).endswith(f"[{offered}]")
    expect(page.locator("#preview-prompt")).to_contain_text("Sandbox.")

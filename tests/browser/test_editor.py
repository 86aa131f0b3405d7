"""The editor modal in a real browser: the live server, a real git project, the real DB.

Every test drives the page as a person would (clicks, keys) and checks what they would
see, and, for saves, what the database holds afterwards. ``window.syspromptEditor`` is
used to read the editor's exact text and cursor, and to set up a text or a cursor
position without typing it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from sysprompt.editor import preview, views
from sysprompt.prompts import services
from sysprompt.prompts.models import TemplateVersion
from tests.browser.conftest import AGENTS_MD, BRANCH, LoginAs, PageErrors, make_user

AT_INDEX = re.compile(r"^https?://[^/]+/$")
AT_EDITOR = re.compile(r"^https?://[^/]+/editor/$")


@pytest.fixture(autouse=True)
def no_browser_dialogs(dialogs: list[str]) -> Iterator[None]:
    """The editor never uses alert/confirm/prompt/beforeunload in these flows."""
    yield
    assert dialogs == []


# --- helpers ---------------------------------------------------------------------------


def open_editor(page: Page, cwd: Path | None = None) -> None:
    """Load /editor/ (the modal opens on load); optionally preview against ``cwd``."""
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    if cwd is not None:
        page.locator("#preview-cwd").fill(str(cwd))


def text_of(page: Page) -> str:
    return cast(str, page.evaluate("() => window.syspromptEditor.editor.getText()"))


def set_text(page: Page, text: str) -> None:
    page.evaluate("(text) => window.syspromptEditor.editor.setText(text)", text)


def jump_to(page: Page, line: int, column: int) -> None:
    page.evaluate("([l, c]) => window.syspromptEditor.editor.jumpTo(l, c)", [line, column])


def select(page: Page, anchor: int, head: int) -> None:
    page.evaluate(
        """([anchor, head]) => {
            const view = window.syspromptEditor.editor.view;
            view.dispatch({ selection: { anchor, head } });
            view.focus();
        }""",
        [anchor, head],
    )


def cursor(page: Page) -> int:
    return cast(
        int, page.evaluate("() => window.syspromptEditor.editor.view.state.selection.main.head")
    )


def selected_text(page: Page) -> str:
    return cast(
        str,
        page.evaluate(
            """() => {
                const { state } = window.syspromptEditor.editor.view;
                return state.sliceDoc(state.selection.main.from, state.selection.main.to);
            }"""
        ),
    )


def cursor_line(page: Page) -> int:
    return cast(
        int,
        page.evaluate(
            """() => {
                const state = window.syspromptEditor.editor.view.state;
                return state.doc.lineAt(state.selection.main.head).number;
            }"""
        ),
    )


def expect_prompt(page: Page, expected: str) -> None:
    """Wait until the preview shows exactly ``expected`` (whitespace and all)."""
    try:
        page.wait_for_function(
            """(expected) => {
                const pre = document.getElementById("preview-prompt");
                return pre !== null && pre.textContent === expected;
            }""",
            arg=expected,
        )
    except Exception:
        actual = page.evaluate("() => document.getElementById('preview-prompt')?.textContent")
        pytest.fail(f"the preview shows {actual!r}, not {expected!r}")


def wrap_with_block(page: Page, block: str, condition: str | None = None) -> None:
    """Press a block button and confirm the dialog (with ``condition``, or its default)."""
    page.locator(f'button[data-block="{block}"]').click()
    expect(page.locator("#variable-dialog")).to_be_visible()
    if condition is not None:
        page.locator("#condition-select").select_option(condition)
    page.locator("#variable-dialog-insert").click()
    expect(page.locator("#variable-dialog")).to_be_hidden()
    # The dialog's close event (a task queued after the dialog hides) wraps the
    # selection, then focuses the editor: once it has the focus, the text is there.
    expect_editor_focused(page)


def is_dirty(page: Page) -> bool:
    return cast(bool, page.evaluate("() => window.syspromptEditor.dirty"))


def focus_in(page: Page, selector: str) -> bool:
    return cast(
        bool,
        page.evaluate(
            "(s) => document.querySelector(s).contains(document.activeElement)", selector
        ),
    )


def expect_editor_focused(page: Page) -> None:
    expect(page.locator("#template-editor .cm-editor")).to_have_class(re.compile(r"cm-focused"))
    assert focus_in(page, "#template-editor")


def select_all_and_type(page: Page, text: str) -> None:
    page.locator("#template-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(text)


def shift_tab_to(page: Page, selector: str, limit: int = 60) -> None:
    """Press Shift+Tab until ``selector`` has the focus (the toolbar precedes the editor)."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    pytest.fail(f"Shift+Tab never reached {selector}")


def versions() -> list[tuple[int, str, str | None]]:
    return [
        (v.number, v.text, v.author.get_username() if v.author else None)
        for v in TemplateVersion.objects.select_related("author").order_by("number")
    ]


# --- opening and closing -----------------------------------------------------------------


def test_open_button_shows_modal_and_traps_focus(author_page: Page) -> None:
    page = author_page
    page.goto("/")
    expect(page.locator("#editor-modal")).to_be_hidden()
    page.locator("#open-editor").click()
    expect(page.locator("#editor-modal")).to_be_visible()
    expect(page).to_have_url(AT_EDITOR)
    expect_editor_focused(page)
    for key in ("Tab", "Shift+Tab"):
        back_in_editor = 0
        for press in range(30):
            page.keyboard.press(key)
            assert focus_in(page, "#editor-modal"), f"{key} {press + 1} left the modal"
            back_in_editor += focus_in(page, "#template-editor")
        assert back_in_editor > 0, f"{key} never came round to the editor again"


def test_editor_url_opens_modal_on_load(author_page: Page) -> None:
    page = author_page
    page.goto("/editor/")
    expect(page.locator("#editor-modal")).to_be_visible()
    expect_editor_focused(page)


def test_close_button_without_changes_closes_and_returns_to_index(author_page: Page) -> None:
    page = author_page
    page.goto("/")
    page.locator("#open-editor").click()
    expect(page).to_have_url(AT_EDITOR)
    page.locator("#close-editor").click()
    expect(page.locator("#editor-modal")).to_be_hidden()
    expect(page.locator("#discard-dialog")).to_be_hidden()
    expect(page).to_have_url(AT_INDEX)


# --- preview -------------------------------------------------------------------------------


def test_typing_updates_preview(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    expect(page.locator("#preview-prompt")).not_to_contain_text("Typed in the browser")
    select_all_and_type(page, "Typed in the browser")
    expect(page.locator("#preview-prompt")).to_have_text("Typed in the browser")


def test_preview_with_project_cwd_shows_file_and_branch(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Rules: [file:AGENTS.md]Branch: [git:branch]\nMissing: [file:MISSING.md].\n")
    prompt = page.locator("#preview-prompt")
    expect(prompt).to_contain_text(AGENTS_MD.strip())
    expect(prompt).to_contain_text(f"Branch: {BRANCH}")
    rows = page.locator("#preview-variables")
    expect(rows.locator('.variable-row[data-key="file:AGENTS.md"]')).to_contain_text(
        AGENTS_MD.strip()
    )
    expect(rows.locator('.variable-row[data-key="git:branch"]')).to_contain_text(BRANCH)
    missing = rows.locator('.variable-row[data-key="file:MISSING.md"]')
    expect(missing).to_have_class(re.compile(r"is-missing"))
    expect(missing).to_contain_text("does not exist: no such file")


def test_cwd_recently_used_is_offered_and_restored_per_user(
    author_page: Page, author: User, login_as: LoginAs, project: Path, allowed_root: Path
) -> None:
    page = author_page
    (allowed_root / "other").mkdir()
    open_editor(page, cwd=project)
    expect(page.locator("#preview-result")).to_have_attribute("data-cwd", str(project))
    expect(page.locator("#preview-result")).to_have_attribute("data-cwd-valid", "true")
    options = page.locator("#recent-cwds option")
    expect(options).to_have_count(1)  # remembered on the server once the preview settled
    page.locator("#preview-cwd").fill(str(allowed_root / "other"))
    expect(page.locator("#preview-result")).to_have_attribute(
        "data-cwd", str(allowed_root / "other")
    )
    expect(options).to_have_count(2)
    page.locator("#preview-cwd").fill("/not/allowed")  # refused: never remembered
    expect(page.locator('.field-error[data-field="cwd"]')).to_be_visible()

    # Another browser (nothing stored in it) as the same user: the editor opens there.
    again = login_as(author)
    open_editor(again)
    expect(again.locator("#preview-cwd")).to_have_value(str(allowed_root / "other"))
    options = again.locator("#recent-cwds option")
    assert options.evaluate_all("os => os.map(o => o.value)") == [
        str(allowed_root / "other"),
        str(project),
    ]
    expect(again.locator("#preview-result")).to_have_attribute(
        "data-cwd", str(allowed_root / "other")
    )
    # Another user starts from the first allowed root, with nothing to offer.
    someone = login_as(make_user("grace"))
    open_editor(someone)
    expect(someone.locator("#preview-cwd")).to_have_value(str(allowed_root))
    expect(someone.locator("#recent-cwds option")).to_have_count(0)


def test_unclosed_if_gets_diagnostic_on_its_line(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "line one\nline two\n[if file:AGENTS.md]\nline four\n")
    diagnostic = page.locator('#preview-diagnostics .diagnostic[data-line="3"]')
    expect(diagnostic).to_have_count(1)
    expect(diagnostic).to_contain_text("never closed")
    # Inline in CodeMirror: an error range on line 3 and a marker in the lint gutter.
    lint_range = page.locator("#template-editor .cm-lintRange-error")
    expect(lint_range).to_have_count(1)
    range_line = page.evaluate(
        """() => {
            const view = window.syspromptEditor.editor.view;
            const mark = document.querySelector("#template-editor .cm-lintRange-error");
            return view.state.doc.lineAt(view.posAtDOM(mark)).number;
        }"""
    )
    assert range_line == 3
    expect(page.locator("#template-editor .cm-gutter-lint .cm-lint-marker-error")).to_have_count(1)
    # Clicking the diagnostic puts the cursor at its line and column.
    jump_to(page, 1, 1)
    assert cursor_line(page) == 1
    diagnostic.click()
    expect_editor_focused(page)
    assert cursor_line(page) == 3
    column = int(cast(str, diagnostic.get_attribute("data-column")))
    assert cursor(page) == len("line one\nline two\n") + column - 1


# --- inserting variables and blocks ----------------------------------------------------


def test_variable_button_inserts_at_cursor(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "Hello world\nSecond line\n")
    jump_to(page, 2, 8)  # before "line"
    page.locator('button[data-insert="[git:branch]"]').click()
    assert text_of(page) == "Hello world\nSecond [git:branch]line\n"
    expect_editor_focused(page)
    page.keyboard.type("X")
    assert text_of(page) == "Hello world\nSecond [git:branch]Xline\n"


def test_variable_button_with_selection_replaces_it(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "Hello world\n")
    select(page, 6, 11)  # "world"
    page.locator('button[data-insert="[prompt:cwd]"]').click()
    assert text_of(page) == "Hello [prompt:cwd]\n"
    expect_editor_focused(page)
    assert cursor(page) == len("Hello [prompt:cwd]")


def test_file_button_suggests_project_files_and_inserts(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Read: \nDone.\n")
    jump_to(page, 1, 7)
    page.locator('button[data-variable-dialog="file"]').click()
    dialog = page.locator("#variable-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#condition-field")).to_be_hidden()
    expect(page.locator("#file-path")).to_be_focused()
    # The suggestions come from the preview's cwd (the project), not the allowed root.
    expect(page.locator("#file-suggestions option")).to_contain_text(["AGENTS.md", "README.md"])
    page.locator("#file-path").fill("AGENTS.md")
    page.locator("#variable-dialog-insert").click()
    expect(dialog).to_be_hidden()
    expect_editor_focused(page)  # the dialog's close event inserted the text first
    assert text_of(page) == "Read: [file:AGENTS.md]\nDone.\n"


@pytest.mark.parametrize(
    ("block", "condition", "path", "expected"),
    [
        ("if", "git:branch", None, "[if git:branch]keep this[endif]"),
        ("if-not", "git:branch", None, "[if !git:branch]keep this[endif]"),
        ("if-else", "git:branch", None, "[if git:branch]keep this[else][endif]"),
        ("if", "file:", "AGENTS.md", "[if file:AGENTS.md]keep this[endif]"),
    ],
    ids=["if", "if-not", "if-else", "if-file"],
)
def test_block_button_with_selection_wraps_it(
    author_page: Page,
    project: Path,
    block: str,
    condition: str,
    path: str | None,
    expected: str,
) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\nSay keep this now\nOutro\n")
    select(page, len("Intro\nSay "), len("Intro\nSay keep this"))
    page.locator(f'button[data-block="{block}"]').click()
    expect(page.locator("#variable-dialog")).to_be_visible()
    expect(page.locator("#condition-select")).to_be_focused()
    page.locator("#condition-select").select_option(condition)
    if path is None:
        expect(page.locator("#file-path-field")).to_be_hidden()
    else:
        expect(page.locator("#file-path-field")).to_be_visible()
        page.locator("#file-path").fill(path)
    expect(page.locator("#variable-dialog-insert")).to_have_text("Wrap")
    page.locator("#variable-dialog-insert").click()
    expect(page.locator("#variable-dialog")).to_be_hidden()
    expect_editor_focused(page)  # the dialog's close event inserted the text first
    assert text_of(page) == f"Intro\nSay {expected} now\nOutro\n"


def test_if_else_button_leaves_cursor_in_else_branch(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "Say keep this\n")
    select(page, len("Say "), len("Say keep this"))
    page.locator('button[data-block="if-else"]').click()
    page.locator("#condition-select").select_option("git:branch")
    page.locator("#variable-dialog-insert").click()
    expect_editor_focused(page)
    page.keyboard.type("otherwise")
    assert text_of(page) == "Say [if git:branch]keep this[else]otherwise[endif]\n"


def test_if_button_whole_lines_puts_tags_on_own_lines(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\nline one\nline two\nOutro\n")
    # From the start of "line one" to the end of "line two" (as Home, Shift+Down, Shift+End).
    select(page, len("Intro\n"), len("Intro\nline one\nline two"))
    wrap_with_block(page, "if", "git:branch")
    assert text_of(page) == "Intro\n[if git:branch]\nline one\nline two\n[endif]\nOutro\n"
    expect_editor_focused(page)
    assert selected_text(page) == "line one\nline two"  # still selected
    # The tags' lines vanish from the prompt: no blank line where they stood.
    expect_prompt(page, "Intro\nline one\nline two\nOutro\n")


def test_if_not_button_whole_lines_through_next_line_start_puts_tags_on_own_lines(
    author_page: Page, project: Path
) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\nline one\nline two\nOutro")
    # A selection that ends at the start of the next line (Shift+Down) covers two lines.
    select(page, len("Intro\n"), len("Intro\nline one\nline two\n"))
    wrap_with_block(page, "if-not", "git:branch")
    assert text_of(page) == "Intro\n[if !git:branch]\nline one\nline two\n[endif]\nOutro"
    expect_prompt(page, "Intro\nOutro")


def test_if_else_button_whole_lines_puts_else_on_own_line(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\nOn a branch.\nOutro\n")
    select(page, len("Intro\nOn a branch.\n"), len("Intro\n"))  # backwards, through the line end
    wrap_with_block(page, "if-else", "git:branch")
    assert text_of(page) == "Intro\n[if git:branch]\nOn a branch.\n[else]\n\n[endif]\nOutro\n"
    expect_editor_focused(page)
    assert cursor_line(page) == 5  # the empty line of the else branch
    page.keyboard.type("No branch.")
    assert text_of(page) == (
        "Intro\n[if git:branch]\nOn a branch.\n[else]\nNo branch.\n[endif]\nOutro\n"
    )
    expect_prompt(page, "Intro\nOn a branch.\nOutro\n")


def test_if_button_empty_line_puts_tags_on_own_lines(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\n\nOutro\n")
    jump_to(page, 2, 1)
    wrap_with_block(page, "if", "git:branch")
    assert text_of(page) == "Intro\n[if git:branch]\n\n[endif]\nOutro\n"
    assert cursor_line(page) == 3
    page.keyboard.type("Branch: [git:branch].")
    assert text_of(page) == "Intro\n[if git:branch]\nBranch: [git:branch].\n[endif]\nOutro\n"
    expect_prompt(page, f"Intro\nBranch: {BRANCH}.\nOutro\n")


def test_if_button_whole_lines_crlf_keeps_crlf(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\r\nline\r\nOutro\r\n")
    select(page, len("Intro\r\n"), len("Intro\r\nline"))
    wrap_with_block(page, "if", "git:branch")
    assert text_of(page) == "Intro\r\n[if git:branch]\r\nline\r\n[endif]\r\nOutro\r\n"


def test_if_button_last_line_without_line_end_puts_endif_on_own_line(
    author_page: Page, project: Path
) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Intro\nlast")
    select(page, len("Intro\n"), len("Intro\nlast"))
    wrap_with_block(page, "if", "git:branch")
    assert text_of(page) == "Intro\n[if git:branch]\nlast\n[endif]"
    expect_prompt(page, "Intro\nlast\n")


def test_condition_dialog_default_is_git_branch(author_page: Page, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    set_text(page, "Say keep this\n")
    select(page, len("Say "), len("Say keep this"))
    page.locator('button[data-block="if"]').click()
    condition = page.locator("#condition-select")
    expect(condition).to_be_focused()
    expect(condition).to_have_value("git:branch")
    # Variables that always exist come last, marked as such.
    options = cast(
        list[list[str]],
        condition.evaluate(
            "(select) => [...select.options].map((o) => [o.value, o.textContent.trim()])"
        ),
    )
    always = ["system:time", "system:date", "system:os", "system:hostname", "prompt:cwd"]
    assert sorted(value for value, _ in options[-len(always) :]) == sorted(always)
    for value, label in options:
        assert label.endswith("(always exists)") == (value in always), (value, label)
    assert [value for value, _ in options[: -len(always)]] == [
        "prompt:model",
        "prompt:conversation_id",
        "prompt:provider",
        "git:branch",
        "git:status",
        "file:",
        "tool:",
        "var:",
        "fragment:",
    ]
    expect(page.locator("#condition-help")).to_contain_text("always exists is always kept")
    # Confirming the default wraps in [if git:branch].
    page.locator("#variable-dialog-insert").click()
    expect_editor_focused(page)
    assert text_of(page) == "Say [if git:branch]keep this[endif]\n"


def test_autocomplete_on_bracket_offers_and_accepts_variable(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "")
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type("Branch: [gi")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip).to_be_visible()
    expect(tooltip.locator("li", has_text="git:branch")).to_have_count(1)
    selected = tooltip.locator("li[aria-selected]")
    expect(selected).to_contain_text("git:branch")  # the list opens with the first picked
    # CodeMirror ignores the arrows and Enter for 75 ms after the list opens (so that a
    # key meant for the text does not pick an option): move down until the list answers
    # (git:status), back up, and accept git:branch.
    for _ in range(200):
        page.keyboard.press("ArrowDown")
        if "git:status" in selected.inner_text():
            break
    expect(selected).to_contain_text("git:status")
    page.keyboard.press("ArrowUp")
    expect(selected).to_contain_text("git:branch")
    page.keyboard.press("Enter")
    expect(tooltip).to_be_hidden()
    assert text_of(page) == "Branch: [git:branch]"
    page.keyboard.type(".")
    assert text_of(page) == "Branch: [git:branch]."


def test_autocomplete_enter_accepts_first_option(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "")
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type("Branch: [gi")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip.locator("li[aria-selected]")).to_contain_text("git:branch")
    page.wait_for_timeout(300)  # well past CodeMirror's 75 ms in which Enter is ignored
    page.keyboard.press("Enter")
    expect(tooltip).to_be_hidden()
    assert text_of(page) == "Branch: [git:branch]"
    expect_editor_focused(page)


def test_autocomplete_escape_then_enter_inserts_newline(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "")
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type("Note [")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip).to_be_visible()
    page.keyboard.press("Escape")  # closes the list, not the editor
    expect(tooltip).to_be_hidden()
    expect(page.locator("#editor-modal")).to_be_visible()
    page.keyboard.press("Enter")
    assert text_of(page) == "Note [\n"
    page.keyboard.type("Next line.")
    assert text_of(page) == "Note [\nNext line."


def test_typing_over_a_highlighted_selection_replaces_it_without_inline_style(
    author_page: Page,
) -> None:
    """Home, Shift+End, then a character: Chrome would put it in a <span style> (the
    CSP refuses it and the console says so, which fails every browser test)."""
    services.template_save(text="[git:branch] first line\nSecond [prompt:cwd] line\n")
    page = author_page
    open_editor(page)
    page.locator("#template-editor .cm-line").first.click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    assert selected_text(page) == "[git:branch] first line"
    page.keyboard.type("[")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip).to_be_visible()  # a typed "[" still opens the list
    assert text_of(page) == "[\nSecond [prompt:cwd] line\n"
    assert page.locator("#template-editor .cm-content [style]").count() == 0
    page.keyboard.press("Escape")
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("x")  # select all and type: the same path
    assert text_of(page) == "x"
    assert is_dirty(page)


def test_autocomplete_bare_bracket_lists_variables_before_keywords(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "")
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type("[")
    options = page.locator(".cm-tooltip-autocomplete li")
    expect(options.first).to_be_visible()
    labels = [label.strip() for label in options.locator(".cm-completionLabel").all_inner_texts()]
    assert labels[-3:] == ["else", "endif", "if"]
    assert all(":" in label for label in labels[:-3]), labels
    assert "git:branch" in labels


def test_autocomplete_tab_accepts_first_or_picked(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    set_text(page, "")
    page.locator("#template-editor .cm-content").click()
    page.keyboard.type("Branch: [gi")
    tooltip = page.locator(".cm-tooltip-autocomplete")
    expect(tooltip).to_be_visible()
    page.keyboard.press("Tab")  # Tab takes the one picked: the first, git:branch
    expect(tooltip).to_be_hidden()
    assert text_of(page) == "Branch: [git:branch]"
    expect_editor_focused(page)
    page.keyboard.type(" [gi")
    expect(tooltip).to_be_visible()
    selected = tooltip.locator("li[aria-selected]")
    for _ in range(200):  # until the list answers the arrows (75 ms after it opens)
        page.keyboard.press("ArrowDown")
        if "git:status" in selected.inner_text():
            break
    expect(selected).to_contain_text("git:status")
    page.keyboard.press("Tab")
    expect(tooltip).to_be_hidden()
    assert text_of(page) == "Branch: [git:branch] [git:status]"
    expect_editor_focused(page)
    # With no list open, Tab still leaves the editor.
    page.keyboard.press("Tab")
    assert not focus_in(page, "#template-editor")


# --- saving ----------------------------------------------------------------------------------


def test_save_button_stores_editor_text_and_author(author_page: Page, author: User) -> None:
    page = author_page
    open_editor(page)
    expect(page.locator("#editor-version")).to_have_text("default")
    select_all_and_type(page, "Saved with the button: [git:branch]")
    expect(page.locator("#dirty-marker")).to_be_visible()
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    assert versions() == [(1, "Saved with the button: [git:branch]", author.get_username())]
    assert text_of(page) == "Saved with the button: [git:branch]"
    expect(page.locator("#dirty-marker")).to_be_hidden()
    expect(page.locator("#editor-version")).to_have_text("v1")
    assert not is_dirty(page)


def test_save_ctrl_s_stores_editor_text(author_page: Page, author: User) -> None:
    page = author_page
    open_editor(page)
    select_all_and_type(page, "First")
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    expect(page.locator("#dirty-marker")).to_be_hidden()
    page.keyboard.type(", second")
    expect(page.locator("#dirty-marker")).to_be_visible()
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("Saved as version 2.")
    expect(page.locator("#editor-version")).to_have_text("v2")
    expect(page.locator("#dirty-marker")).to_be_hidden()
    name = author.get_username()
    assert versions() == [(1, "First", name), (2, "First, second", name)]


@pytest.fixture
def held_previews(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldPreviews]:
    """The live server's previews, held in flight on demand (the server renders each as
    usual once let go)."""
    held = HeldPreviews()
    real = preview.preview_context  # what the editor's preview view calls (imported there)

    def preview_context(*args: Any, **kwargs: Any) -> Any:
        if held.holding.is_set():
            held.entered.set()
            held.release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(views, "preview_context", preview_context)
    yield held
    held.release.set()


PREVIEW_ASKS = """() => {
    window.previewAsks = 0;
    window.previewsShown = [];
    document.body.addEventListener("htmx:confirm", (event) => {
        if (event.detail.elt.id === "preview-form") window.previewAsks += 1;
    });
    document.body.addEventListener("htmx:afterSettle", (event) => {
        const shown = document.getElementById("preview-prompt");
        if (event.detail.target.id === "preview") window.previewsShown.push(shown.textContent);
    });
}"""
"""Counts the previews the page asks for (htmx:confirm comes first, before hx-sync
decides whether the request waits, replaces the one in flight, or goes), and keeps
the prompt each preview shown showed."""


class HeldPreviews:
    def __init__(self) -> None:
        self.holding = threading.Event()
        self.entered = threading.Event()
        self.release = threading.Event()


def test_save_during_an_in_flight_preview_logs_no_error(
    author_page: Page, author: User, held_previews: HeldPreviews
) -> None:
    """Issue 32, point 11: Save (Ctrl+S, then the button) while a preview is in flight,
    and a newer change meanwhile: no request is aborted (htmx logs an abort as a console
    error, which fails the test at teardown), the stale preview is not shown, the newest
    is."""
    page = author_page
    open_editor(page)
    page.evaluate(PREVIEW_ASKS)
    held_previews.holding.set()
    select_all_and_type(page, "First draft")
    assert held_previews.entered.wait(30)  # the preview of "First draft" is in flight

    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    page.keyboard.type(", second")
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 2.")
    page.wait_for_function("() => window.previewAsks >= 2")  # while the first is held
    held_previews.holding.clear()
    held_previews.release.set()

    expect_prompt(page, "First draft, second")
    page.wait_for_function("() => window.previewsShown.length > 0")
    assert page.evaluate("() => window.previewsShown") == ["First draft, second"]
    assert versions() == [
        (1, "First draft", author.get_username()),
        (2, "First draft, second", author.get_username()),
    ]


def test_save_crlf_text_is_byte_identical(author_page: Page) -> None:
    page = author_page
    open_editor(page)
    text = "first line\r\nsecond [git:branch]\r\n\r\nlast\r\n"
    set_text(page, text)
    assert text_of(page) == text
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    stored = TemplateVersion.objects.get(number=1).text
    assert stored.encode() == text.encode()
    assert TemplateVersion.objects.count() == 1
    expect(page.locator("#dirty-marker")).to_be_hidden()


def test_save_without_permission_saves_nothing(
    login_as: LoginAs, transactional_db: None, project: Path
) -> None:
    page = login_as(make_user("viewer", can_edit=False))
    save_requests: list[str] = []
    page.on("request", lambda r: save_requests.append(r.url) if "/editor/save" in r.url else None)
    open_editor(page)
    expect(page.locator("#save-button")).to_be_disabled()
    select_all_and_type(page, "A viewer's attempt")
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("You may preview but not save this template.")
    # The page refuses before sending anything (the server would refuse too: 403).
    assert save_requests == []
    assert TemplateVersion.objects.count() == 0
    expect(page.locator("#dirty-marker")).to_be_visible()


# --- conflicts -----------------------------------------------------------------------------


def _conflict(login_as: LoginAs, author: User, page_errors: PageErrors) -> tuple[Page, Page]:
    """B saves first, then A saves from the stale base: A's page shows the conflict (the
    browser logs its 412 as a console error)."""
    page_a = login_as(author)
    page_b = login_as(make_user("bob"))
    open_editor(page_a)
    open_editor(page_b)
    set_text(page_b, "B's line\n")
    page_b.locator("#save-button").click()
    expect(page_b.locator("#save-status")).to_have_text("Saved as version 1.")
    set_text(page_a, "A's line\n")
    page_a.locator("#save-button").click()
    dialog = page_a.locator("#conflict-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("bob saved version 1")
    expect(dialog.locator(".diff tr.diff-delete")).to_have_count(1)
    expect(dialog.locator(".diff tr.diff-delete")).to_contain_text("B's line")
    expect(dialog.locator(".diff tr.diff-insert")).to_have_count(1)
    expect(dialog.locator(".diff tr.diff-insert")).to_contain_text("A's line")
    assert versions() == [(1, "B's line\n", "bob")]
    page_errors.take("status of 412 (Precondition Failed)", 1)
    return page_a, page_b


def test_conflict_keep_mine_saves_over_theirs(
    login_as: LoginAs, author: User, project: Path, page_errors: PageErrors
) -> None:
    page_a, _ = _conflict(login_as, author, page_errors)
    page_a.locator("#conflict-keep-mine").click()
    expect(page_a.locator("#conflict-dialog")).to_be_hidden()
    expect(page_a.locator("#save-status")).to_have_text("Saved as version 2.")
    assert versions() == [(1, "B's line\n", "bob"), (2, "A's line\n", author.get_username())]
    assert text_of(page_a) == "A's line\n"
    expect(page_a.locator("#editor-version")).to_have_text("v2")
    expect(page_a.locator("#dirty-marker")).to_be_hidden()


def test_conflict_take_theirs_loads_their_text(
    login_as: LoginAs, author: User, project: Path, page_errors: PageErrors
) -> None:
    page_a, _ = _conflict(login_as, author, page_errors)
    page_a.locator("#conflict-take-theirs").click()
    expect(page_a.locator("#conflict-dialog")).to_be_hidden()
    assert text_of(page_a) == "B's line\n"
    assert not is_dirty(page_a)
    expect(page_a.locator("#dirty-marker")).to_be_hidden()
    expect(page_a.locator("#editor-version")).to_have_text("v1")
    expect(page_a.locator("#save-status")).to_contain_text("Loaded version 1")
    assert versions() == [(1, "B's line\n", "bob")]
    # The next save is based on their version: no second conflict.
    page_a.keyboard.type("A: ")
    page_a.keyboard.press("Control+s")
    expect(page_a.locator("#save-status")).to_have_text("Saved as version 2.")
    assert versions() == [(1, "B's line\n", "bob"), (2, "A: B's line\n", author.get_username())]


# --- history -------------------------------------------------------------------------------


def test_history_restore_old_version_then_save(author_page: Page, author: User) -> None:
    services.template_save(text="one\n", author=author)
    services.template_save(text="two\n", author=author)
    page = author_page
    open_editor(page)
    assert text_of(page) == "two\n"
    page.locator("#tab-history").click()
    expect(page.locator("#side-history")).to_be_visible()
    item = page.locator('.history-item[data-version="1"]')
    expect(item).to_be_visible()
    expect(page.locator(".history-item")).to_have_count(2)
    item.get_by_role("button", name="Diff with editor").click()
    diff = page.locator("#history-diff .diff")
    expect(diff.locator("tr.diff-delete")).to_contain_text("one")
    expect(diff.locator("tr.diff-insert")).to_contain_text("two")
    item.locator('[data-restore="1"]').click()
    expect(page.locator("#dirty-marker")).to_be_visible()
    assert text_of(page) == "one\n"
    assert is_dirty(page)
    page.locator("#save-button").click()
    expect(page.locator("#save-status")).to_have_text("Saved as version 3.")
    name = author.get_username()
    assert versions() == [(1, "one\n", name), (2, "two\n", name), (3, "one\n", name)]
    expect(page.locator('.history-item[data-version="3"]')).to_be_visible()


# --- Escape and discarding ----------------------------------------------------------------


def test_escape_with_changes_asks_before_discarding(author_page: Page, author: User) -> None:
    services.template_save(text="saved text\n", author=author)
    page = author_page
    page.goto("/")
    page.locator("#open-editor").click()
    expect_editor_focused(page)
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type("unsaved")
    # Wait for the preview first: until autocompletion has looked at the last keystroke
    # (100 ms), CodeMirror's completion keymap takes Escape for itself.
    expect(page.locator("#preview-prompt")).to_contain_text("unsaved")
    modal = page.locator("#editor-modal")
    discard = page.locator("#discard-dialog")
    page.keyboard.press("Escape")
    expect(discard).to_be_visible()
    expect(modal).to_be_visible()
    discard.locator("button[value=keep]").click()
    expect(discard).to_be_hidden()
    expect(modal).to_be_visible()
    expect(page).to_have_url(AT_EDITOR)
    assert text_of(page) == "saved text\nunsaved"
    expect_editor_focused(page)
    page.keyboard.press("Escape")
    expect(discard).to_be_visible()
    page.locator("#discard-confirm").click()
    expect(discard).to_be_hidden()
    expect(modal).to_be_hidden()
    expect(page).to_have_url(AT_INDEX)
    page.locator("#open-editor").click()
    expect(modal).to_be_visible()
    assert text_of(page) == "saved text\n"
    assert not is_dirty(page)
    assert versions() == [(1, "saved text\n", author.get_username())]


def test_escape_without_changes_closes_at_once(author_page: Page) -> None:
    page = author_page
    page.goto("/")
    page.locator("#open-editor").click()
    expect_editor_focused(page)
    page.keyboard.press("Escape")
    expect(page.locator("#editor-modal")).to_be_hidden()
    expect(page.locator("#discard-dialog")).to_be_hidden()
    expect(page).to_have_url(AT_INDEX)


# --- the keyboard alone --------------------------------------------------------------------


def test_keyboard_alone_inserts_and_saves(author_page: Page, author: User, project: Path) -> None:
    page = author_page
    open_editor(page, cwd=project)
    page.locator("#template-editor .cm-content").focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Branch: ")
    shift_tab_to(page, 'button[data-insert="[git:branch]"]')
    page.keyboard.press("Enter")
    assert text_of(page) == "Branch: [git:branch]"
    expect_editor_focused(page)
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("Saved as version 1.")
    page.keyboard.type("\nRules: ")
    shift_tab_to(page, 'button[data-variable-dialog="file"]')
    page.keyboard.press("Enter")
    expect(page.locator("#variable-dialog")).to_be_visible()
    expect(page.locator("#file-path")).to_be_focused()
    page.keyboard.type("AGENTS.md")
    page.keyboard.press("Enter")
    expect(page.locator("#variable-dialog")).to_be_hidden()
    expect_editor_focused(page)  # the dialog's close event inserted the text first
    assert text_of(page) == "Branch: [git:branch]\nRules: [file:AGENTS.md]"
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_have_text("Saved as version 2.")
    name = author.get_username()
    assert versions() == [
        (1, "Branch: [git:branch]", name),
        (2, "Branch: [git:branch]\nRules: [file:AGENTS.md]", name),
    ]

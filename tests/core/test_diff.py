"""sysprompt_core.diff: line diffs as the editor shows them."""

from __future__ import annotations

import pytest

from sysprompt_core.diff import DiffLine, text_diff


@pytest.mark.parametrize(
    ("old", "new", "added", "removed", "identical"),
    [
        ("", "", 0, 0, True),
        (None, None, 0, 0, True),
        ("a\nb\n", "a\nb\n", 0, 0, True),
        ("a\nb\n", "a\nb", 0, 0, False),  # only the final newline differs
        ("a\r\nb\r\n", "a\nb\n", 0, 0, False),  # only line endings differ
        (None, "a\nb", 2, 0, False),
        ("a\nb", None, 0, 2, False),
        ("a\nb\nc", "a\nB\nc", 1, 1, False),
        ("a\nb\nc", "a\nc", 0, 1, False),
        ("a\nc", "a\nb\nc", 1, 0, False),
    ],
)
def test_text_diff_counts_lines_when_texts_differ(
    old: str | None, new: str | None, added: int, removed: int, identical: bool
) -> None:
    diff = text_diff(old, new)

    assert (diff.added, diff.removed, diff.identical) == (added, removed, identical)
    assert diff.changed is bool(added or removed)


def test_text_diff_numbers_lines_on_both_sides() -> None:
    diff = text_diff("a\nb\nc\n", "a\nB\nc\nd")

    (hunk,) = diff.hunks
    assert hunk.header == "@@ -1,3 +1,4 @@"
    assert hunk.lines == (
        DiffLine("equal", 1, 1, "a"),
        DiffLine("delete", 2, None, "b"),
        DiffLine("insert", None, 2, "B"),
        DiffLine("equal", 3, 3, "c"),
        DiffLine("insert", None, 4, "d"),
    )


def test_text_diff_splits_distant_changes_into_hunks_with_context() -> None:
    old = "\n".join(f"line {n}" for n in range(1, 21))
    new = old.replace("line 2\n", "line two\n").replace("line 19", "line nineteen")

    diff = text_diff(old, new, context=2)

    assert [hunk.header for hunk in diff.hunks] == ["@@ -1,4 +1,4 @@", "@@ -17,4 +17,4 @@"]
    assert [line.text for line in diff.hunks[1].lines if line.kind != "equal"] == [
        "line 19",
        "line nineteen",
    ]


def test_text_diff_keeps_markup_as_text() -> None:
    diff = text_diff("", "<script>alert(1)</script>")

    assert diff.hunks[0].lines == (DiffLine("insert", None, 1, "<script>alert(1)</script>"),)

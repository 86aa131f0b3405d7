"""sysprompt_core.diff.unified_diff: the ``diff -u`` text the releases show (releases §1,
§3), applied as a patch, cut at its size; what is not diffed says why."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.diff import DIFF_MAX_CHANGED_LINES, unified_diff

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patched(before: str, diff: str) -> str:
    """``before`` with the unified ``diff`` applied (lines joined with LF)."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    lines = diff.splitlines()[2:]
    index = 0
    while index < len(lines):
        match = HUNK.fullmatch(lines[index])
        assert match is not None, lines[index]
        start = int(match[1]) - (0 if match[2] == "0" else 1)
        out.extend(old[at:start])
        at = start
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            ending = "" if index + 1 < len(lines) and lines[index + 1].startswith("\\") else "\n"
            if line.startswith("\\"):
                pass
            elif line.startswith(" "):
                out.append(old[at])
                at += 1
            elif line.startswith("-"):
                at += 1
            else:
                out.append(line[1:] + ending)
            index += 1
    out.extend(old[at:])
    return "".join(out)


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "x\n", "", "tail"]), max_size=40)


@given(old=lines, new=lines)
def test_unified_diff_applied_to_before_gives_after(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)

    diff = unified_diff(before, after)

    assert diff.changed == (before != after)
    if diff.changed:
        assert diff.text.startswith("--- before\n+++ after\n@@ ")
        assert patched(before, diff.text) == after


def test_unified_diff_shows_three_lines_of_context_and_counts() -> None:
    before = "".join(f"line {n}\n" for n in range(1, 21))
    after = before.replace("line 10\n", "line ten\n")

    diff = unified_diff(before, after)

    assert diff.text == (
        "--- before\n+++ after\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n"
        "-line 10\n+line ten\n line 11\n line 12\n line 13\n"
    )
    assert (diff.added, diff.removed, diff.truncated) == (1, 1, False)


def test_unified_diff_marks_a_missing_final_newline_and_line_endings() -> None:
    diff = unified_diff("a\r\nb", "a\nb")

    assert diff.text == (
        "--- before\n+++ after\n@@ -1,2 +1,2 @@\n-a\r\n+a\n b\n\\ No newline at end of file\n"
    )


def test_unified_diff_of_no_prompt_against_one() -> None:
    assert unified_diff(None, "x\n").text == "--- before\n+++ after\n@@ -0,0 +1 @@\n+x\n"
    assert unified_diff("", None).text == ""


def test_unified_diff_is_cut_at_max_chars_when_the_change_is_large() -> None:
    before = "".join(f"{n} " + "o" * 1_000 + "\n" for n in range(100))
    after = "".join(f"{n} " + "n" * 1_000 + "\n" for n in range(100))

    diff = unified_diff(before, after, max_chars=10_000)

    assert diff.truncated and diff.too_large is None
    assert len(diff.text) < 10_000 + 100
    assert diff.text.endswith("more diff lines left out (over 10,000 characters)\n")
    assert (diff.added, diff.removed) == (100, 100)


def test_unified_diff_of_more_changed_lines_than_shown_says_so_with_sizes() -> None:
    after = "first\nlast\n"
    before = (
        "first\n" + "".join(f"line {n}\n" for n in range(DIFF_MAX_CHANGED_LINES + 1)) + "last\n"
    )

    diff = unified_diff(before, after)

    assert (diff.text, diff.changed, diff.truncated) == ("", False, False)
    assert diff.too_large is not None
    assert diff.too_large.summary.startswith("Too large to show a line diff: ")
    assert diff.too_large.summary == (
        "Too large to show a line diff: 0 lines added and 5,001 removed, more than 5,000 "
        f"(old: 5,003 lines, {len(before):,} characters; new: 2 lines, 11 characters)"
    )
    assert (diff.added, diff.removed) == (0, DIFF_MAX_CHANGED_LINES + 1)


def test_unified_diff_cuts_one_huge_line_when_it_alone_is_over_the_limit() -> None:
    diff = unified_diff("a" * 1_000_000, "b" * 1_000_000, max_chars=1000)

    assert diff.truncated
    assert len(diff.text) < 1200
    assert "-aaaa" in diff.text


def test_unified_diff_matches_only_what_lies_between_the_common_ends() -> None:
    common = "".join(f"same {n}\n" for n in range(49_999))
    before = common + "old\n" + common
    after = common + "new\n" + common

    diff = unified_diff(before, after)

    assert diff.text.splitlines()[2] == "@@ -49997,7 +49997,7 @@"
    assert (diff.added, diff.removed) == (1, 1)

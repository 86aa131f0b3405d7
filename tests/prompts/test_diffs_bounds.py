"""sysprompt.prompts.diffs: the bounds. Equal texts are not diffed; a diff too large to
show (too many lines, too many changes, not done by the deadline) says so with the
sizes of both sides instead of working for minutes."""

from __future__ import annotations

from sysprompt.prompts import diffs
from sysprompt.prompts.diffs import DiffLine, text_diff

# 40,000 lines that alternate between two values: difflib (autojunk off) took minutes
# on these, found a line at a time among 20,000 others equal to it.
PERIODIC = "\n".join("x" if n % 2 else "" for n in range(40_000))


def test_text_diff_equal_texts_diffs_nothing() -> None:
    diff = text_diff(PERIODIC, PERIODIC)

    assert (diff.hunks, diff.identical, diff.too_large) == ((), True, None)


def test_text_diff_periodic_40000_lines_shows_the_changes() -> None:
    new = "head\n" + PERIODIC.split("\n", 1)[1] + "\ntail"

    diff = text_diff(PERIODIC, new)

    assert diff.too_large is None
    assert (diff.added, diff.removed) == (2, 1)
    changes = [line for hunk in diff.hunks for line in hunk.lines if line.kind != "equal"]
    assert changes == [
        DiffLine("delete", 1, None, ""),
        DiffLine("insert", None, 1, "head"),
        DiffLine("insert", None, 40_001, "tail"),
    ]


def test_text_diff_too_many_lines_is_not_diffed() -> None:
    old = "\n".join(f"line {n}" for n in range(diffs.DIFF_MAX_LINES + 1))

    diff = text_diff(old, old + "\nmore")

    assert diff.hunks == () and not diff.identical
    assert diff.too_large is not None
    assert (diff.too_large.old_lines, diff.too_large.new_lines) == (100_001, 100_002)
    assert diff.too_large.old_characters == len(old)
    assert "more than 100,000 lines" in diff.too_large.summary


def test_text_diff_too_many_changes_is_not_shown() -> None:
    old = "\n".join(f"kept {n}" for n in range(1_000))
    new = old.replace("kept 500", "\n".join(f"new {n}" for n in range(5_000)))

    diff = text_diff(old, new)

    assert diff.hunks == ()
    assert (diff.added, diff.removed) == (5_000, 1)
    assert diff.too_large is not None
    assert "5,000 lines added and 1 removed, more than 5,000" in diff.too_large.summary


def test_text_diff_stops_at_the_deadline() -> None:
    """100,000 distinct lines against the same lines reversed: Myers' algorithm needs
    about 10^10 steps here; the deadline ends it."""
    lines = [f"line {n}" for n in range(diffs.DIFF_MAX_LINES)]

    diff = text_diff("\n".join(lines), "\n".join(reversed(lines)))

    assert diff.too_large is not None and diff.hunks == ()
    assert "not computed within 1 s" in diff.too_large.summary
    assert "old: 100,000 lines" in diff.too_large.summary

"""sysprompt_core.diff: the bounds. Equal texts are not diffed; a diff too large to
show (too many lines, too many changes, not done by the deadline) says so with the
sizes of both sides instead of working for minutes; diffs sharing a deadline take no
longer together than it.

The adversarial texts (issue 24, point 2): one line repeated 1,000 times against the
same with every other line changed. The releases' diff (difflib, 2,000 lines matched)
took 11 s on them, 17 s in the review's run."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from sysprompt_core import diff as diffs
from sysprompt_core.diff import BoundedDiff, Deadline, Diff, DiffLine, text_diff
from sysprompt_core.releases import unified_diff

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


BOUND_SECONDS = 3.0
"""Wall seconds a diff on adversarial texts may take here: its 1 s deadline, with room
for a shared 2-core machine (difflib took 11 s on the smallest)."""


def adversarial(lines: int) -> tuple[str, str]:
    """One line repeated, against the same with every other line changed."""
    old = "- rule\n" * lines
    new = "".join("- rule\n" if n % 2 else "- other\n" for n in range(lines))
    return old, new


DIFFS: dict[str, Callable[[str, str], Diff | BoundedDiff]] = {
    "text_diff": lambda old, new: text_diff(old, new),
    "unified_diff": lambda old, new: unified_diff(old, new),
}


@pytest.mark.parametrize("lines", [1_000, 10_000, 100_000])
@pytest.mark.parametrize("name", sorted(DIFFS))
def test_diff_of_adversarial_texts_returns_within_its_bound(name: str, lines: int) -> None:
    old, new = adversarial(lines)

    started = time.perf_counter()
    diff = DIFFS[name](old, new)
    seconds = time.perf_counter() - started

    assert seconds < BOUND_SECONDS, f"{seconds:.1f} s"
    if diff.too_large is None:  # done in time: every other line changed
        assert (diff.added, diff.removed) == (lines // 2, lines // 2)
    else:
        assert f"old: {lines:,} lines, {len(old):,} characters" in diff.too_large.summary


def test_diffs_sharing_a_deadline_take_no_longer_together() -> None:
    old, new = adversarial(10_000)
    deadline = Deadline()

    started = time.perf_counter()
    diffs_made = [unified_diff(old, new + f"{n}\n", deadline=deadline) for n in range(20)]
    seconds = time.perf_counter() - started

    assert seconds < BOUND_SECONDS, f"{seconds:.1f} s for 20 diffs"
    last = diffs_made[-1].too_large
    assert last is not None and diffs_made[-1].text == ""
    assert last.summary.startswith(
        "Not diffed: the 1 s the diffs shown here share went to the ones before (old: "
    )

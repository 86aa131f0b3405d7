"""The project's one line diff, ``sysprompt_core.diff``, against difflib as used before.

Every text diff goes through ``sysprompt_core.diff``: it skips equal texts, trims the
common ends, diffs with diff-match-patch under a deadline (one deadline shared by every
diff of a page or report) and bounds what it shows. Before, the editor ran
``difflib.SequenceMatcher(autojunk=False)`` on whatever it was given, and the releases
(compare, the Releases page, the impact report) ran it on up to 2,000 changed lines
with no time limit. For each case this prints the CPU seconds of the diff now and of
the difflib call it replaced (the peer), on the same texts in the same run; the peer
runs in a child process stopped after ``--peer-limit`` seconds (it takes minutes on
lines that repeat).

Cases:

* editor, 40,000 lines (``text_diff`` against difflib on every line):

  * ``identical``: the same prompt twice, lines alternating between two values (an
    override of short rules with blank lines between them);
  * ``ends changed``: the same, with the first line replaced and a line added at the end;
  * ``20 edits``: 40,000 distinct lines, 20 of them changed here and there;

* releases (``unified_diff`` against difflib on the lines between the common ends,
  when they are at most 2,000, as ``sysprompt_core.releases.diff`` did):

  * ``release 1,000``: one line repeated 1,000 times, against the same with every
    other line changed (issue 24: a release compare took 17 s on such texts);
  * ``report 2x2``: the same texts four times, as an impact report of 2 contexts over
    a split of 2 arms diffs them (one shared deadline now; four difflib runs before).

Run: ``.venv/bin/python benchmarks/diff_bounds.py [--peer-limit SECONDS]``
"""

from __future__ import annotations

import argparse
import difflib
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sysprompt_core.diff import Deadline, TooLarge, text_diff, unified_diff  # noqa: E402

LINES = 40_000
RELEASE_LINES = 1_000
RELEASE_MATCH_LINES = 2_000
"""The most changed lines the releases' difflib diff matched (both sides together)."""
REPORT_DIFFS = 4


def case(name: str) -> tuple[str, str]:
    if name.startswith(("release", "report")):
        old = "- rule\n" * RELEASE_LINES
        new = "".join("- rule\n" if n % 2 else "- other\n" for n in range(RELEASE_LINES))
        return old, new
    periodic = ["- x" if n % 2 else "" for n in range(LINES)]
    if name == "identical":
        text = "\n".join(periodic)
        return text, text
    if name == "ends changed":
        return "\n".join(periodic), "\n".join(["head", *periodic[1:], "tail"])
    chosen = random.Random(7)
    distinct = [f"line {chosen.randrange(10**12)} of the prompt" for _ in range(LINES)]
    edited = list(distinct)
    for index in chosen.sample(range(LINES), 20):
        edited[index] = "changed: " + edited[index]
    return "\n".join(distinct), "\n".join(edited)


CASES = ("identical", "ends changed", "20 edits", "release 1,000", "report 2x2")


def _editor_difflib(old: str, new: str) -> None:
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    list(matcher.get_grouped_opcodes(3))


def _releases_difflib(old: str, new: str) -> None:
    """The releases' diff before: the common ends set aside, the middle matched by
    difflib when it held at most 2,000 lines."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    a_end, b_end = len(a), len(b)
    while a_end > start and b_end > start and a[a_end - 1] == b[b_end - 1]:
        a_end, b_end = a_end - 1, b_end - 1
    if (a_end - start) + (b_end - start) <= RELEASE_MATCH_LINES:
        matcher = difflib.SequenceMatcher(None, a[start:a_end], b[start:b_end], autojunk=False)
        list(matcher.get_grouped_opcodes(3))


def difflib_seconds(name: str) -> float:
    """CPU seconds of the diff as it was made before (in this process)."""
    old, new = case(name)
    started = time.process_time()
    if name == "report 2x2":
        for _ in range(REPORT_DIFFS):
            _releases_difflib(old, new)
    elif name.startswith("release"):
        _releases_difflib(old, new)
    else:
        _editor_difflib(old, new)
    return time.process_time() - started


def _outcome(added: int, removed: int, too_large: TooLarge | None) -> str:
    if too_large is not None:
        return too_large.reason
    return f"+{added} −{removed}"


def diff_seconds(name: str) -> tuple[float, str]:
    """CPU seconds of the diff now, and what it gave."""
    old, new = case(name)
    started = time.process_time()
    if name == "report 2x2":
        deadline = Deadline()
        made = [unified_diff(old, new, deadline=deadline) for _ in range(REPORT_DIFFS)]
        seconds = time.process_time() - started
        shown = sum(diff.too_large is None for diff in made)
        return seconds, f"{shown} of {REPORT_DIFFS} diffs shown, the rest too large or not diffed"
    if name.startswith("release"):
        unified = unified_diff(old, new)
        seconds = time.process_time() - started
        return seconds, _outcome(unified.added, unified.removed, unified.too_large)
    diff = text_diff(old, new)
    seconds = time.process_time() - started
    if diff.too_large is None:
        return seconds, f"{_outcome(diff.added, diff.removed, None)}, {len(diff.hunks)} hunks"
    return seconds, diff.too_large.summary


def peer(name: str, limit: float) -> str:
    command = [sys.executable, __file__, "--peer", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, check=True)
    except subprocess.TimeoutExpired:
        return f"> {limit:.0f} s (stopped)"
    return f"{float(done.stdout):.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--peer-limit", type=float, default=300.0)
    parser.add_argument("--peer", choices=CASES, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.peer:
        print(difflib_seconds(options.peer))
        return
    print(
        f"CPU seconds, sysprompt_core.diff against difflib (autojunk off) on the same texts; "
        f"editor cases {LINES:,} lines, release cases {RELEASE_LINES:,} lines"
    )
    for name in CASES:
        seconds, result = diff_seconds(name)
        print(
            f"{name:>13}: now {seconds:.3f} s ({result}); difflib {peer(name, options.peer_limit)}",
            flush=True,
        )


if __name__ == "__main__":
    main()

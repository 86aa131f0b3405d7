"""The line diff on 40,000-line prompts: ``text_diff`` against difflib, as used before.

What compaction would change, a version against another, a newer default: the editor
diffs through ``sysprompt.prompts.diffs.text_diff``, which skips equal texts, trims the
common ends, diffs with diff-match-patch under a deadline and bounds what it shows.
Before, it ran ``difflib.SequenceMatcher(autojunk=False)`` on whatever it was given.
For each case this prints the CPU seconds of ``text_diff`` and of that difflib call
(the peer), in the same run; the peer runs in a child process stopped after
``--peer-limit`` seconds (it takes minutes on lines that repeat).

Cases (40,000 lines each):

* ``identical``: the same prompt twice, lines alternating between two values (an
  override of short rules with blank lines between them);
* ``ends changed``: the same, with the first line replaced and a line added at the end;
* ``20 edits``: 40,000 distinct lines, 20 of them changed here and there.

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

from sysprompt.prompts.diffs import text_diff  # noqa: E402

LINES = 40_000


def case(name: str) -> tuple[str, str]:
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


CASES = ("identical", "ends changed", "20 edits")


def difflib_seconds(name: str) -> float:
    """CPU seconds of the diff as it was made before (in this process)."""
    old, new = case(name)
    started = time.process_time()
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    list(matcher.get_grouped_opcodes(3))
    return time.process_time() - started


def text_diff_seconds(name: str) -> tuple[float, str]:
    old, new = case(name)
    started = time.process_time()
    diff = text_diff(old, new)
    seconds = time.process_time() - started
    if diff.too_large is not None:
        return seconds, diff.too_large.summary
    return seconds, f"+{diff.added} −{diff.removed}, {len(diff.hunks)} hunks"


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
    print(f"{LINES:,}-line texts; CPU seconds, text_diff against difflib (autojunk off)")
    for name in CASES:
        seconds, result = text_diff_seconds(name)
        print(
            f"{name:>13}: text_diff {seconds:.3f} s ({result}); "
            f"difflib {peer(name, options.peer_limit)}",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""A unified diff of two prompts (or template texts), bounded in work and in size.

Prompts may be a megabyte each, so neither the comparison nor its output may grow
with the input unchecked:

1. The lines both texts begin and end with are set aside first (one pass each way):
   a prompt change is usually a few lines in the middle of the same text.
2. What is left in the middle is compared with ``difflib.SequenceMatcher`` only when
   it holds at most ``max_lines`` lines on both sides together; beyond that it is
   shown as one change (every middle line removed, then every new one added), with no
   quadratic work.
3. The text is written as ``diff -u`` would (``---``/``+++`` headers, ``@@`` hunks
   with 3 lines of context, ``\\ No newline at end of file``) until it reaches
   ``max_chars`` characters; then it stops at a line boundary with a last line saying
   how many lines were left out, and ``truncated`` is set.

Lines are compared with their line endings (a CR LF that became LF is a change); the
diff shows each line without its LF.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["DIFF_MAX_CHARS", "DIFF_MAX_LINES", "BoundedDiff", "unified_diff"]

DIFF_MAX_CHARS = 65_536
"""The longest diff text, in characters (the rest is counted, not shown)."""
DIFF_MAX_LINES = 2_000
"""The most changed lines (both sides together, after the common beginning and end are
set aside) that are compared line by line."""
CONTEXT = 3
NO_NEWLINE = "\\ No newline at end of file"

_Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class BoundedDiff:
    """A unified diff (``""`` when the texts are equal), how many lines it adds and
    removes (all of them, also those left out of the text), and whether the text was
    cut at ``max_chars``."""

    text: str
    added: int
    removed: int
    truncated: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.text)


def unified_diff(
    before: str | None,
    after: str | None,
    *,
    before_name: str = "before",
    after_name: str = "after",
    max_chars: int = DIFF_MAX_CHARS,
    max_lines: int = DIFF_MAX_LINES,
) -> BoundedDiff:
    """The diff turning ``before`` into ``after`` (``None``: no text at all); see the
    module docstring."""
    if before == after or (not before and not after):
        return BoundedDiff("", 0, 0)
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    start, old_end, new_end = _common_ends(old, new)
    opcodes = _opcodes(old, new, start, old_end, new_end, max_lines)
    added = sum(j2 - j1 for tag, _, _, j1, j2 in opcodes if tag in ("insert", "replace"))
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag in ("delete", "replace"))
    lines = _lines(old, new, opcodes, before_name, after_name)
    text, truncated = _bounded(lines, max_chars)
    return BoundedDiff(text, added, removed, truncated)


def _common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int, int]:
    """How many lines both begin with, and where the lines both end with begin."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
        old_end -= 1
        new_end -= 1
    return start, old_end, new_end


def _opcodes(
    old: Sequence[str],
    new: Sequence[str],
    start: int,
    old_end: int,
    new_end: int,
    max_lines: int,
) -> list[_Opcode]:
    """The opcodes of the whole texts (difflib's form), matching only the middle."""
    if (old_end - start) + (new_end - start) <= max_lines:
        matcher = difflib.SequenceMatcher(
            None, old[start:old_end], new[start:new_end], autojunk=False
        )
        middle: list[_Opcode] = [
            (tag, i1 + start, i2 + start, j1 + start, j2 + start)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    else:  # too many lines to match: one change, every old line out, every new one in
        middle = [("replace", start, old_end, start, new_end)]
    codes: list[_Opcode] = []
    if start:
        codes.append(("equal", 0, start, 0, start))
    codes.extend(middle)
    if old_end < len(old):
        codes.append(("equal", old_end, len(old), new_end, len(new)))
    return _merged(codes)


def _merged(codes: list[_Opcode]) -> list[_Opcode]:
    """Adjacent ``equal`` opcodes joined (the matcher's middle may start or end with one)."""
    merged: list[_Opcode] = []
    for code in codes:
        if code[1] == code[2] and code[3] == code[4]:
            continue
        if merged and merged[-1][0] == code[0] == "equal":
            last = merged[-1]
            merged[-1] = ("equal", last[1], code[2], last[3], code[4])
        else:
            merged.append(code)
    return merged


def _groups(opcodes: list[_Opcode], context: int = CONTEXT) -> Iterator[list[_Opcode]]:
    """The hunks: the changes with ``context`` equal lines around each, a run of more
    than twice that many equal lines splitting two hunks (as ``diff -u`` groups them)."""
    codes = list(opcodes)
    if codes and codes[0][0] == "equal":
        _, i1, i2, j1, j2 = codes[0]
        codes[0] = ("equal", max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes and codes[-1][0] == "equal":
        _, i1, i2, j1, j2 = codes[-1]
        codes[-1] = ("equal", i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    group: list[_Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, i1 + context, j1, j1 + context))
            yield group
            group = []
            i1, j1 = i2 - context, j2 - context
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _lines(
    old: Sequence[str],
    new: Sequence[str],
    opcodes: list[_Opcode],
    before_name: str,
    after_name: str,
) -> Iterator[str]:
    yield f"--- {before_name}"
    yield f"+++ {after_name}"
    for group in _groups(opcodes):
        first, last = group[0], group[-1]
        yield (f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in old[i1:i2]:
                    yield from _shown(" ", line)
                continue
            for line in old[i1:i2]:
                yield from _shown("-", line)
            for line in new[j1:j2]:
                yield from _shown("+", line)


def _range(start: int, stop: int) -> str:
    """A hunk's range as ``diff -u`` writes it (1-based start, length; ``0,0``)."""
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def _shown(mark: str, line: str) -> Iterator[str]:
    if line.endswith("\n"):
        yield mark + line[:-1]
    else:
        yield mark + line
        yield NO_NEWLINE


def _bounded(lines: Iterator[str], max_chars: int) -> tuple[str, bool]:
    """The lines joined with LF, stopped at a line boundary within ``max_chars``."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > max_chars:
            room = max_chars - used - 1
            if room > 0:
                kept.append(line[:room] + " …")
            left = sum(1 for _ in lines)
            kept.append(f"… {left:,} more diff lines left out (over {max_chars:,} characters)")
            return "\n".join(kept) + "\n", True
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept) + "\n", False

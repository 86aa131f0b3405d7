"""Line diffs for people: two texts → hunks of numbered lines, bounded in size and time.

Pure Python, no Django: the editor shows a conflict, a version against the editor's
text, the variants' histories, a newer shipped default and what compaction would change
through this one function, :func:`text_diff`, and the templates escape every line when
they render it.

Pipeline: equal texts → no diff at all (nothing is computed) → each text split into
lines, and each distinct line given one character → the two strings diffed by
diff-match-patch (Myers' O(ND) algorithm after trimming the common ends, with a
deadline) → runs of equal, deleted and inserted lines → hunks with context. A diff is
not shown, and :class:`TooLarge` says why with both sides' sizes, when a text has more
than :data:`DIFF_MAX_LINES` lines or :data:`DIFF_MAX_CHARACTERS` characters, when the
diff is not done within :data:`DIFF_TIMEOUT_SECONDS`, or when it changes more than
:data:`DIFF_MAX_CHANGED_LINES` lines (more than a person reads, and more than a page
should carry). So no input makes a request work for longer than about the deadline:
difflib, used before, took minutes on 40,000 lines that repeat.

Lines are compared with their line endings removed, so a text that only gains a final
newline differs by nothing visible; ``identical`` still tells the bytes apart.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from diff_match_patch.diff_match_patch import diff_match_patch

DIFF_MAX_LINES = 100_000
"""A text with more lines than this is not diffed at all."""
DIFF_MAX_CHARACTERS = 4 * 1_048_576
"""A text with more characters than this is not diffed at all."""
DIFF_TIMEOUT_SECONDS = 1.0
"""A diff not done in this time is not shown (the work stops then)."""
DIFF_MAX_CHANGED_LINES = 5_000
"""A diff that adds and removes more lines than this together is not shown."""

LineKind = Literal["equal", "insert", "delete"]


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk; ``old``/``new`` are 1-based line numbers, None on the other side."""

    kind: LineKind
    old: int | None
    new: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Hunk:
    """Consecutive changes with up to ``context`` unchanged lines around them."""

    old_start: int
    new_start: int
    lines: tuple[DiffLine, ...]

    @property
    def header(self) -> str:
        old_count = sum(1 for line in self.lines if line.kind != "insert")
        new_count = sum(1 for line in self.lines if line.kind != "delete")
        return f"@@ -{self.old_start},{old_count} +{self.new_start},{new_count} @@"


@dataclass(frozen=True, slots=True)
class TooLarge:
    """Why a diff is not shown, with the sizes of both sides."""

    reason: str
    old_lines: int
    new_lines: int
    old_characters: int
    new_characters: int

    @property
    def summary(self) -> str:
        return (
            f"{self.reason} (old: {self.old_lines:,} lines, {self.old_characters:,} "
            f"characters; new: {self.new_lines:,} lines, {self.new_characters:,} characters)"
        )


@dataclass(frozen=True, slots=True)
class Diff:
    """The hunks turning ``old`` into ``new``, and counts for a summary line.

    ``too_large`` is set when the diff is not shown (then there are no hunks, and
    ``added``/``removed`` are known only when the diff was done but changes too much).
    """

    hunks: tuple[Hunk, ...]
    added: int
    removed: int
    identical: bool
    too_large: TooLarge | None = None

    @property
    def changed(self) -> bool:
        return bool(self.hunks)


Opcode = tuple[LineKind | Literal["replace"], int, int, int, int]


def text_diff(old: str | None, new: str | None, *, context: int = 3) -> Diff:
    """Diff ``old`` against ``new`` line by line; ``None`` counts as no text at all.
    Bounded (see the module docstring): a diff too large to show has ``too_large``."""
    old_text, new_text = old or "", new or ""
    if old_text == new_text:
        return Diff(hunks=(), added=0, removed=0, identical=old == new)
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    if old_lines == new_lines:
        return Diff(hunks=(), added=0, removed=0, identical=False)

    def too_large(reason: str, added: int = 0, removed: int = 0) -> Diff:
        sizes = (len(old_lines), len(new_lines), len(old_text), len(new_text))
        return Diff((), added, removed, False, TooLarge(reason, *sizes))

    longest = max(len(old_lines), len(new_lines))
    if longest > DIFF_MAX_LINES or max(len(old_text), len(new_text)) > DIFF_MAX_CHARACTERS:
        return too_large(
            f"Too large to show a line diff: more than {DIFF_MAX_LINES:,} lines or "
            f"{DIFF_MAX_CHARACTERS:,} characters"
        )
    opcodes = _line_opcodes(old_lines, new_lines, time.time() + DIFF_TIMEOUT_SECONDS)
    if opcodes is None:
        return too_large(
            f"Too large to show a line diff: not computed within {DIFF_TIMEOUT_SECONDS:g} s"
        )
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag != "equal")
    added = sum(j2 - j1 for tag, _, _, j1, j2 in opcodes if tag != "equal")
    if added + removed > DIFF_MAX_CHANGED_LINES:
        return too_large(
            f"Too large to show a line diff: {added:,} lines added and {removed:,} removed, "
            f"more than {DIFF_MAX_CHANGED_LINES:,}",
            added,
            removed,
        )
    hunks = tuple(_hunk(group, old_lines, new_lines) for group in _grouped(opcodes, context))
    return Diff(hunks=hunks, added=added, removed=removed, identical=False)


def _line_opcodes(old: Sequence[str], new: Sequence[str], deadline: float) -> list[Opcode] | None:
    """Runs of equal, deleted and inserted lines (a deletion followed by an insertion
    is one ``replace``), or ``None`` when the deadline passed first."""
    codes: dict[str, str] = {}

    def encoded(lines: Sequence[str]) -> str:
        return "".join(codes.setdefault(line, _character(len(codes))) for line in lines)

    engine = diff_match_patch()
    # The half-match speed-up searches without looking at the deadline (seconds on long
    # periodic texts); without it every step that can take long checks the deadline.
    engine.Diff_Timeout = 0
    runs = engine.diff_main(encoded(old), encoded(new), False, deadline)
    if time.time() > deadline:
        return None
    opcodes: list[Opcode] = []
    i = j = 0
    for operation, characters in runs:
        size = len(characters)
        if operation == engine.DIFF_EQUAL:
            opcodes.append(("equal", i, i + size, j, j + size))
            i, j = i + size, j + size
            continue
        di, dj = (size, 0) if operation == engine.DIFF_DELETE else (0, size)
        if opcodes and opcodes[-1][0] != "equal":
            _, i1, _, j1, _ = opcodes.pop()
        else:
            i1, j1 = i, j
        i, j = i + di, j + dj
        opcodes.append(("replace", i1, i, j1, j))
    return opcodes


def _character(index: int) -> str:
    """The ``index``-th distinct line as one character (skipping the surrogates)."""
    return chr(index if index < 0xD800 else index + 0x800)


def _grouped(opcodes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """The changes with up to ``context`` equal lines around them, one list per hunk
    (difflib's ``get_grouped_opcodes``)."""
    codes = list(opcodes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _hunk(group: list[Opcode], old: Sequence[str], new: Sequence[str]) -> Hunk:
    lines: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines.extend(
                DiffLine("equal", i + 1, j + 1, old[i])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        lines.extend(DiffLine("delete", i + 1, None, old[i]) for i in range(i1, i2))
        lines.extend(DiffLine("insert", None, j + 1, new[j]) for j in range(j1, j2))
    first = group[0]
    return Hunk(old_start=first[1] + 1, new_start=first[3] + 1, lines=tuple(lines))

"""Line diffs for people: two texts → hunks of numbered lines.

Pure Python (``difflib``), no Django: the editor shows a conflict, a version against
the editor's text, and what compaction would change with the same structure, and the
templates escape every line when they render it.

Lines are compared with their line endings removed, so a text that only gains a final
newline differs by nothing visible; ``identical`` still tells the bytes apart.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

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
class Diff:
    """The hunks turning ``old`` into ``new``, and counts for a summary line."""

    hunks: tuple[Hunk, ...]
    added: int
    removed: int
    identical: bool

    @property
    def changed(self) -> bool:
        return bool(self.hunks)


def text_diff(old: str | None, new: str | None, *, context: int = 3) -> Diff:
    """Diff ``old`` against ``new`` line by line; ``None`` counts as no text at all."""
    old_lines = (old or "").splitlines()
    new_lines = (new or "").splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    hunks: list[Hunk] = []
    added = removed = 0
    for group in matcher.get_grouped_opcodes(context):
        if all(opcode[0] == "equal" for opcode in group):
            continue
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(
                    DiffLine("equal", i + 1, j + 1, old_lines[i])
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                )
                continue
            lines.extend(DiffLine("delete", i + 1, None, old_lines[i]) for i in range(i1, i2))
            lines.extend(DiffLine("insert", None, j + 1, new_lines[j]) for j in range(j1, j2))
            removed += i2 - i1
            added += j2 - j1
        first = group[0]
        hunks.append(Hunk(old_start=first[1] + 1, new_start=first[3] + 1, lines=tuple(lines)))
    return Diff(hunks=tuple(hunks), added=added, removed=removed, identical=old == new)

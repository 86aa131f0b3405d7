"""The one line diff of the project, bounded in size and time; pure Python, no Django.

Everything that diffs text goes through :func:`text_diff`: the editor (a conflict, a
version against the editor's text, the history's and the library variants' versions, a
newer shipped default, what compaction would change) shows its hunks, and the releases
(a release compared with another or with the working copy, the Releases page's
"changes since production", the impact report) write them as ``diff -u`` does with
:func:`unified_diff`.

Pipeline: equal texts → no diff at all (nothing is computed) → each text split into
lines, and each distinct line given one character → the two strings diffed by
diff-match-patch (Myers' O(ND) algorithm after trimming the common ends) until a
:class:`Deadline` → runs of equal, deleted and inserted lines → hunks with context →
(:func:`unified_diff`) the ``diff -u`` text, cut at a number of characters.

A diff is not shown, and :class:`TooLarge` says why with both sides' sizes, when a text
has more than :data:`DIFF_MAX_LINES` lines or :data:`DIFF_MAX_CHARACTERS` characters,
when the diff is not done by its deadline, or when it changes more than
:data:`DIFF_MAX_CHANGED_LINES` lines (more than a person reads, and more than a page
should carry). A deadline is :data:`DIFF_TIMEOUT_SECONDS` from the start of the diff,
or one :class:`Deadline` shared by every diff of a page or report, so that many diffs
together take no longer than one: difflib, used before, took minutes on 40,000 lines
that repeat, and 11 s on two 1,000-line texts (one line repeated, against the same
with every other line changed).

The editor compares lines with their line endings removed (a text that only gains a
final newline differs by nothing visible; ``identical`` still tells the bytes apart);
:func:`unified_diff` keeps them (a CR LF that became LF is a change, and ``\\ No newline
at end of file`` is written), so its text applies as a patch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sysprompt_core.extras import extra_missing

try:
    from diff_match_patch.diff_match_patch import diff_match_patch
except ModuleNotFoundError as missing:  # an agent host's install: no [diff]
    raise extra_missing("diff", missing) from missing

__all__ = [
    "DIFF_MAX_CHANGED_LINES",
    "DIFF_MAX_CHARACTERS",
    "DIFF_MAX_CHARS",
    "DIFF_MAX_LINES",
    "DIFF_TIMEOUT_SECONDS",
    "BoundedDiff",
    "Deadline",
    "Diff",
    "DiffLine",
    "Hunk",
    "TooLarge",
    "text_diff",
    "unified_diff",
]

DIFF_MAX_LINES = 100_000
"""A text with more lines than this is not diffed at all."""
DIFF_MAX_CHARACTERS = 4 * 1_048_576
"""A text with more characters than this is not diffed at all."""
DIFF_TIMEOUT_SECONDS = 1.0
"""The time a diff, or all the diffs sharing one :class:`Deadline`, may take; a diff not
done by then is not shown (the work stops then)."""
DIFF_MAX_CHANGED_LINES = 5_000
"""A diff that adds and removes more lines than this together is not shown."""
DIFF_MAX_CHARS = 65_536
"""The longest ``diff -u`` text :func:`unified_diff` writes, in characters (the rest is
counted, not shown)."""
CONTEXT = 3
"""Unchanged lines shown around each change."""
NO_NEWLINE = "\\ No newline at end of file"

LineKind = Literal["equal", "insert", "delete"]
Opcode = tuple[LineKind | Literal["replace"], int, int, int, int]


@dataclass(frozen=True, slots=True)
class Deadline:
    """When the diffs that share it must be done: ``seconds`` after it was made. Give one
    to every diff of a page or report; each diff started after it passed is not
    computed at all."""

    seconds: float = DIFF_TIMEOUT_SECONDS
    at: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", time.time() + self.seconds)  # diff-match-patch's clock

    @property
    def passed(self) -> bool:
        return time.time() > self.at


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
        """``@@ -start,count +start,count @@`` as ``diff -u`` writes it (a count of 1
        left out; an empty side starts at the line before)."""
        old_count = sum(1 for line in self.lines if line.kind != "insert")
        new_count = sum(1 for line in self.lines if line.kind != "delete")
        old, new = _range(self.old_start, old_count), _range(self.new_start, new_count)
        return f"@@ -{old} +{new} @@"


def _range(start: int, count: int) -> str:
    first = start if count else start - 1
    return f"{first}" if count == 1 else f"{first},{count}"


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


def text_diff(
    old: str | None,
    new: str | None,
    *,
    context: int = CONTEXT,
    deadline: Deadline | None = None,
    keep_ends: bool = False,
) -> Diff:
    """Diff ``old`` against ``new`` line by line; ``None`` counts as no text at all.
    Bounded (see the module docstring): a diff too large to show has ``too_large``.
    ``deadline``: shared with other diffs (default: :data:`DIFF_TIMEOUT_SECONDS` from
    now); ``keep_ends``: lines compared, and kept, with their line endings."""
    old_text, new_text = old or "", new or ""
    if old_text == new_text:
        return Diff(hunks=(), added=0, removed=0, identical=old == new)
    old_lines = old_text.splitlines(keepends=keep_ends)
    new_lines = new_text.splitlines(keepends=keep_ends)
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
    deadline = Deadline() if deadline is None else deadline
    if deadline.passed:
        return too_large(
            f"Not diffed: the {deadline.seconds:g} s the diffs shown here share "
            "went to the ones before"
        )
    opcodes = _line_opcodes(old_lines, new_lines, deadline.at)
    if opcodes is None:
        return too_large(
            f"Too large to show a line diff: not computed within {deadline.seconds:g} s"
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
    (difflib's ``get_grouped_opcodes``; ``diff -u`` groups them alike)."""
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


# --- the diff -u text -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoundedDiff:
    """A unified diff (``""`` when the texts are equal, or when it is too large to show:
    then ``too_large`` says why), how many lines it adds and removes (all of them, also
    those left out of the text), and whether the text was cut at ``max_chars``."""

    text: str
    added: int
    removed: int
    truncated: bool = False
    too_large: TooLarge | None = None

    @property
    def changed(self) -> bool:
        return bool(self.text)


_MARKS: dict[LineKind, str] = {"equal": " ", "delete": "-", "insert": "+"}


def unified_diff(
    before: str | None,
    after: str | None,
    *,
    before_name: str = "before",
    after_name: str = "after",
    max_chars: int = DIFF_MAX_CHARS,
    deadline: Deadline | None = None,
) -> BoundedDiff:
    """The ``diff -u`` text turning ``before`` into ``after`` (``None``: no text at all):
    :func:`text_diff` with line endings kept, written with ``---``/``+++`` headers,
    ``@@`` hunks with 3 lines of context and ``\\ No newline at end of file``, until it
    reaches ``max_chars`` characters; then it stops at a line boundary with a last line
    saying how many lines were left out, and ``truncated`` is set."""
    diff = text_diff(before, after, deadline=deadline, keep_ends=True)
    if not diff.hunks:
        return BoundedDiff("", diff.added, diff.removed, too_large=diff.too_large)
    text, truncated = _bounded(_lines(diff.hunks, before_name, after_name), max_chars)
    return BoundedDiff(text, diff.added, diff.removed, truncated)


def _lines(hunks: Sequence[Hunk], before_name: str, after_name: str) -> Iterator[str]:
    yield f"--- {before_name}"
    yield f"+++ {after_name}"
    for hunk in hunks:
        yield hunk.header
        for line in hunk.lines:
            mark = _MARKS[line.kind]
            if line.text.endswith("\n"):
                yield mark + line.text[:-1]
            else:
                yield mark + line.text
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

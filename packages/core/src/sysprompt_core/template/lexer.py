"""The lexer: one compiled regular expression that finds every tag.

Source text is a sequence of literal text and tags. ``PATTERN`` matches exactly the
tags of docs/template-language.md §2 (variables, ``[if]``, ``[else]``, ``[endif]``);
anything else, however much it looks like a tag, is text. Two views of the same matches are offered:

* ``split(source)`` — the flat form the parser consumes: ``re.split`` yields
  ``[text, *groups, text, *groups, …, text]``, one stride of ``STRIDE`` items per tag,
  built entirely in C. This is the hot path of rendering.
* ``tokenize(source)`` — immutable ``Token`` objects carrying line and column, for
  diagnostics and tooling.

Both come from ``PATTERN``, so the n-th tag of one is the n-th tag of the other. The
pattern uses only possessive quantifiers, so it never backtracks and a scan is linear
in the length of the source.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from enum import Enum
from typing import NamedTuple

_TYPE = r"[a-z][a-z0-9_-]*+"
# A name starts and ends with a character that is not whitespace or a bracket; inside,
# whitespace other than CR and LF may separate runs of such characters.
_NAME = r"[^\s\[\]]++(?:[^\S\r\n]++[^\s\[\]]++)*+"
_REF = f"{_TYPE}:{_NAME}"

PATTERN = re.compile(
    rf"""
    \[
    (?:
        (?P<variable> {_REF} ) \]
      | (?:
            (?P<if> if [ \t]++ (?P<negated> ! )? (?P<condition> {_REF} ) )
          | (?P<keyword> else | endif )
        )
        \]
        # What ends a block tag's line, when only spaces or tabs come before it: the
        # parser needs it to apply the standalone-line rule (§5).
        (?P<line_end> [ \t]*+ (?: \r?\n | \Z ) )?
    )
    """,
    re.VERBOSE,
)

# Offsets of each group within one stride of ``split``; the stride starts with the text
# that precedes the tag.
TEXT, VARIABLE, IF, NEGATED, CONDITION, KEYWORD, LINE_END = range(7)
STRIDE = 7


def split(source: str) -> list[str | None]:
    """Return the flat token stream of ``source`` (see the module docstring)."""
    return PATTERN.split(source)


class Kind(Enum):
    VARIABLE = "variable"
    IF = "if"
    ELSE = "else"
    ENDIF = "endif"


class Token(NamedTuple):
    """One tag as written: its kind, its text, and where it stands (all 1-based)."""

    kind: Kind
    text: str
    start: int
    line: int
    column: int
    key: str | None = None
    negated: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.text)


class LineIndex:
    """Maps offsets to 1-based (line, column) in O(log lines) each."""

    def __init__(self, source: str) -> None:
        self._starts = [0]
        self._starts.extend(m.end() for m in re.finditer("\n", source))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


def tokenize(source: str) -> Iterator[Token]:
    """Yield every tag of ``source`` in order, as ``Token`` objects."""
    lines = LineIndex(source)
    for match in PATTERN.finditer(source):
        line, column = lines.position(match.start())
        yield _token(match, line, column)


def _token(match: re.Match[str], line: int, column: int) -> Token:
    start = match.start()
    end = match.end() if match["line_end"] is None else match.start("line_end")
    text = match.string[start:end]
    if match["variable"] is not None:
        return Token(Kind.VARIABLE, text, start, line, column, match["variable"])
    if match["if"] is not None:
        negated = match["negated"] is not None
        return Token(Kind.IF, text, start, line, column, match["condition"], negated)
    kind = Kind.ELSE if match["keyword"] == "else" else Kind.ENDIF
    return Token(kind, text, start, line, column)

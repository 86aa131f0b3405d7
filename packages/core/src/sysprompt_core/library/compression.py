"""Compression of a template's source text (opt-in per version): fewer tokens, same sense.

``compress(source)`` reads the source line by line (a line ends with LF or CR LF; each
line keeps its own ending) and sorts each line with ``LINE``:

* **fence** — a line that starts, after any spaces, tabs or lone CRs, with ```` ``` ```` or
  ``~~~`` opens a fenced block that only a line starting with the same delimiter
  closes (the same character, at least as many times: ````` ```` ````` is closed by
  ````` ```` ````` or longer, so a block can show a ```` ``` ```` fence); the delimiter
  lines and every line between are kept byte for byte (an unclosed fence runs to the
  end of the text);
* **list item** — ``-``, ``*``, ``+`` or ``1.`` / ``1)`` followed by a space, a tab
  or the end of the line: the leading indentation is kept as it is;
* **any other line** — trimmed (of spaces, tabs, and a CR that is not part of a CR LF).

Outside fences, then: ``- **Label**: text`` becomes ``- Label: text``; headings of
level 2 to 6 become level 1 (``## Title`` → ``# Title``); every run of spaces and tabs
becomes one space and none is left at the end of a line; a run of blank lines becomes
one; blank lines at the end are dropped, and so is the last line ending (unless it
belongs to the content of an unclosed fence, which is kept byte for byte).

An indented fence counts as a fence because trimming would make it one: that is what
makes ``compress(compress(x)) == compress(x)`` hold for every text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

LINE = re.compile(
    r"""
    (?P<indent> [ \t\r]*+ )   # a lone CR counts as space: trimming removes it
    (?:
        (?P<fence> `{3,}+ | ~{3,}+ )
      | (?P<marker> [-*+] | [0-9]{1,9}+ [.)] ) (?= [ \t] | \Z )
    )?+
    """,
    re.VERBOSE,
)

_BOLD_LABEL = re.compile(r"\A-[ \t]++\*\*(?P<label>[^*]++)\*\*:[ \t]*+")
_HEADING = re.compile(r"\A\#{2,6}+(?=[ \t]|\Z)")
_BLANKS = re.compile(r"[ \t]++")
_SPACE = " \t\r"  # what trimming removes: a CR left at the end would make a CR LF next time


class Kind(Enum):
    TEXT = "text"
    BLANK = "blank"
    FENCE_OPEN = "fence-open"
    FENCED = "fenced"
    FENCE_CLOSE = "fence-close"


@dataclass(frozen=True, slots=True)
class Line:
    """One output line: its text, its own line ending (``""`` for the last), its kind."""

    text: str
    ending: str
    kind: Kind


def compress(source: str) -> str:
    """Return ``source`` compressed (see the module docstring)."""
    lines = _compress_lines(split_lines(source))
    while lines and lines[-1].kind is Kind.BLANK:
        lines.pop()
    if lines and lines[-1].kind is not Kind.FENCED:
        lines[-1] = Line(lines[-1].text, "", lines[-1].kind)
    return "".join(line.text + line.ending for line in lines)


def split_lines(source: str) -> list[tuple[str, str]]:
    """``source`` as ``(text, ending)`` pairs, the ending ``"\\n"``, ``"\\r\\n"`` or ``""``."""
    parts = source.split("\n")
    last = parts.pop()
    lines = [(part[:-1], "\r\n") if part.endswith("\r") else (part, "\n") for part in parts]
    if last:
        lines.append((last, ""))
    return lines


def _compress_lines(lines: list[tuple[str, str]]) -> list[Line]:
    out: list[Line] = []
    fence: str | None = None
    for text, ending in lines:
        if fence is not None:
            closes = _closes(text, fence)
            out.append(Line(text, ending, Kind.FENCE_CLOSE if closes else Kind.FENCED))
            fence = None if closes else fence
            continue
        match = LINE.match(text)
        assert match is not None  # every part of the pattern is optional
        if match["fence"] is not None:
            fence = match["fence"]
            out.append(Line(text, ending, Kind.FENCE_OPEN))
            continue
        line = _compress_line(text, match)
        if line:
            out.append(Line(line, ending, Kind.TEXT))
        elif not out or out[-1].kind is not Kind.BLANK:
            out.append(Line("", ending, Kind.BLANK))
    return out


def _closes(text: str, fence: str) -> bool:
    """Whether ``text`` closes the fence opened with ``fence`` (as long or longer)."""
    match = LINE.match(text)
    assert match is not None
    delimiter = match["fence"]
    return delimiter is not None and delimiter[0] == fence[0] and len(delimiter) >= len(fence)


def _compress_line(text: str, match: re.Match[str]) -> str:
    """One line outside fences, without its ending: list items keep their indentation."""
    if match["marker"] is not None:
        indent = match["indent"]
        return indent + _squeeze(_BOLD_LABEL.sub(r"- \g<label>: ", text[len(indent) :]))
    body = _HEADING.sub("#", text.strip(_SPACE), count=1)
    return _squeeze(body)


def _squeeze(text: str) -> str:
    return _BLANKS.sub(" ", text).rstrip(_SPACE)

"""Filters of the Releases page: ``{% load releases_ui %}``.

* ``{{ move.to_target|target_text }}`` — a stored target (JSON) in words: "latest",
  "release 3", "split: release 3 90%, latest 10%"; ``None`` (a label's creation) is "—".
* ``{{ diff_text|udiff }}`` — a unified diff's lines with their kind (``header``,
  ``hunk``, ``insert``, ``delete``, ``context``), each drawn as its own line by CSS.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import template

from sysprompt_core.errors import InvalidTarget
from sysprompt_core.releases import LATEST, describe_pointer, parse_target

register = template.Library()


@register.filter
def target_text(value: object) -> str:
    if value is None:
        return "—"
    try:
        return parse_target(value).describe()
    except InvalidTarget:
        return str(value)


@register.filter
def pointer_text(value: object) -> str:
    if value == LATEST:
        return describe_pointer(LATEST)
    if isinstance(value, int) and not isinstance(value, bool):
        return describe_pointer(value)
    return str(value)


@dataclass(frozen=True)
class DiffLine:
    kind: str
    text: str


@register.filter
def udiff(text: str | None) -> list[DiffLine]:
    lines: list[DiffLine] = []
    in_hunk = False
    for line in (text or "").splitlines():
        if not in_hunk and line.startswith(("--- ", "+++ ")):
            kind = "header"
        elif line.startswith("@@"):
            in_hunk = True
            kind = "hunk"
        elif line.startswith("+"):
            kind = "insert"
        elif line.startswith("-"):
            kind = "delete"
        else:
            kind = "context"
        lines.append(DiffLine(kind, line))
    return lines

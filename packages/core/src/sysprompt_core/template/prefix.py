"""The shared prefix: how much of a rendering is the same for every conversation.

A rendering is the same for every conversation up to where it first depends on
something that is not: a variable whose key *varies* (which keys do is the caller's
vocabulary, given as a predicate; the engine has none), or a block testing one. The
bounded walk (``nodes.render_nodes_within``) measures it while it renders, in the same
walk, and reports two things in its :class:`~sysprompt_core.template.nodes.Bounded`:

* ``prefix`` — the length of that shared part in code points (``None``: nothing the
  walk reached varies, the whole text is shared);
* ``stop`` — a :class:`PrefixStop`: which reference ended it, as the walk met it.

Three things end it besides a varying key, each where the walk meets it:

* a value that is itself only partly shared, a :class:`Prefixed` string (a rendered
  fragment with a varying value inside): the prefix goes on into it, up to its
  ``shared`` code points;
* a block on a varying key: at the block's start, whichever branch it takes;
* a value dropped to keep the text within the limit (or a block on one): whether it
  fits depends on the whole text, so it may differ between conversations.

:func:`locate` turns a :class:`PrefixStop` into a :class:`PrefixEnd` (line and column
in the source) for people, by replaying the walk over the tags of the source up to the
stop: cost in proportion to the part of the source before it, paid only when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import NamedTuple, TypeAlias

from sysprompt_core.template.lexer import PATTERN

__all__ = ["PrefixEnd", "PrefixStop", "Prefixed", "Varies", "locate"]

Varies: TypeAlias = Callable[[str], bool]
"""Whether a key's value (and whether it exists) may differ between conversations."""


class Prefixed(str):
    """A value of which only the first ``shared`` code points are the same in every
    conversation (``0 <= shared <= len(self)``); it is a ``str`` in every other way.

    A rendered fragment is one: the including rendering's shared prefix goes on into
    it, and ends ``shared`` code points in. A string made from it (sliced, stripped,
    joined) is a plain ``str`` again.
    """

    shared: int

    def __new__(cls, text: str, shared: int) -> Prefixed:
        value = super().__new__(cls, text)
        object.__setattr__(value, "shared", max(0, min(shared, len(text))))
        return value

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"Prefixed({str.__repr__(self)}, shared={self.shared})"


class PrefixStop(NamedTuple):
    """What ended the shared prefix, as the walk met it: the ``occurrence``-th time
    (from 0) it reached a variable on ``key`` or, with ``block``, an ``[if]`` on it."""

    key: str
    block: bool
    occurrence: int


class PrefixEnd(NamedTuple):
    """Where the shared prefix ends in the source: the tag (a variable, or the ``[if]``
    of a block) that ended it, its key, and its 1-based line and column."""

    key: str
    line: int
    column: int


def locate(
    source: str,
    literal: Collection[int],
    stop: PrefixStop,
    exists: Callable[[str], bool],
) -> PrefixEnd | None:
    """The tag of ``source`` at ``stop`` (``None`` if there is none).

    ``literal`` holds the ordinals of the tags that are literal text (the parser's
    findings); ``exists`` answers, for a key, whether it exists in the rendering that
    made ``stop``, as that walk saw it. The replay takes the branches that walk took:
    only the non-literal tags count, ``[if]`` opens a block, ``[else]`` switches to its
    other branch, ``[endif]`` closes it.
    """
    # One entry per open block: (the block is reached, its condition holds).
    blocks: list[tuple[bool, bool]] = []
    reached = True
    seen = 0
    for ordinal, match in enumerate(PATTERN.finditer(source)):
        if ordinal in literal:
            continue
        key: str | None = match["variable"] or match["condition"]
        if key is None:  # [else] or [endif]
            if match["keyword"] == "else":
                outer, holds = blocks[-1]
                reached = outer and not holds
            else:
                reached = blocks.pop()[0]
            continue
        block = match["condition"] is not None
        if reached and block is stop.block and key == stop.key:
            if seen == stop.occurrence:
                return _end(source, key, match.start())
            seen += 1
        if block:
            holds = reached and bool(exists(key)) is (match["negated"] is None)
            blocks.append((reached, holds))
            reached = holds
    return None


def _end(source: str, key: str, start: int) -> PrefixEnd:
    line_start = source.rfind("\n", 0, start) + 1
    return PrefixEnd(key, source.count("\n", 0, start) + 1, start - line_start + 1)

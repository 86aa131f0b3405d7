"""Nodes: the parsed form of a template, and the walk that renders it.

A template parses to a tuple of nodes. A node is literal text (a plain ``str``), a
``Variable``, or a ``Block`` holding two tuples of nodes, one per branch. Rendering
walks this tree with an explicit stack of iterators, so nesting depth costs no
recursion, and looks up each key only when the walk reaches it: a variable in a branch
that is not taken is never looked up.

``render_nodes_within`` renders to at most a number of UTF-8 bytes: a value that would
cross the limit makes its variable not exist (the text is never cut inside a value).
It is a separate walk, so the unbounded one keeps its speed; the same walk measures the
shared prefix, the part of the text that is the same for every conversation
(``sysprompt_core.template.prefix``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import islice
from operator import length_hint
from typing import NamedTuple, TypeAlias

from sysprompt_core.errors import PromptTooLarge
from sysprompt_core.template.prefix import Prefixed, PrefixStop, Varies


class Variable(NamedTuple):
    """``[type:name]``: replaced by the value of ``key``, or nothing."""

    key: str


class Block(NamedTuple):
    """``[if key] then [else] otherwise [endif]``; ``[if !key]`` when ``negated``."""

    key: str
    negated: bool
    then: tuple[Node, ...]
    otherwise: tuple[Node, ...]


Node: TypeAlias = "str | Variable | Block"
Values: TypeAlias = Mapping[str, "str | None"]


def render_nodes(nodes: tuple[Node, ...], values: Values) -> str:
    """Render ``nodes``; a key that is missing or ``None`` does not exist."""
    out: list[str] = []
    append = out.append
    get = values.get
    pending: list[Iterator[Node]] = []
    current: Iterator[Node] = iter(nodes)
    while True:
        for node in current:
            if type(node) is str:
                append(node)
            elif type(node) is Variable:
                value = get(node.key)
                if value:
                    append(value)
            else:
                assert type(node) is Block
                exists = get(node.key) is not None
                branch = node.then if exists is not node.negated else node.otherwise
                if branch:
                    pending.append(current)
                    current = iter(branch)
                    break
        else:
            if not pending:
                return "".join(out)
            current = pending.pop()


# Bounded rendering: a separate walk, so that ``render_nodes`` keeps its speed.

# How many times ``render_nodes_within`` renders at most; each pass after the first
# only happens because the one before dropped a key that a block tests.
MAX_PASSES = 8

_NOTHING_VARIES: Varies = frozenset[str]().__contains__


class Bounded(NamedTuple):
    """A render within a limit: the text, the keys treated as not existing because
    their value would have taken the text past the limit, and the shared prefix
    (``sysprompt_core.template.prefix``): its length in code points (``None``: the
    whole text) and what ended it."""

    text: str
    dropped: frozenset[str]
    prefix: int | None = None
    stop: PrefixStop | None = None


def utf8_size(text: str) -> int:
    """The length of ``text`` in UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def literal_size(nodes: tuple[Node, ...]) -> int:
    """The UTF-8 bytes of all the literal text of ``nodes``, in every branch: the most
    literal text any walk of them reaches."""
    total = 0
    pending = [nodes]
    while pending:
        for node in pending.pop():
            if type(node) is str:
                total += utf8_size(node)
            elif type(node) is Block:
                pending += (node.then, node.otherwise)
    return total


def render_nodes_within(
    nodes: tuple[Node, ...],
    values: Values,
    limit: int,
    varies: Varies | None = None,
    literal_bytes: int | None = None,
) -> Bounded:
    """Render ``nodes`` to at most ``limit`` UTF-8 bytes, never cutting a value.

    A variable whose value would take the text past the limit does not exist: it adds
    nothing, and the text is rendered again with it absent, so an ``[if]`` on it takes
    its other branch too; this repeats until no further key is dropped (at most
    :data:`MAX_PASSES` renders; the text is within the limit after every one). Raises
    :class:`PromptTooLarge` when the literal text alone is over the limit. Memory is
    the output of one pass, O(limit).

    The same walk measures the shared prefix, with ``varies`` telling which keys differ
    between conversations (``None``: none does; :class:`Prefixed` values and dropped
    keys still end it): see ``sysprompt_core.template.prefix``.

    ``literal_bytes`` is :func:`literal_size` of ``nodes`` when the caller knows it (a
    ``Template`` does): with it, the text a walk reached is counted only when a value
    comes near the limit, not on every render; the result is the same.
    """
    varies = _NOTHING_VARIES if varies is None else varies
    dropped: frozenset[str] = frozenset()
    for _ in range(MAX_PASSES):
        text, new, prefix, stop = _bounded_pass(
            nodes, values, limit, dropped, varies, literal_bytes
        )
        if not new:
            break
        dropped |= new
    return Bounded(text, dropped, prefix, stop)


def _bounded_pass(
    nodes: tuple[Node, ...],
    values: Values,
    limit: int,
    absent: frozenset[str],
    varies: Varies,
    literal_bytes: int | None,
) -> tuple[str, set[str], int | None, PrefixStop | None]:
    """One render with the keys of ``absent`` not existing: the literal text the walk
    reaches is counted first, then the values fill what is left in the order reached.

    When the literal text of every branch fits (``literal_bytes``), all of it is
    reserved instead, and what the walk reached is counted only when a value does not
    fit in what that leaves (``room`` then grows by what was reserved but not
    reached): a value that fits the smaller room fits the exact one, so every value
    fits, or not, as with the exact count.

    Two loops over the one walk: the first, while the text is still shared, also asks
    whether each variable ends the shared prefix; the second, after it ends, is the
    plain fill."""
    reached, block = _reached(nodes, values, absent, varies)
    if literal_bytes is not None and literal_bytes <= limit:
        reserved, counted = literal_bytes, False
    else:
        reserved, counted = _reached_size(reached), True
        if reserved > limit:
            raise PromptTooLarge(reserved, limit)
    room = limit - reserved
    out: list[str] = []
    append = out.append
    get = values.get
    new: set[str] = set()
    walk = iter(reached)
    # Where the prefix ends: the pieces of ``out`` before it, and code points beyond.
    end: tuple[int, int] | None = None
    stop: PrefixStop | None = None
    for node in islice(walk, None if block is None else block[0]):
        if isinstance(node, str):
            append(node)
            continue
        key = node.key
        value = None if key in absent or key in new else get(key)
        if value:
            size = utf8_size(value)
            if size > room and not counted:
                room += reserved - _reached_size(reached)
                counted = True
            if size > room:
                new.add(key)
                end = (len(out), 0)
            else:
                room -= size
                append(value)
                if varies(key):
                    end = (len(out) - 1, 0)
                elif type(value) is Prefixed:
                    end = (len(out) - 1, value.shared)
                else:
                    continue
        elif key in absent or varies(key):
            end = (len(out), 0)
        else:
            continue
        index = len(reached) - length_hint(walk) - 1
        stop = PrefixStop(key, False, reached[:index].count(node))
        break
    else:
        if block is not None:
            end, stop = (len(out), 0), PrefixStop(block[1], True, 0)
    for node in walk:
        if isinstance(node, str):
            append(node)
            continue
        key = node.key
        value = None if key in absent or key in new else get(key)
        if value:
            size = utf8_size(value)
            if size > room and not counted:
                room += reserved - _reached_size(reached)
                counted = True
            if size <= room:
                room -= size
                append(value)
            else:
                new.add(key)
    prefix = None if end is None else sum(map(len, islice(out, end[0]))) + end[1]
    return "".join(out), new, prefix, stop


def _reached_size(reached: list[str | Variable]) -> int:
    """The UTF-8 bytes of the literal text in ``reached``."""
    return sum(utf8_size(node) for node in reached if type(node) is str)


def _reached(
    nodes: tuple[Node, ...], values: Values, absent: frozenset[str], varies: Varies
) -> tuple[list[str | Variable], tuple[int, str] | None]:
    """The text and the variables the walk reaches, in order, with the keys of ``absent``
    not existing; only the blocks' keys are looked up here. Also the first block the
    walk reaches whose key varies or is absent: its place in that list and its key."""
    reached: list[str | Variable] = []
    append = reached.append
    get = values.get
    block: tuple[int, str] | None = None
    pending: list[Iterator[Node]] = []
    current: Iterator[Node] = iter(nodes)
    while True:
        for node in current:
            if not isinstance(node, Block):
                append(node)
                continue
            key = node.key
            if block is None and (key in absent or varies(key)):
                block = (len(reached), key)
            exists = key not in absent and get(key) is not None
            branch = node.then if exists is not node.negated else node.otherwise
            if branch:
                pending.append(current)
                current = iter(branch)
                break
        else:
            if not pending:
                return reached, block
            current = pending.pop()

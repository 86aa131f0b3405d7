"""Nodes: the parsed form of a template, and the walk that renders it.

A template parses to a tuple of nodes. A node is literal text (a plain ``str``), a
``Variable``, or a ``Block`` holding two tuples of nodes, one per branch. Rendering
walks this tree with an explicit stack of iterators, so nesting depth costs no
recursion, and looks up each key only when the walk reaches it: a variable in a branch
that is not taken is never looked up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple, TypeAlias


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

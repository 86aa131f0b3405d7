"""The parser: pairs tags into blocks and builds the node tree in one pass.

It consumes the lexer's flat stream (``lexer.split``) left to right with a stack of open
blocks, exactly as docs/template-language.md §4 describes:

* ``[if]`` opens a block;
* ``[else]`` belongs to the innermost open block if that block has no ``[else]`` yet,
  otherwise it is literal text;
* ``[endif]`` closes the innermost open block, or is literal text when none is open;
* blocks still open at the end are *unmatched*: their ``[if]`` and attached ``[else]``
  become literal text and their contents are spliced into the enclosing branch, each
  node moved once, so the pass stays linear however many blocks are left open.

Standalone lines (§5) are decided here too: a structural tag alone on its line
takes the line's leading whitespace and its line ending with it. Because an ``[if]``
is only known to be matched at the end, an ``[if]`` (and its ``[else]``) keeps the exact
text it removed, to give it back if it ends up unmatched.

Problems that ``lint`` reports are recorded by the ordinal of the tag (its index in the
lexer's stream), which ``lint`` maps back to a line and column.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, NamedTuple, TypeAlias

from sysprompt_core.template.lexer import (
    CONDITION,
    IF,
    KEYWORD,
    LINE_END,
    NEGATED,
    STRIDE,
    VARIABLE,
    split,
)
from sysprompt_core.template.nodes import Block, Node, Variable


class Problem(Enum):
    UNMATCHED_IF = "unmatched [if]"
    UNMATCHED_ELSE = "[else] of an unmatched [if]"
    STRAY_ELSE = "[else] outside any block"
    SECOND_ELSE = "second [else] in one block"
    STRAY_ENDIF = "[endif] without an open [if]"


class Finding(NamedTuple):
    """A tag that ended up literal although it looks structural."""

    problem: Problem
    ordinal: int
    opened_by: int | None = None


class Parsed(NamedTuple):
    nodes: tuple[Node, ...]
    references: frozenset[str]
    findings: tuple[Finding, ...]


# An open block is a tuple, cheap to build on the hot path:
# (parent, key, negated, then, if_tag, otherwise, else_tag), where parent is the branch
# the finished block goes into, then/otherwise are node lists (otherwise is None until an
# [else] arrives), and each *_tag is (stride index, leading whitespace, line ending) as
# removed with a standalone tag: enough to give its exact text back if the block ends up
# unmatched.
_Tag: TypeAlias = tuple[int, str, str]
_OpenBlock: TypeAlias = tuple[
    list[Node], str, bool, list[Node], _Tag, "list[Node] | None", "_Tag | None"
]


def parse(source: str) -> Parsed:
    """Parse ``source`` into nodes, the keys it references, and its literal tags."""
    # Items alternate between text (str) and the tag's groups (str or None); ``Any``
    # spares the hot loop a cast per item.
    parts: list[Any] = split(source)
    last = len(parts) - 1
    root: list[Node] = []
    branch = root
    open_blocks: list[_OpenBlock] = []
    variables: dict[str, Variable] = {}
    conditions: set[str] = set()
    findings: list[Finding] = []
    line_begins = 0  # stride index of a text known to begin a line

    for at in range(0, last, STRIDE):
        text: str = parts[at]
        key = parts[at + VARIABLE]
        if key is not None:
            if text:
                branch.append(text)
            node = variables.get(key)
            if node is None:
                node = variables[key] = Variable(key)
            branch.append(node)
            continue

        keyword = parts[at + KEYWORD]
        line_end: str | None = parts[at + LINE_END]
        begins_line = at == line_begins
        if line_end:
            line_begins = at + STRIDE
        if keyword is not None and not (
            open_blocks and (keyword == "endif" or open_blocks[-1][5] is None)
        ):
            branch.append(text + "[" + keyword + "]" + (line_end or ""))
            findings.append(_literal_finding(keyword, at // STRIDE, open_blocks))
            continue

        # A structural tag: it takes its line with it when it stands alone there.
        if line_end is None:
            cut = -1
        elif text.endswith("\n") or (begins_line and not text):
            cut = len(text)
        else:
            cut = _blank_line_start(text, begins_line)
        if cut < 0:
            tag, after = (at, "", ""), line_end
            if text:
                branch.append(text)
        else:
            tag, after = (at, text[cut:], line_end or ""), None
            if cut:
                branch.append(text[:cut])

        if keyword is None:
            then: list[Node] = [after] if after else []
            negated = parts[at + NEGATED] is not None
            open_blocks.append((branch, parts[at + CONDITION], negated, then, tag, None, None))
            branch = then
        elif keyword == "else":
            parent, key, negated, then, if_tag, _, _ = open_blocks[-1]
            branch = [after] if after else []
            open_blocks[-1] = (parent, key, negated, then, if_tag, branch, tag)
        else:
            branch, key, negated, then, _, otherwise, _ = open_blocks.pop()
            branch.append(Block(key, negated, tuple(then), tuple(otherwise or ())))
            conditions.add(key)
            if after:
                branch.append(after)

    text = parts[last]
    if text:
        branch.append(text)
    if open_blocks:
        _splice_unmatched(open_blocks, parts, findings)
    return Parsed(tuple(root), frozenset(variables).union(conditions), tuple(findings))


def _blank_line_start(text: str, begins_line: bool) -> int:
    """Where the last line of ``text`` begins if it holds only spaces and tabs, else -1."""
    cut = text.rfind("\n") + 1
    if (cut or begins_line) and not text[cut:].strip(" \t"):
        return cut
    return -1


def _literal_finding(keyword: str, ordinal: int, open_blocks: list[_OpenBlock]) -> Finding:
    if keyword == "endif":
        return Finding(Problem.STRAY_ENDIF, ordinal)
    if open_blocks:
        return Finding(Problem.SECOND_ELSE, ordinal, open_blocks[-1][4][0] // STRIDE)
    return Finding(Problem.STRAY_ELSE, ordinal)


def _splice_unmatched(
    open_blocks: list[_OpenBlock], parts: list[Any], findings: list[Finding]
) -> None:
    """Turn the blocks left open into literal tags around their contents.

    Each open block's parent is the last branch of the block below it (nothing can be
    added to that branch while an inner block is open), and the bottom block's parent
    is the root; appending every block's pieces to the root in stack order therefore
    keeps the source order and moves each node once.
    """
    target = open_blocks[0][0]
    for _, _, _, then, if_tag, otherwise, else_tag in open_blocks:
        target.append(_literal(if_tag, "[" + parts[if_tag[0] + IF] + "]"))
        target.extend(then)
        findings.append(Finding(Problem.UNMATCHED_IF, if_tag[0] // STRIDE))
        if otherwise is not None and else_tag is not None:
            target.append(_literal(else_tag, "[else]"))
            target.extend(otherwise)
            findings.append(
                Finding(Problem.UNMATCHED_ELSE, else_tag[0] // STRIDE, if_tag[0] // STRIDE)
            )


def _literal(tag: _Tag, text: str) -> str:
    """A tag's exact text, with what a standalone tag had removed of its line."""
    _, lead, line_end = tag
    return lead + text + line_end

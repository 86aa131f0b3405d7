"""An author's regular expression, measured before it is compiled, run with a time limit.

The ``regex`` module builds a counted repeat's body once per repetition of its minimum
when it compiles (``a{4294967294}``, 13 characters, asks for about 20 GB; ``a{5000000}``
for 1.3 GB), and keeps what it compiled in a module-wide cache. So a pattern — of a
``regex`` check, or anywhere in a ``json_schema`` check's schema — goes through:

    text ≤ EVAL_PATTERN_MAX_CHARS
    ──parsed by the regex module's own parser (the syntax exactly as its compiler reads
      it: verbose mode, inline flags, fuzzy constraints; nothing is built yet)──▶ tree
    ──measured: each repeat count and fuzzy limit ≤ EVAL_PATTERN_MAX_REPEAT, groups,
      alternations and repeats nested ≤ EVAL_PATTERN_MAX_DEPTH deep, and its size ≤
      EVAL_PATTERN_MAX_SIZE──▶ only then compiled, with the module's cache off

A pattern's *size* counts each node of the tree (a string, each of its characters) once
per repetition of the minimum counts of the repeats around it (``(?:ab){3}``: 3 × 3):
what the compiler builds. Measured, one unit takes at most 300 bytes and 2 µs to
compile. :func:`pattern_compile` refuses with :class:`InvalidCheck` naming the field;
:func:`pattern_search` runs a compiled pattern within a time limit.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from sysprompt_core.errors import InvalidCheck
from sysprompt_core.extras import extra_missing
from sysprompt_core.limits import (
    EVAL_CASE_PATTERNS_MAX_SIZE,
    EVAL_PATTERN_MAX_CHARS,
    EVAL_PATTERN_MAX_DEPTH,
    EVAL_PATTERN_MAX_REPEAT,
    EVAL_PATTERN_MAX_SIZE,
)

try:
    import regex
except ModuleNotFoundError as missing:  # an agent host's install: no [evaluations]
    raise extra_missing("evaluations", missing) from missing

__all__ = ["BoundedPattern", "pattern_compile", "pattern_search"]

FLAGS = regex.VERSION0
_core: Any = importlib.import_module("regex._regex_core")
_main: Any = importlib.import_module("regex._main")


@dataclass(frozen=True, slots=True, eq=False)
class BoundedPattern:
    """A pattern that passed the bounds: its text, its measured size, its compiled form."""

    text: str
    size: int
    compiled: regex.Pattern[str]


def pattern_compile(pattern: str, field: str, room: int = EVAL_PATTERN_MAX_SIZE) -> BoundedPattern:
    """``pattern`` measured and compiled (not cached by the module), or
    :class:`InvalidCheck` naming ``field``. ``room``: what is left of the size the
    patterns of one case may have together."""
    if len(pattern) > EVAL_PATTERN_MAX_CHARS:
        raise InvalidCheck(field, f"may have at most {EVAL_PATTERN_MAX_CHARS:,} characters")
    size = _measured(_parsed(pattern, field), field, min(room, EVAL_PATTERN_MAX_SIZE))
    try:
        compiled = regex.compile(pattern, FLAGS, cache_pattern=False)
    except (regex.error, OverflowError, RecursionError, ValueError, KeyError) as error:
        raise _invalid(field, error) from None
    finally:
        # The module remembers, for every pattern ever compiled, whether it is
        # locale-sensitive, whatever cache_pattern says: a hint, safe to drop.
        _main._locale_sensitive.pop((str, pattern), None)
    return BoundedPattern(pattern, size, compiled)


def pattern_search(pattern: BoundedPattern, text: str, timeout: float) -> Any:
    """The first match of ``pattern`` in ``text`` or ``None``; :class:`TimeoutError`
    past ``timeout`` seconds."""
    return pattern.compiled.search(text, timeout=timeout)


def _invalid(field: str, error: BaseException) -> InvalidCheck:
    said = str(error) or "nested too deeply"
    return InvalidCheck(field, f"is not a valid regular expression: {said}")


def _parsed(pattern: str, field: str) -> Any:
    """The parse tree, as ``regex.compile`` reads the pattern before building anything
    (a scoped flag set at the top level, ``(?x)``, makes it read the pattern again)."""
    flags = FLAGS
    try:
        while True:
            source = _core.Source(pattern)
            info = _core.Info(flags, source.char_type, {})
            info.guess_encoding = _core.UNICODE
            source.ignore_space = bool(info.flags & _core.VERBOSE)
            try:
                tree = _core._parse_pattern(source, info)
            except _core._UnscopedFlagSet:
                flags = info.global_flags
                continue
            if not source.at_end():
                raise regex.error("unbalanced parenthesis", pattern, source.pos)
            return tree
    except RecursionError:
        raise InvalidCheck(field, _too_deep()) from None
    except (regex.error, OverflowError, ValueError, KeyError) as error:
        raise _invalid(field, error) from None


def _measured(tree: Any, field: str, limit: int) -> int:
    """The tree's size; :class:`InvalidCheck` when a count, the nesting or the size is
    over its bound (said as soon as it is)."""
    size = 0
    stack: list[tuple[Any, int, int]] = [(tree, 1, 0)]
    while stack:
        node, factor, depth = stack.pop()
        if isinstance(node, _core.Sequence):
            inner = depth
        else:
            inner = depth + 1 if _children(node) else depth
            if inner > EVAL_PATTERN_MAX_DEPTH:
                raise InvalidCheck(field, _too_deep())
        size += factor * (len(node.characters) if isinstance(node, _core.String) else 1)
        if size > limit:
            raise InvalidCheck(field, _too_large(limit))
        if isinstance(node, _core.GreedyRepeat):  # lazy and possessive ones too
            _count_check(node.min_count, field)
            _count_check(node.max_count, field)
            factor *= max(node.min_count, 1)
        if isinstance(node, _core.Fuzzy):
            _fuzzy_check(node.constraints, field)
        stack.extend((child, factor, inner) for child in _children(node))
    return size


def _too_deep() -> str:
    return f"nests groups, alternatives and repeats more than {EVAL_PATTERN_MAX_DEPTH} deep"


def _too_large(limit: int) -> str:
    if limit < EVAL_PATTERN_MAX_SIZE:
        return (
            f"asks for too much: counting each repetition, the patterns of this case's "
            f"checks together may have at most {EVAL_CASE_PATTERNS_MAX_SIZE:,} parts"
        )
    return (
        f"asks for too much: counting each repetition, it has more than "
        f"{EVAL_PATTERN_MAX_SIZE:,} parts (write + or * for an open-ended repeat)"
    )


def _children(node: Any) -> list[Any]:
    found = []
    for value in vars(node).values():
        if isinstance(value, _core.RegexBase):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(item for item in value if isinstance(item, _core.RegexBase))
    return found


def _count_check(count: int | None, field: str) -> None:
    if count is not None and count > EVAL_PATTERN_MAX_REPEAT:
        raise InvalidCheck(
            field,
            f"repeats {count:,} times; a counted repeat may ask for at most "
            f"{EVAL_PATTERN_MAX_REPEAT:,} (write + or * for an open-ended one)",
        )


def _fuzzy_check(constraints: dict[str, Any], field: str) -> None:
    for value in constraints.values():
        numbers = value.values() if isinstance(value, dict) else value
        for number in numbers:
            if isinstance(number, int) and number > EVAL_PATTERN_MAX_REPEAT:
                raise InvalidCheck(
                    field,
                    f"allows {number:,} errors; a fuzzy match may allow at most "
                    f"{EVAL_PATTERN_MAX_REPEAT:,}",
                )

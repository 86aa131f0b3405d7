"""Lint: what in a template is probably not what its author meant.

Rendering never fails; instead ``lint`` reports, each with a 1-based line and column:

* structure — an unmatched ``[if]``, a stray ``[endif]``, a stray or second ``[else]``
  (all rendered as literal text; severity ``error``);
* vocabulary — an unknown variable type or an unknown name of a fixed type, with a
  "did you mean" when one is close (they render as nothing; ``warning``);
* near misses — text that is almost a tag, such as ``[If x:y]``, ``[endif ]``,
  ``[if x:y ]`` or ``[ file:x]`` (literal text; ``warning``).

The vocabulary maps each known type to its fixed names, or to ``None`` for a dynamic
type (``file``) whose names are free. By default it is the built-in variable registry.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from sysprompt_core.template.lexer import PATTERN, LineIndex, Token, tokenize
from sysprompt_core.template.parser import Finding, Problem, parse

Vocabulary: TypeAlias = Mapping[str, "frozenset[str] | None"]
Severity: TypeAlias = Literal["error", "warning"]

# Any bracketed run on one line: the candidates for a near miss.
_BRACKETED = re.compile(r"\[[^\[\]\r\n]*\]")
_NEAR_IF = re.compile(r"(?i:if)(?=[ \t!])[ \t]*(!?)[ \t]*(.+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding; a tag never spans lines, so ``end_column`` closes it."""

    line: int
    column: int
    end_column: int
    severity: Severity
    message: str


def lint(source: str, vocabulary: Vocabulary) -> list[Diagnostic]:
    """Return the diagnostics of ``source``, ordered by position.

    ``vocabulary`` names the variable types and names lint knows; the engine has none of
    its own (``sysprompt_core.variables.lint`` passes the registry's).
    """
    # The tags are streamed, never all held: only those a finding names are kept, and
    # the start of each (for the near misses). A template of the largest size with a
    # tag every few bytes holds tens of thousands of them.
    findings = parse(source).findings
    literal = {finding.ordinal for finding in findings}
    named = literal | {f.opened_by for f in findings if f.opened_by is not None}
    kept: dict[int, Token] = {}
    starts: set[int] = set()
    diagnostics: list[Diagnostic] = []
    for ordinal, tag in enumerate(tokenize(source)):
        starts.add(tag.start)
        if ordinal in named:
            kept[ordinal] = tag
        if ordinal not in literal:
            diagnostics.extend(_vocabulary((tag,), vocabulary))
    diagnostics += [_structure(finding, kept) for finding in findings]
    diagnostics += _near_misses(source, starts, vocabulary)
    diagnostics.sort(key=lambda d: (d.line, d.column))
    return diagnostics


def _at(tag: Token, severity: Severity, message: str) -> Diagnostic:
    return Diagnostic(tag.line, tag.column, tag.column + len(tag.text), severity, message)


def _structure(finding: Finding, tags: Mapping[int, Token]) -> Diagnostic:
    tag = tags[finding.ordinal]
    opener = tags[finding.opened_by] if finding.opened_by is not None else None
    opened_at = f"line {opener.line}" if opener else ""
    match finding.problem:
        case Problem.UNMATCHED_IF:
            message = f"{tag.text} is never closed: add [endif] after its block"
        case Problem.UNMATCHED_ELSE:
            message = f"[else] belongs to the unmatched [if] on {opened_at}"
        case Problem.STRAY_ELSE:
            message = "[else] is outside any [if] block"
        case Problem.SECOND_ELSE:
            message = f"second [else] in the block opened on {opened_at}"
        case Problem.STRAY_ENDIF:
            message = "[endif] has no open [if] to close"
    return _at(tag, "error", message + "; it is shown as literal text")


def _vocabulary(tags: Iterable[Token], vocabulary: Vocabulary) -> Iterator[Diagnostic]:
    for tag in tags:
        if tag.key is None:
            continue
        type_, name = tag.key.split(":", 1)
        if type_ not in vocabulary:
            hint = _did_you_mean(type_, vocabulary)
            yield _at(
                tag, "warning", f"unknown variable type '{type_}'{hint}; it renders as nothing"
            )
            continue
        names = vocabulary[type_]
        if names is not None and name not in names:
            hint = _did_you_mean(name, names, prefix=f"{type_}:") or (
                f" (known: {', '.join(sorted(names))})"
            )
            yield _at(tag, "warning", f"unknown variable '{tag.key}'{hint}; it renders as nothing")


def _did_you_mean(word: str, choices: Iterable[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f" (did you mean '{prefix}{close[0]}'?)" if close else ""


def _near_misses(source: str, starts: set[int], vocabulary: Vocabulary) -> Iterator[Diagnostic]:
    lines = LineIndex(source)
    for match in _BRACKETED.finditer(source):
        if match.start() in starts:
            continue
        suggestion = _intended(match[0][1:-1], vocabulary)
        if suggestion is not None:
            line, column = lines.position(match.start())
            message = f"'{match[0]}' is literal text, not a tag; did you mean '{suggestion}'?"
            yield Diagnostic(line, column, column + len(match[0]), "warning", message)


def _intended(inner: str, vocabulary: Vocabulary) -> str | None:
    """The tag that ``[inner]`` was probably meant to be, if any."""
    word = inner.strip()
    if word.lower() in ("else", "endif"):
        return f"[{word.lower()}]"
    if_tag = _NEAR_IF.fullmatch(word)
    if if_tag is not None:
        candidate = f"[if {if_tag[1]}{_normal_ref(if_tag[2])}]"
        return candidate if PATTERN.fullmatch(candidate) else None
    ref = _normal_ref(word)
    if ref.partition(":")[0] in vocabulary and PATTERN.fullmatch(f"[{ref}]"):
        return f"[{ref}]"
    return None


def _normal_ref(text: str) -> str:
    type_, _, name = text.partition(":")
    return f"{type_.strip().lower()}:{name.strip()}"

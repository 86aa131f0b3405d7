"""Names in the prompt library: fragment names, and the keys of providers and models.

* ``fragment_name_check(name)`` — a fragment name is one or more segments joined by
  ``/``, each matching ``[a-z0-9][a-z0-9._-]*`` (so never ``.`` or ``..``), at most
  ``FRAGMENT_NAME_MAX_LENGTH`` characters in all (``core``, ``env/git-repository``,
  ``tools/read-file``). It returns the name unchanged, or raises
  :class:`~sysprompt_core.errors.InvalidFragmentName` with a message that says what is
  wrong and shows a valid name (a corrected one when the input suggests one).
* ``normalize_key(text)`` — how a provider or a model is matched: lowercase, every run
  of characters other than ``a-z0-9`` becomes one ``-``, leading and trailing ``-``
  dropped (``Claude Sonnet 4.5`` → ``claude-sonnet-4-5``).
* ``is_variable_name(name)`` — whether ``name`` can stand after ``var:`` in a tag, i.e.
  whether ``[var:<name>]`` is a variable under the template language's rules.
"""

from __future__ import annotations

import re

from sysprompt_core.errors import InvalidFragmentName
from sysprompt_core.template.lexer import PATTERN as TAG_PATTERN

FRAGMENT_NAME_MAX_LENGTH = 200

PATTERN = re.compile(
    r"""
    (?P<segment> [a-z0-9] [a-z0-9._-]*+ )
    (?: / [a-z0-9] [a-z0-9._-]*+ )*+
    """,
    re.VERBOSE,
)
"""A whole fragment name (use ``fullmatch``). A segment starts with a letter or a
digit, so ``.`` and ``..`` never match."""

_SEGMENT = re.compile(r"[a-z0-9][a-z0-9._-]*+")
_NOT_KEY = re.compile(r"[^a-z0-9]++")
_NOT_SEGMENT = re.compile(r"[^a-z0-9._-]++")
_EXAMPLES = "'core', 'env/git-repository' or 'tools/read-file'"


def fragment_name_check(name: str) -> str:
    """Return ``name`` if it is a valid fragment name; raise ``InvalidFragmentName``."""
    if len(name) <= FRAGMENT_NAME_MAX_LENGTH and PATTERN.fullmatch(name):
        return name
    raise InvalidFragmentName(name, _message(name))


def is_fragment_name(name: str) -> bool:
    """Whether ``name`` is a valid fragment name (``fragment_name_check`` without raising)."""
    return len(name) <= FRAGMENT_NAME_MAX_LENGTH and PATTERN.fullmatch(name) is not None


def normalize_key(text: str) -> str:
    """The matching key of a provider or a model: ``Claude Sonnet 4.5`` → ``claude-sonnet-4-5``.

    May be empty (``"--"``, ``"ü"``): callers decide what a key without letters or
    digits means.
    """
    return _NOT_KEY.sub("-", text.lower()).strip("-")


def is_variable_name(name: str) -> bool:
    """Whether ``[var:<name>]`` is a variable tag (template language §2): at least one
    character, no ``[``, ``]``, CR or LF, no leading or trailing whitespace."""
    match = TAG_PATTERN.fullmatch(f"[var:{name}]")
    return match is not None and match["variable"] is not None


def _message(name: str) -> str:
    rule = (
        "A fragment name is one or more segments joined by '/'; a segment is a "
        "lowercase letter or digit followed by lowercase letters, digits, '.', '_' or "
        f"'-'; at most {FRAGMENT_NAME_MAX_LENGTH} characters in all"
    )
    suggestion = _suggestion(name)
    example = f"'{suggestion}'" if suggestion else _EXAMPLES
    return f"{_reason(name)} {rule}: for example {example}."


def _reason(name: str) -> str:
    if not name:
        return "The fragment name is empty."
    if len(name) > FRAGMENT_NAME_MAX_LENGTH:
        return (
            f"The fragment name has {len(name):,} characters, more than {FRAGMENT_NAME_MAX_LENGTH}."
        )
    for segment in name.split("/"):
        if not segment:
            return (
                f"The fragment name {name!r} has an empty segment ('/' at the start or "
                "the end, or two in a row)."
            )
        if segment in (".", ".."):
            return f"The fragment name {name!r} has the segment {segment!r}."
        if not _SEGMENT.fullmatch(segment):
            bad = _first_bad_character(segment)
            return f"The segment {segment!r} of the fragment name {name!r} {bad}."
    return f"The fragment name {name!r} is not valid."  # pragma: no cover - unreachable


def _first_bad_character(segment: str) -> str:
    if not re.match(r"[a-z0-9]", segment):
        return f"starts with {segment[0]!r}, not a lowercase letter or digit"
    bad = _NOT_SEGMENT.search(segment)
    assert bad is not None
    return f"holds {bad[0][0]!r}"


def _suggestion(name: str) -> str | None:
    """A valid name close to ``name`` (``Env/Git Repository`` → ``env/git-repository``)."""
    segments = []
    for segment in name.lower().split("/"):
        cleaned = _NOT_SEGMENT.sub("-", segment).lstrip("._-")
        if cleaned:
            segments.append(cleaned)
    suggestion = "/".join(segments)[:FRAGMENT_NAME_MAX_LENGTH].rstrip("/")
    return suggestion if is_fragment_name(suggestion) else None

"""Prompt names: paths of segments, the folders they make, and the one rule they follow.

A prompt's name is a path (``support/triage``): 1 to ``PROMPT_NAME_MAX_SEGMENTS``
segments separated by ``/``, each 1–64 of ``a-z 0-9 . _ -`` starting with a letter or
digit, at most ``PROMPT_NAME_MAX_LENGTH`` characters in all. A segment never starts with
``-``, so ``/-/`` after a name is never part of it (the REST routes' separator). A
*folder* is a prefix of whole segments ending in ``/`` (``support/``).

:func:`prompt_name_check` returns a good name or raises :class:`InvalidPromptName`
naming the field and the rule; :func:`folder_check` does the same for a folder;
:func:`folders_of` lists the folders a name sits in, outermost first. A name is never a
file path: nothing here touches the file system.
"""

from __future__ import annotations

import re

from sysprompt_core.errors import CoreError

DEFAULT_PROMPT = "default"
"""The prompt every deployment has: what today's routes and clients mean."""
PROMPT_NAME_MAX_LENGTH = 200
PROMPT_NAME_MAX_SEGMENTS = 8
PROMPT_SEGMENT_MAX_LENGTH = 64
PROMPT_SEGMENT_PATTERN = rf"[a-z0-9][a-z0-9._-]{{0,{PROMPT_SEGMENT_MAX_LENGTH - 1}}}"
PROMPT_NAME_PATTERN = (
    rf"{PROMPT_SEGMENT_PATTERN}(?:/{PROMPT_SEGMENT_PATTERN}){{0,{PROMPT_NAME_MAX_SEGMENTS - 1}}}"
)
"""A prompt's name as a regular expression (without the overall length bound)."""

PROMPT_NAME_RULE = (
    f"a prompt's name is 1 to {PROMPT_NAME_MAX_SEGMENTS} segments separated by '/', "
    f"each 1 to {PROMPT_SEGMENT_MAX_LENGTH} of a-z, 0-9, '.', '_', '-' starting with a "
    f"letter or digit, at most {PROMPT_NAME_MAX_LENGTH} characters in all (such as "
    "'support/triage')"
)

_NAME = re.compile(PROMPT_NAME_PATTERN)
_FOLDER = re.compile(rf"(?:{PROMPT_SEGMENT_PATTERN}/){{1,{PROMPT_NAME_MAX_SEGMENTS - 1}}}")


class InvalidPromptName(CoreError, ValueError):
    """A name (or folder) that breaks the rule; ``field`` says which input it was."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def is_prompt_name(name: object) -> bool:
    """Whether ``name`` follows the rule."""
    return (
        isinstance(name, str)
        and len(name) <= PROMPT_NAME_MAX_LENGTH
        and _NAME.fullmatch(name) is not None
    )


def _shown(value: object) -> str:
    return repr(value)[:80] if isinstance(value, str) else f"a {type(value).__name__}"


def prompt_name_check(name: object, field: str = "name") -> str:
    """``name`` when it follows the rule; :class:`InvalidPromptName` naming ``field``."""
    if is_prompt_name(name):
        assert isinstance(name, str)
        return name
    raise InvalidPromptName(field, f"{_shown(name)} is not a prompt name: {PROMPT_NAME_RULE}.")


def is_folder(folder: object) -> bool:
    """Whether ``folder`` is a folder: whole segments, each followed by ``/``."""
    return (
        isinstance(folder, str)
        and len(folder) <= PROMPT_NAME_MAX_LENGTH
        and _FOLDER.fullmatch(folder) is not None
    )


def folder_check(folder: object, field: str = "folder") -> str:
    """``folder`` (``support/`` or ``support``, answered with its ``/``) when whole
    segments; :class:`InvalidPromptName` naming ``field``."""
    if isinstance(folder, str) and not folder.endswith("/"):
        folder = folder + "/"
    if is_folder(folder):
        assert isinstance(folder, str)
        return folder
    raise InvalidPromptName(
        field,
        f"{_shown(folder)} is not a folder: a folder is the first segments of prompt names, "
        f"each followed by '/' (such as 'support/'); {PROMPT_NAME_RULE}.",
    )


def folders_of(name: str) -> list[str]:
    """The folders ``name`` sits in, outermost first: ``a/b/c`` → ``["a/", "a/b/"]``."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[: index + 1]) + "/" for index in range(len(parts))]


def in_folder(name: str, folder: str) -> bool:
    """Whether ``name`` sits in ``folder`` (at any depth)."""
    return name.startswith(folder)

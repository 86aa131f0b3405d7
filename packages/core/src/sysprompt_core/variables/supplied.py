"""Values the agent host supplies: checked once, then used instead of the resolvers.

An agent host and the server are often different machines (agent-hosts §0), so a host
may send the values of host-local keys (``scope.is_host_local``: ``prompt:cwd``,
``git:``, ``file:``, ``system:``) as ``values``: ``{"type:name": text or null}``, null
meaning that the value does not exist. The pipeline::

    request JSON ──check_supplied──▶ dict ──ResolveContext(supplied=…)──▶ LazyValues
      (a supplied key is its value; a host-local key that is not supplied and whose
       type the context's ``server_resolves`` leaves out does not exist; any other key
       goes to its resolver)

:func:`check_supplied` refuses, with :class:`InvalidHostValues` naming the field
(``values.git:status``): anything but an object of keys to a string or null; more than
``HOST_VALUES_MAX_COUNT`` entries; a key that is not a variable reference a template
can write, or is not host-local; a value with a NUL character or that is not Unicode
text; a value over ``max_value_bytes`` (the largest file the server reads) or values
over ``max_total_bytes`` together (what one resolution may read), in UTF-8. A
supplied value is used as it is (no line ending is removed): the prompt's own size
limit still applies to it, like to any value.
"""

from __future__ import annotations

from sysprompt_core._json import json_type
from sysprompt_core.errors import CoreError
from sysprompt_core.limits import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_READ_BYTES,
    HOST_VALUE_KEY_MAX_LENGTH,
    HOST_VALUES_MAX_COUNT,
)
from sysprompt_core.template.lexer import PATTERN
from sysprompt_core.variables.scope import is_host_local

__all__ = ["SERVER_RESOLVES_SETTING", "InvalidHostValues", "check_supplied"]

SERVER_RESOLVES_SETTING = "SERVER_RESOLVES"
"""The server setting that says which host-local types it resolves itself."""

_HOST_LOCAL = "prompt:cwd, git:<name>, file:<path> or system:<name>"


class InvalidHostValues(CoreError, ValueError):
    """Host-supplied values are refused: ``field`` names the part that is wrong
    (``values``, ``values.git:status``), the message says how to fix it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def check_supplied(
    values: object,
    field: str = "values",
    *,
    max_value_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_total_bytes: int = DEFAULT_MAX_READ_BYTES,
) -> dict[str, str | None]:
    """``values`` checked as host-supplied values (see the module docstring)."""
    if not isinstance(values, dict):
        raise InvalidHostValues(
            field,
            f'values are an object of "type:name" keys ({_HOST_LOCAL}) to a string, or '
            f"null for a value that does not exist; got {json_type(values)}.",
        )
    if len(values) > HOST_VALUES_MAX_COUNT:
        raise InvalidHostValues(
            field, f"{len(values):,} values given; at most {HOST_VALUES_MAX_COUNT:,} are allowed."
        )
    checked: dict[str, str | None] = {}
    total = 0
    for key, value in values.items():
        name = _check_key(key, field)
        checked[name], size = _check_value(value, f"{field}.{name}", max_value_bytes)
        total += size
        if total > max_total_bytes:
            raise InvalidHostValues(
                field,
                f"the values hold more than {max_total_bytes:,} bytes in UTF-8 together; "
                "at most that much is allowed (what one resolution may read).",
            )
    return checked


def _check_key(key: object, field: str) -> str:
    if not isinstance(key, str):
        raise InvalidHostValues(field, f'a key is a "type:name" string; got {json_type(key)}.')
    shown = key if len(key) <= 60 else key[:60] + "…"
    if len(key) > HOST_VALUE_KEY_MAX_LENGTH:
        raise InvalidHostValues(
            f"{field}.{shown}",
            f"a key has at most {HOST_VALUE_KEY_MAX_LENGTH:,} characters; "
            f"this one has {len(key):,}.",
        )
    match = PATTERN.fullmatch(f"[{key}]")
    if match is None or match["variable"] != key:
        raise InvalidHostValues(
            f"{field}.{shown}",
            "a key is a variable reference as a template writes it between brackets, "
            "such as 'git:branch' or 'file:AGENTS.md'.",
        )
    if not is_host_local(key):
        raise InvalidHostValues(
            f"{field}.{shown}",
            f"only host-local values can be supplied: {_HOST_LOCAL}. The others come "
            "from the request's own fields (model, provider, tools, variables) or the "
            "library.",
        )
    return key


def _check_value(value: object, field: str, limit: int) -> tuple[str | None, int]:
    """The value and its size in UTF-8 bytes."""
    if value is None:
        return None, 0
    if not isinstance(value, str):
        raise InvalidHostValues(
            field,
            f"a value is a string, or null when it does not exist; got {json_type(value)}.",
        )
    if "\0" in value:
        raise InvalidHostValues(field, "a value holds no NUL character.")
    try:
        size = _size(value)
    except UnicodeEncodeError:
        raise InvalidHostValues(
            field, "a value is Unicode text; this one holds a lone surrogate."
        ) from None
    if size > limit:
        raise InvalidHostValues(
            field,
            f"the value has {size:,} bytes in UTF-8; at most {limit:,} are allowed "
            "(the largest file the server reads).",
        )
    return value, size


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))

"""How an error message names a JSON value's kind: ``null``, ``a string``, ``an object``.

A leaf module (it imports nothing of the core), so the checks of host-supplied input in
``variables.supplied`` and ``library.overrides`` share it without importing each other.
"""

from __future__ import annotations

__all__ = ["json_type"]


def json_type(value: object) -> str:
    """The kind of a decoded JSON value as a message says it (``got a number``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__

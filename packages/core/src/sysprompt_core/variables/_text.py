"""Text helpers shared by the resolvers."""

from __future__ import annotations


def strip_line_ending(text: str) -> str:
    """``text`` without one trailing ``\\r\\n`` or ``\\n`` (only one, and nothing else)."""
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def describe_error(exc: Exception) -> str:
    """A short, lowercase description of an error, without the path it concerned."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)

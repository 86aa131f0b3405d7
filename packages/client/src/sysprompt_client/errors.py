"""The exceptions the client raises, one class per kind of failure.

Every exception is a :class:`SyspromptError` carrying ``status`` (the HTTP status, or
``None`` when no answer came) and ``message`` (the server's own sentence when it gave
one). A 4xx is the caller's error and is always raised; a :class:`ServerError` (5xx,
unreachable, timed out) is what ``fallback`` answers for on a first turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "PreconditionFailed",
    "ServerError",
    "SyspromptError",
    "Unauthorized",
    "Unavailable",
]


class SyspromptError(Exception):
    """Any failure of a call to the sysprompt server.

    ``status`` is the HTTP status (``None`` when the server gave no answer), ``message``
    what the server said (its ``detail``, or its field errors joined), ``body`` the
    decoded JSON answer when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body

    def __str__(self) -> str:
        return self.message if self.status is None else f"{self.status}: {self.message}"


class InvalidRequest(SyspromptError):
    """400, 413, 415: the request was refused as it is. ``errors`` holds the server's
    field errors (``{"cwd": ["…"]}``), empty when it answered a ``detail``."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: Any = None,
        errors: Mapping[str, list[str]] | None = None,
    ) -> None:
        super().__init__(message, status=status, body=body)
        self.errors: dict[str, list[str]] = dict(errors or {})


class Unauthorized(SyspromptError):
    """401: no token, an unknown token, or an inactive user."""


class Forbidden(SyspromptError):
    """403: the token's user lacks a permission (the message names it)."""


class NotFound(SyspromptError):
    """404: nothing stored under that conversation id, or not visible to this token."""


class Conflict(SyspromptError):
    """409: the request conflicts with the server's current state."""


class Gone(SyspromptError):
    """410: the named prompt is archived and takes no new conversation (the message
    names it); its conversations keep their frozen prompts."""


class PreconditionFailed(Conflict):
    """412: an ``If-Match`` did not name the current version; nothing was changed."""


class ServerError(SyspromptError):
    """5xx: the server failed. A first turn answers the fallback instead, when one is
    configured."""


class Unavailable(ServerError):
    """The server could not be reached, timed out, or said it cannot serve now
    (503, 429). ``status`` is ``None`` when no answer came at all."""


_BY_STATUS: dict[int, type[SyspromptError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    412: PreconditionFailed,
    413: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    429: Unavailable,
    503: Unavailable,
}


def error_for(status: int, body: Any, reason: str = "") -> SyspromptError:
    """The exception for an error answer: its class from ``status``, its message from
    the server's JSON (``detail``, or field errors) or else the reason phrase."""
    errors: dict[str, list[str]] = {}
    message = ""
    if isinstance(body, dict):
        detail = body.get("detail")
        if isinstance(detail, str):
            message = detail
        else:
            for field, messages in body.items():
                items = messages if isinstance(messages, list) else [messages]
                errors[str(field)] = [str(m) for m in items]
            message = "; ".join(f"{field}: {' '.join(ms)}" for field, ms in errors.items())
    if not message:
        message = reason or f"HTTP {status}"
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else SyspromptError)
    if cls is InvalidRequest:
        return InvalidRequest(message, status=status, body=body, errors=errors)
    return cls(message, status=status, body=body)

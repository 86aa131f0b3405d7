"""Who is acting now, for the records no service writes: the audit of users, groups,
permissions and tokens changed through the Django admin, ``manage.py shell``,
``createsuperuser`` or ``changepassword`` (``sysprompt.accounts.signals``).

:class:`ActorMiddleware` keeps the request being answered in a context variable for
the length of the request; :func:`current_actor` reads its user when a signal asks —
by then the session's user, or the token's once DRF has authenticated the call (DRF
sets the user on the Django request too). Outside a request (a management command, a
shell, the installer) there is no actor: the system — unless a service names its
author with :func:`acting`. ``through_admin`` says whether the change is made by a
view of the Django admin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final, cast

from django.http import HttpRequest, HttpResponseBase

from sysprompt.events.services import Actor

_request: ContextVar[HttpRequest | None] = ContextVar("sysprompt_audit_request", default=None)
_UNSET: Final = object()
_acting: ContextVar[object] = ContextVar("sysprompt_audit_actor", default=_UNSET)


class ActorMiddleware:
    """Makes the request's user the actor of the changes signals record (after
    ``AuthenticationMiddleware``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def acting(actor: Actor) -> Iterator[None]:
    """Within: ``actor`` made the changes signals record — for a service that changes
    users or tokens on behalf of the author it was given (``None``: the system),
    whether or not a request is being answered."""
    token = _acting.set(actor)
    try:
        yield
    finally:
        _acting.reset(token)


def current_actor() -> Actor:
    """Who acts: the one :func:`acting` names, else the user of the request being
    answered, if signed in; ``None`` (the system) otherwise."""
    named = _acting.get()
    if named is not _UNSET:
        return cast(Actor, named)
    request = _request.get()
    if request is None:
        return None
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    actor: Actor = user
    return actor


def through_admin() -> bool:
    """Whether the request being answered is one of the Django admin's views (its
    login and logout aside: they change no one's data)."""
    request = _request.get()
    match = None if request is None else getattr(request, "resolver_match", None)
    return (
        match is not None
        and match.namespace == "admin"
        and match.url_name not in ("login", "logout")
    )

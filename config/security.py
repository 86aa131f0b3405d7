"""django-axes hooks: whose address a login attempt came from, and the lockout page.

Settings (``sysprompt/settings.py``): ``AXES_CLIENT_IP_CALLABLE`` and
``AXES_LOCKOUT_CALLABLE`` name the two functions below.
"""

from __future__ import annotations

from datetime import timedelta
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: ``REMOTE_ADDR``, unless ``TRUSTED_PROXY_COUNT`` says that many
    proxies in front append to ``X-Forwarded-For`` (nginx's ``$proxy_add_x_forwarded_for``).

    Then the address is the entry the outermost trusted proxy appended, counted from the
    right; entries further left are whatever the client sent and are never believed. A
    header shorter than that (a request that bypassed a proxy) falls back to REMOTE_ADDR.
    """
    remote_addr = request.META.get("REMOTE_ADDR")
    if not isinstance(remote_addr, str):
        remote_addr = None
    proxies: int = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    if proxies <= 0:
        return remote_addr
    header = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    chain = [part.strip() for part in header.split(",")]
    chain = [part for part in chain if part]
    if len(chain) < proxies:
        return remote_addr
    return chain[-proxies]


def _duration(seconds: int) -> str:
    minutes, seconds = divmod(seconds, 60)
    if minutes and seconds:
        return f"{minutes} min {seconds} s"
    return f"{minutes} minute{'s' * (minutes != 1)}" if minutes else f"{seconds} seconds"


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """429 with the app's lockout page and ``Retry-After``, for the login page and the
    admin's alike."""
    cool_off: timedelta = settings.AXES_COOLOFF_TIME  # settings.py: always a timedelta
    seconds = int(cool_off.total_seconds())
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    context = {
        "username": str(username)[:150],
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cool_off": _duration(seconds) if seconds else "",
    }
    response = render(
        request,
        "registration/locked_out.html",
        context,
        status=getattr(settings, "AXES_HTTP_RESPONSE_CODE", HTTPStatus.TOO_MANY_REQUESTS),
    )
    if seconds:
        response["Retry-After"] = str(seconds)
    return response

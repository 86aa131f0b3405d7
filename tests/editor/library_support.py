"""Shared helpers of the Library view tests (``test_library_*.py``): a logged-in client,
a shorthand to save a variant through the library's service, htmx headers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from sysprompt.library import selectors, services

SCRIPT = "<script>alert(1)</script>"


def web(user: User, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def save(
    name: str,
    text: str,
    provider: str | None = None,
    model: str | None = None,
    *,
    author: User | None = None,
    **settings: Any,
) -> selectors.VariantState:
    return services.variant_save(
        name=name, provider=provider, model=model, text=text, author=author, **settings
    )


def htmx(**extra: str) -> dict[str, str]:
    """The headers of an htmx request (``extra``: ``History_Restore_Request="true"``
    becomes ``HX-History-Restore-Request``)."""
    return {"HX-Request": "true", **{f"HX-{k.replace('_', '-')}": v for k, v in extra.items()}}

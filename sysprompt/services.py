"""Services: every write the application makes goes through a function here."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

ADMIN_USERNAME = "admin"


class AdminBootstrapError(Exception):
    """The admin cannot be created: a user named ``admin`` exists but is no superuser."""


@dataclass(frozen=True)
class AdminBootstrap:
    """What :func:`admin_ensure` did: ``password`` is set only when it created the admin."""

    username: str
    password: str | None


@transaction.atomic
def admin_ensure(*, password: str | None = None) -> AdminBootstrap:
    """Create the ``admin`` superuser unless a superuser already exists.

    Raises AdminBootstrapError when no superuser exists but the name is taken.
    ``password`` defaults to a fresh random one. Idempotent: with a superuser present,
    nothing is written and the first superuser's name is returned without a password.
    """
    user_model = get_user_model()
    existing = user_model.objects.filter(is_superuser=True).order_by("pk").first()
    if existing is not None:
        return AdminBootstrap(username=existing.get_username(), password=None)
    if user_model.objects.filter(username=ADMIN_USERNAME).exists():
        raise AdminBootstrapError(
            f"A user named {ADMIN_USERNAME!r} exists but is not a superuser; "
            "create one with `manage.py createsuperuser`."
        )
    password = password or secrets.token_urlsafe(12)
    user_model.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
    return AdminBootstrap(username=ADMIN_USERNAME, password=password)

"""The accounts app."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Agent hosts, groups and the first administrator; it has no models of its own."""

    name = "sysprompt.accounts"
    label = "accounts"

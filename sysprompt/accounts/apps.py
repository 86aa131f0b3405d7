"""The accounts app."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Agent hosts, groups and the first administrator; it has no models of its own. Its
    ``ready`` connects the audit of users, groups, permissions and tokens
    (:mod:`sysprompt.accounts.signals`)."""

    name = "sysprompt.accounts"
    label = "accounts"

    def ready(self) -> None:
        from sysprompt.accounts import signals  # the models are loaded only now

        signals.connect()

"""The events app."""

from __future__ import annotations

from django.apps import AppConfig


class EventsConfig(AppConfig):
    """The audit log, webhook subscriptions, events and their deliveries."""

    name = "sysprompt.events"
    label = "events"
    verbose_name = "Events and audit log"
    default_auto_field = "django.db.models.BigAutoField"

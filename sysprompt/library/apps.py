"""The library app: fragments with their variants' histories, shipped defaults, and the
agent hosts' instance overrides."""

from __future__ import annotations

from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "sysprompt.library"
    label = "library"
    verbose_name = "Prompt library"
    default_auto_field = "django.db.models.BigAutoField"

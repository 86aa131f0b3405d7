"""The editor application."""

from __future__ import annotations

from django.apps import AppConfig


class EditorConfig(AppConfig):
    """Pages for editing templates and previewing prompts."""

    name = "sysprompt.editor"
    label = "editor"
    default_auto_field = "django.db.models.BigAutoField"

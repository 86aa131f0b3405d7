"""The prompts app: the global template's versions and the per-conversation prompts."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks

from sysprompt.prompts.checks import check_app_settings, check_git_confinement


class PromptsConfig(AppConfig):
    """Templates and conversations. Keeps the label ``sysprompt`` it had before the
    project was split into apps, so its tables, permissions and migrations keep their
    names. Registers the start-up check (the cache of parsed templates is the library
    app's, shared with fragments)."""

    name = "sysprompt.prompts"
    label = "sysprompt"
    verbose_name = "sysprompt"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(check_app_settings)
        checks.register(check_git_confinement)

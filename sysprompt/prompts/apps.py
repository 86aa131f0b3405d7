"""The prompts app: the global template's versions and the per-conversation prompts."""

from __future__ import annotations

from types import ModuleType

from django.apps import AppConfig
from django.core import checks

from sysprompt.prompts.checks import check_app_settings, check_git_confinement
from sysprompt_core.template.cache import ParsedTemplates


class PromptsConfig(AppConfig):
    """Templates and conversations. Keeps the label ``sysprompt`` it had before the
    project was split into apps, so its tables, permissions and migrations keep their
    names. Registers the start-up check; owns the process's cache of parsed templates."""

    name = "sysprompt.prompts"
    label = "sysprompt"
    verbose_name = "sysprompt"
    default_auto_field = "django.db.models.BigAutoField"

    def __init__(self, app_name: str, app_module: ModuleType | None) -> None:
        super().__init__(app_name, app_module)
        self.parsed_templates = ParsedTemplates()

    def ready(self) -> None:
        checks.register(check_app_settings)
        checks.register(check_git_confinement)

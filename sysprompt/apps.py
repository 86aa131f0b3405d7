"""The core sysprompt application."""

from __future__ import annotations

from types import ModuleType

from django.apps import AppConfig
from django.core import checks

from sysprompt.cache import ParsedTemplates
from sysprompt.checks import check_app_settings


class SyspromptConfig(AppConfig):
    """Registers the start-up check; owns the process's cache of parsed templates."""

    name = "sysprompt"
    verbose_name = "sysprompt"
    default_auto_field = "django.db.models.BigAutoField"

    def __init__(self, app_name: str, app_module: ModuleType | None) -> None:
        super().__init__(app_name, app_module)
        self.parsed_templates = ParsedTemplates()

    def ready(self) -> None:
        checks.register(check_app_settings)

"""The core sysprompt application."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks

from sysprompt.checks import check_app_settings


class SyspromptConfig(AppConfig):
    """Registers the start-up check of the SYSPROMPT settings."""

    name = "sysprompt"
    verbose_name = "sysprompt"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(check_app_settings)

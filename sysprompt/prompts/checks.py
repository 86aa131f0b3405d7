"""System checks: a bad ``settings.SYSPROMPT`` fails ``manage.py check`` and runserver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error
from django.core.exceptions import ImproperlyConfigured

from sysprompt.conf import app_settings


def check_app_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Validate ``settings.SYSPROMPT`` at start-up instead of at first use."""
    try:
        app_settings()
    except ImproperlyConfigured as error:
        return [Error(str(error), id="sysprompt.E001")]
    return []

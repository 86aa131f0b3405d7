"""The releases app: releases of the working copy, labels, test contexts and impact."""

from __future__ import annotations

from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "sysprompt.releases"
    label = "releases"
    verbose_name = "Releases"
    default_auto_field = "django.db.models.BigAutoField"

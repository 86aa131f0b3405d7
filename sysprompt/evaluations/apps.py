"""The evaluations app: model endpoints, suites, cases and runs."""

from __future__ import annotations

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "sysprompt.evaluations"
    label = "evaluations"
    verbose_name = "Evaluations"
    default_auto_field = "django.db.models.BigAutoField"

"""The evaluations app: model endpoints, suites, cases and runs."""

from __future__ import annotations

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "sysprompt.evaluations"
    label = "evaluations"
    verbose_name = "Evaluations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Give the releases app's label gates their evidence: runs of this app."""
        from sysprompt.evaluations.gate import RunEvidence
        from sysprompt.releases.gates import evidence_register

        evidence_register(RunEvidence())

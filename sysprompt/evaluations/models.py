"""Suites of cases, and runs that replay them through a model.

A :class:`Suite` holds :class:`Case` rows. A :class:`Run` evaluates a candidate against
a baseline on a suite: when it starts, each case becomes a :class:`RunCase` (both
sides' rendered system prompts, kept for the prompt's diff) and each case × side ×
repetition a :class:`RunCall` — the unit of work a worker claims (``claimed_until``, a
lease), does and saves at once. Where both sides' prompts are the same for the same
model, one call (``side = "both"``) serves both. :class:`CachedResponse` keeps model
answers across runs by :func:`sysprompt_core.evaluations.response_key`; errors are
never kept.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, MODEL_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH

STATUSES = ("queued", "running", "finished", "failed", "cancelled")
ENDED = ("finished", "failed", "cancelled")
SIDES = ("baseline", "candidate", "both")


class Suite(models.Model):
    prompt = models.ForeignKey(
        "sysprompt.Prompt", on_delete=models.PROTECT, related_name="suites", editable=False
    )
    name = models.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    cases_changed_at = models.DateTimeField(
        help_text="When a case of the suite was last added, changed or deleted (the gate "
        "accepts only runs that started after it)."
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["prompt", "name"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "name"], name="evaluations_suite_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Case(models.Model):
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="cases")
    name = models.CharField(max_length=CONVERSATION_ID_MAX_LENGTH)
    context = models.JSONField(default=dict, blank=True)
    messages = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    checks = models.JSONField(default=list, blank=True)
    reference = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["suite", "id"]
        constraints = [
            models.UniqueConstraint(fields=["suite", "name"], name="evaluations_case_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.suite_id}/{self.name}"


class Run(models.Model):
    prompt = models.ForeignKey(
        "sysprompt.Prompt", on_delete=models.PROTECT, related_name="runs", editable=False
    )
    suite = models.ForeignKey(
        Suite, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    suite_name = models.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    candidate = models.JSONField(help_text='"latest", {"release": N} or {"label": name}')
    baseline = models.JSONField()
    candidate_release = models.IntegerField(
        null=True, blank=True, help_text="The release the candidate named, when it named one."
    )
    baseline_target = models.JSONField(
        null=True, blank=True, help_text="The baseline label's target when the run started."
    )
    candidate_model = models.CharField(max_length=MODEL_MAX_LENGTH)
    baseline_model = models.CharField(max_length=MODEL_MAX_LENGTH)
    default_model = models.BooleanField(
        default=False, help_text="The run named no model: it got EVAL_DEFAULT_MODEL's."
    )
    repeat = models.PositiveSmallIntegerField(default=1)
    fresh = models.BooleanField(default=False)
    planned_calls = models.PositiveIntegerField(
        default=0, help_text="The most model calls the run may make (its plan, judges included)."
    )
    planned_cost = models.FloatField(
        null=True,
        blank=True,
        help_text="The plan's cost at most, in the models' price units (null: not priced).",
    )
    spent = models.FloatField(
        default=0.0,
        help_text="What the calls the run made cost (judges included; answers from the "
        "cache cost nothing), in the models' price units.",
    )
    status = models.CharField(
        max_length=16, choices=[(s, s) for s in STATUSES], default="queued", db_index=True
    )
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    prepared = models.PositiveIntegerField(
        default=0,
        help_text="The id of the last case with its RunCase row (cases are prepared in id "
        "order); 0: none yet.",
    )
    cases_total = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["suite", "-id"], name="evaluations_run_suite_idx"),
            models.Index(fields=["created_at"], name="evaluations_run_created_idx"),
            models.Index(fields=["prompt", "-id"], name="evaluations_run_prompt_idx"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.suite_name}"


class RunCase(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    case_name = models.CharField(max_length=CONVERSATION_ID_MAX_LENGTH)
    messages = models.JSONField(default=list, help_text="The case's turns when the run began.")
    tools = models.JSONField(default=list)
    checks = models.JSONField(default=list)
    baseline_prompt = models.TextField(null=True, blank=True)
    candidate_prompt = models.TextField(null=True, blank=True)
    prompt_changed = models.BooleanField(default=True)
    error = models.TextField(blank=True, help_text="Why the case could not be rendered.")
    verdict = models.CharField(max_length=16, blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "position"], name="evaluations_runcase_unique_position"
            )
        ]


class RunCall(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="calls")
    run_case = models.ForeignKey(RunCase, on_delete=models.CASCADE, related_name="calls")
    side = models.CharField(max_length=10, choices=[(s, s) for s in SIDES])
    repetition = models.PositiveSmallIntegerField()
    done = models.BooleanField(default=False)
    claimed_by = models.CharField(max_length=64, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    output = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    checks = models.JSONField(default=list, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    ms = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    cached = models.BooleanField(default=False)

    class Meta:
        ordering = ["run_case", "side", "repetition"]
        indexes = [models.Index(fields=["run", "done", "id"], name="evaluations_call_todo_idx")]


class CachedResponse(models.Model):
    key = models.CharField(max_length=64, unique=True)
    output = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()

"""What the events app stores: the audit log, webhook subscriptions, and the outbox of
events with their deliveries and every attempt.

* :class:`AuditRecord` is append-only, like the template's versions: who, when, what
  (an action and its object) and a one-line summary, never a secret. It names its actor
  by id and user name without a foreign key, so no deletion anywhere ever changes it.
* :class:`Webhook` is a subscription: a receiver's URL, the event types it wants,
  whether payloads carry prompt text, and its signing secret (``whsec_…``), which only
  the answer that created it shows. ``active`` false with a ``paused_reason`` is a
  subscription the worker paused because it kept failing.
* :class:`Event` is the outbox: written in the transaction of the change it reports,
  naming the subscriptions that wanted it then (``webhook_ids``); the worker's first
  task fans it out into one :class:`Delivery` per subscription (``fanned_out``).
  ``message_id`` is the ``webhook-id`` every attempt of every delivery sends.
* :class:`Attempt` is one try of a delivery: its answer's status or the error, when,
  and how long it took — the delivery log.

Writes go through :mod:`sysprompt.events.services` (and the worker's
:mod:`sysprompt.events.delivery`); reads through :mod:`sysprompt.events.selectors`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from sysprompt.errors import AuditRecordImmutable
from sysprompt.events.catalog import (
    ACTION_MAX_LENGTH,
    AUDIT_OBJECT_MAX_LENGTH,
    AUDIT_SUMMARY_MAX_LENGTH,
    DELIVERY_STATES,
    PENDING,
    URL_MAX_LENGTH,
)
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH


class AuditRecordQuerySet(models.QuerySet["AuditRecord"]):
    """Refuses bulk changes: the audit log only grows."""

    def update(self, **kwargs: Any) -> int:
        raise AuditRecordImmutable("The audit log only grows; its records never change.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AuditRecordImmutable("The audit log only grows; its records stay.")


class AuditRecord(models.Model):
    """One change: who made it, when, what it was, and a one-line summary."""

    at = models.DateTimeField(editable=False)
    actor_id = models.IntegerField(
        null=True, blank=True, editable=False, help_text="The user's id; empty: the system."
    )
    actor = models.CharField(
        max_length=150, blank=True, editable=False, help_text="The user name at the time."
    )
    action = models.CharField(max_length=ACTION_MAX_LENGTH, editable=False)
    object = models.CharField(max_length=AUDIT_OBJECT_MAX_LENGTH, editable=False)
    summary = models.CharField(max_length=AUDIT_SUMMARY_MAX_LENGTH, editable=False)
    prompt = models.CharField(
        max_length=PROMPT_NAME_MAX_LENGTH,
        blank=True,
        editable=False,
        help_text="The prompt's name at the time; empty: deployment-wide (fragments, users).",
    )

    objects = AuditRecordQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["actor", "id"], name="events_audit_actor_id_idx"),
            models.Index(fields=["action", "id"], name="events_audit_action_id_idx"),
            models.Index(fields=["prompt", "id"], name="events_audit_prompt_id_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor or 'system'} {self.action}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditRecordImmutable(f"Audit record {self.pk} is stored; it never changes.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditRecordImmutable(f"Audit record {self.pk} is part of the log; it stays.")


class Webhook(models.Model):
    """A subscription: where to send which events, and the secret that signs them."""

    url = models.CharField(max_length=URL_MAX_LENGTH)
    events = models.JSONField(default=list, help_text="The event types it receives.")
    prompts = models.JSONField(
        default=list,
        blank=True,
        help_text='Prompt names or folders ("support/") whose events it receives; empty: all '
        "(events of no prompt, such as a fragment's, always).",
    )
    include_text = models.BooleanField(
        default=False, help_text="Payloads carry prompt text (templates, fragments, overrides)."
    )
    active = models.BooleanField(default=True)
    paused_reason = models.TextField(
        blank=True, help_text="Why the worker paused it; empty unless it did."
    )
    paused_at = models.DateTimeField(null=True, blank=True)
    secret = models.CharField(max_length=128, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(editable=False)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"webhook {self.pk}"


class Event(models.Model):
    """Something that happened, waiting in the outbox for its deliveries."""

    message_id = models.CharField(max_length=40, unique=True, editable=False)
    type = models.CharField(max_length=ACTION_MAX_LENGTH, editable=False)
    data = models.JSONField(editable=False, help_text="The payload's data, without text.")
    text = models.JSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="Fields added to data for subscriptions that include text.",
    )
    webhook_ids = models.JSONField(
        default=list, editable=False, help_text="The subscriptions that wanted it."
    )
    fanned_out = models.BooleanField(
        default=False, help_text="Its deliveries exist (the worker made them)."
    )
    created_at = models.DateTimeField(editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["fanned_out", "created_at"], name="events_event_fan_out_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.message_id}"


class Delivery(models.Model):
    """One event to one subscription: pending until delivered or given up."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(
        max_length=16, choices=[(state, state) for state in DELIVERY_STATES], default=PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(
        default=0, help_text="Failed attempts in a row since it was queued or resumed."
    )
    next_attempt_at = models.DateTimeField()
    locked_until = models.DateTimeField(
        null=True, blank=True, help_text="A worker is attempting it until then."
    )
    locked_by = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["event", "webhook"], name="events_delivery_unique"),
            models.CheckConstraint(
                condition=models.Q(state__in=list(DELIVERY_STATES)),
                name="events_delivery_state_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="events_delivery_due_idx"),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.state})"


class Attempt(models.Model):
    """One try of a delivery, as the delivery log shows it."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="log")
    webhook = models.ForeignKey(
        Webhook,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,  # the (webhook, id) index serves the log's pages
    )
    number = models.PositiveIntegerField()
    at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    response = models.TextField(blank=True, help_text="The start of the receiver's answer.")

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["webhook", "id"], name="events_attempt_webhook_id_idx")]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"

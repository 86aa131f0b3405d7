"""Reads of the events app: subscriptions as pages and the API show them (never their
secret), a subscription's delivery log, and the audit log with its filters.

* :func:`webhooks_list` / :func:`webhook_get` — :class:`WebhookState` s, each with how
  many deliveries wait and when the last attempt was made.
* :func:`webhook_attempts` — the delivery log, newest first (a queryset for cursor
  pages), each attempt with its event's id and type.
* :func:`audit_records` — the log, newest first, filtered by actor and action;
  :func:`audit_actors` / :func:`audit_actions` — the values the filters offer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q, QuerySet

from sysprompt.errors import WebhookNotFound
from sysprompt.events.catalog import PENDING
from sysprompt.events.models import Attempt, AuditRecord, Webhook


@dataclass(frozen=True)
class WebhookState:
    """A subscription without its secret."""

    id: int
    url: str
    events: list[str]
    prompts: list[str]
    include_text: bool
    active: bool
    paused_reason: str
    paused_at: datetime | None
    created_at: datetime
    updated_at: datetime
    pending: int = 0
    last_attempt_at: datetime | None = None


def webhook_state(webhook: Webhook, pending: int = 0, last: datetime | None = None) -> WebhookState:
    return WebhookState(
        id=webhook.pk,
        url=webhook.url,
        events=list(webhook.events),
        prompts=list(webhook.prompts or []),
        include_text=webhook.include_text,
        active=webhook.active,
        paused_reason=webhook.paused_reason,
        paused_at=webhook.paused_at,
        created_at=webhook.created_at,
        updated_at=webhook.updated_at,
        pending=pending,
        last_attempt_at=last,
    )


def _annotated() -> QuerySet[Webhook]:
    return Webhook.objects.annotate(
        pending_count=Count("deliveries", filter=Q(deliveries__state=PENDING), distinct=True),
        last_attempt=Max("deliveries__log__at"),
    ).order_by("id")


def webhooks_list() -> list[WebhookState]:
    """Every subscription, oldest first; one query."""
    return [
        webhook_state(row, row.pending_count, row.last_attempt)  # type: ignore[attr-defined]
        for row in _annotated()
    ]


MAX_ID = 2**63 - 1


def webhook_id_valid(webhook_id: int) -> int:
    """``webhook_id`` if some row could have it (a path may hold any number of digits)."""
    if not 1 <= webhook_id <= MAX_ID:
        raise WebhookNotFound(webhook_id)
    return webhook_id


def webhook_get(webhook_id: int) -> WebhookState:
    """One subscription; :class:`~sysprompt.errors.WebhookNotFound` when there is none."""
    row = _annotated().filter(pk=webhook_id_valid(webhook_id)).first()
    if row is None:
        raise WebhookNotFound(webhook_id)
    return webhook_state(row, row.pending_count, row.last_attempt)  # type: ignore[attr-defined]


def webhook_attempts(webhook_id: int, *, before: int | None = None) -> QuerySet[Attempt]:
    """The delivery log of a subscription, newest first (404 for none); ``before``: only
    attempts older than that one (the editor's "older" link)."""
    if not Webhook.objects.filter(pk=webhook_id_valid(webhook_id)).exists():
        raise WebhookNotFound(webhook_id)
    attempts = Attempt.objects.filter(webhook_id=webhook_id)
    if before is not None:
        attempts = attempts.filter(id__lt=before)
    return attempts.select_related("delivery__event").order_by("-id")


def audit_records(
    *,
    actor: str | None = None,
    action: str | None = None,
    before: int | None = None,
    prompt: str | None = None,
) -> QuerySet[AuditRecord]:
    """The audit log, newest first; ``actor`` is a user name (``""``: the system),
    ``action`` an action or a prefix ending in a dot (``fragment.``); ``prompt`` a
    prompt's name (its records) or a folder ending in ``/`` (the records of every prompt
    in it); ``before``: only records older than that one."""
    records = AuditRecord.objects.order_by("-id")
    if prompt:
        records = (
            records.filter(prompt__startswith=prompt)
            if prompt.endswith("/")
            else records.filter(prompt=prompt)
        )
    if before is not None:
        records = records.filter(id__lt=before)
    if actor is not None:
        records = records.filter(actor=actor)
    if action:
        records = (
            records.filter(action__startswith=action)
            if action.endswith(".")
            else records.filter(action=action)
        )
    return records


def audit_actors() -> list[str]:
    """The user names that appear in the log (``""`` for the system), sorted."""
    return sorted(set(AuditRecord.objects.values_list("actor", flat=True).distinct()))


def audit_prompts() -> list[str]:
    """The prompt names that appear in the log, sorted."""
    return sorted(set(AuditRecord.objects.exclude(prompt="").values_list("prompt", flat=True)))


def audit_actions() -> list[str]:
    """The actions that appear in the log, sorted."""
    return sorted(set(AuditRecord.objects.values_list("action", flat=True).distinct()))

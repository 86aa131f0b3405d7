"""The worker's side: attempting deliveries, retrying them, pausing what keeps failing.

A task names an event (its first: :func:`fan_out` makes one delivery per subscription
the event named, then each is attempted) or deliveries (a retry, a resume, a recovery).
For each delivery (:func:`deliveries_attempt`):

due and pending → its subscription active (a ``ping`` goes out whatever the state) →
**claimed** (a lease of ``locked_until``/``locked_by``, taken by one conditional
``UPDATE``, so two tasks for the same delivery never both send it) → the signed body
(``signing``) → one attempt (``sending.post``) → in one transaction: the attempt in the
log, and

* a 2xx: delivered;
* a ``ping``: one attempt only, delivered or failed;
* ``410 Gone``: the subscription is paused at once (the receiver says it is gone);
* anything else: retried with exponential backoff — the k-th retry waits
  ``window × 2^(k-1) / (2^12 - 1)`` (``window``: ``SYSPROMPT_WEBHOOK_RETRY_WINDOW``, a
  day), so 12 retries end one window after the first attempt (21 s, 42 s, … 12 h for a
  day); the retry is enqueued in the same transaction (``queue.send_soon``). After the
  last one the delivery has failed and its subscription is paused, with the reason.

A paused (or switched off) subscription's pending deliveries wait; resuming it sends
them (``services.webhook_update``). The same event keeps its ``webhook-id`` on every
attempt; each attempt is signed afresh with the time it is made.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from sysprompt.conf import AppSettings, app_settings
from sysprompt.events import queue, signing
from sysprompt.events.catalog import DELIVERED, FAILED, PENDING, PING, RETRIES
from sysprompt.events.models import Attempt, AuditRecord, Delivery, Event, Webhook
from sysprompt.events.sending import Outcome, post


def deliveries_attempt(*, event_id: int | None, delivery_ids: list[int]) -> int:
    """Attempt each due, pending delivery of event ``event_id`` (fanned out first) or
    among ``delivery_ids``; how many were attempted."""
    conf = app_settings()
    if event_id is not None:
        fresh = fan_out(event_id, conf)
        if fresh is not None:  # made and claimed here: sent without reading them again
            return sum(_send(delivery, token, conf) for delivery, token in fresh)
    rows = Delivery.objects.select_related("event", "webhook").filter(state=PENDING)
    rows = (
        rows.filter(event_id=event_id) if event_id is not None else rows.filter(pk__in=delivery_ids)
    )
    return sum(_attempt(delivery, conf) for delivery in rows.order_by("pk"))


def fan_out(event_id: int, conf: AppSettings) -> list[tuple[Delivery, str]] | None:
    """Make the event's deliveries, one per subscription it named that still exists,
    those to send now already claimed; None when they were made before."""
    with transaction.atomic():
        event = Event.objects.select_for_update().filter(pk=event_id, fanned_out=False).first()
        if event is None:
            return None
        webhooks = Webhook.objects.filter(pk__in=event.webhook_ids).order_by("pk")
        token = secrets.token_hex(8)
        lease = timezone.now() + timedelta(seconds=lease_seconds(conf))
        made = Delivery.objects.bulk_create(
            Delivery(
                event=event,
                webhook=webhook,
                next_attempt_at=event.created_at,
                created_at=event.created_at,
                **(
                    {"locked_until": lease, "locked_by": token}
                    if webhook.active or event.type == PING
                    else {}  # paused since the change: held, as its other deliveries
                ),
            )
            for webhook in webhooks
        )
        Event.objects.filter(pk=event_id).update(fanned_out=True)
    return [(delivery, token) for delivery in made if delivery.locked_by]


def retry_delay(failures: int, window: float) -> timedelta:
    """How long to wait after the ``failures``-th failed attempt in a row (1 to 12)."""
    return timedelta(seconds=window * 2 ** (failures - 1) / (2**RETRIES - 1))


def lease_seconds(conf: AppSettings) -> float:
    """How long a claim lasts: longer than any attempt can take (connect, then the
    attempt's time twice: a last read may start just before it runs out)."""
    return conf.webhook_connect_timeout + 2 * conf.webhook_timeout + 2


def _attempt(delivery: Delivery, conf: AppSettings) -> int:
    """Attempt one delivery (as read, pending) if it is due and can be claimed; 1 if it
    was attempted."""
    now = timezone.now()
    if delivery.next_attempt_at > now:
        return 0
    event, webhook = delivery.event, delivery.webhook
    if not webhook.active and event.type != PING:
        return 0  # held until the subscription is resumed
    token = secrets.token_hex(8)
    claimed = (
        Delivery.objects.filter(pk=delivery.pk, state=PENDING)
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .update(locked_until=now + timedelta(seconds=lease_seconds(conf)), locked_by=token)
    )
    return _send(delivery, token, conf) if claimed else 0


def _send(delivery: Delivery, token: str, conf: AppSettings) -> int:
    """Sign and send a claimed delivery, and record the attempt; 1."""
    event, webhook = delivery.event, delivery.webhook
    content = signing.body(
        signing.payload(
            type=event.type,
            created_at=event.created_at,
            data=event.data,
            text=event.text,
            include_text=webhook.include_text,
        )
    )
    headers = signing.signed_headers(
        secret=webhook.secret, message_id=event.message_id, content=content
    )
    at = timezone.now()
    outcome = post(url=webhook.url, content=content, headers=headers, conf=conf)
    _record(delivery, token, at, outcome, conf)
    return 1


@transaction.atomic
def _record(
    delivery: Delivery, token: str, at: datetime, outcome: Outcome, conf: AppSettings
) -> None:
    number = delivery.attempts + 1
    Attempt.objects.create(
        delivery=delivery,
        webhook_id=delivery.webhook_id,
        number=number,
        at=at,
        duration_ms=outcome.duration_ms,
        status_code=outcome.status_code,
        error=outcome.error,
        response=outcome.response,
    )
    mine = Delivery.objects.filter(pk=delivery.pk, locked_by=token)
    now = timezone.now()
    unlocked = {"attempts": number, "locked_until": None, "locked_by": ""}
    if outcome.delivered:
        mine.update(state=DELIVERED, **unlocked)
        return
    if delivery.event.type == PING:
        mine.update(state=FAILED, **unlocked)
        return
    failures = delivery.failures + 1
    what = outcome.error or f"the answer was {outcome.status_code}"
    if outcome.status_code == 410:
        mine.update(failures=failures, next_attempt_at=now, **unlocked)
        webhook_pause(
            delivery.webhook_id,
            f"The receiver answered 410 Gone to event {delivery.event.message_id}, so "
            "nothing more was sent. Its pending events go out when you resume it.",
        )
        return
    if failures > RETRIES:
        mine.update(state=FAILED, failures=failures, **unlocked)
        webhook_pause(
            delivery.webhook_id,
            f"Event {delivery.event.message_id} ({delivery.event.type}) failed all "
            f"{failures} attempts in a row (the last: {what}); it was given up. The "
            "subscription's other pending events go out when you resume it.",
        )
        return
    when = now + retry_delay(failures, conf.webhook_retry_window)
    if mine.update(failures=failures, next_attempt_at=when, **unlocked):
        queue.send_soon(delivery_ids=[delivery.pk], run_after=when)


def webhook_pause(webhook_id: int, reason: str) -> bool:
    """Pause an active subscription with ``reason`` (and say so in the audit log)."""
    now = timezone.now()
    paused = Webhook.objects.filter(pk=webhook_id, active=True).update(
        active=False, paused_reason=reason, paused_at=now, updated_at=now
    )
    if paused:
        AuditRecord.objects.create(
            at=now,
            actor_id=None,
            actor="",
            action="webhook.paused",
            object=f"webhook {webhook_id}",
            summary=f"paused webhook {webhook_id}: {reason}"[:500],
        )
    return bool(paused)

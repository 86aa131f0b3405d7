"""The worker's side: attempting deliveries, retrying them, pausing what keeps failing.

Work comes in batches (:func:`attempt_batch`): events not yet fanned out — the worker
takes them from the outbox, or a task names one — and deliveries a task names (a retry,
a resume, a recovery). The events are fanned out first (:func:`fan_out`: in one
transaction, one delivery per subscription each event named that still exists). Then,
:data:`CONCURRENCY` at a time, the batch's deliveries that are

due and pending → of an active subscription (a ``ping`` goes out whatever the state) →
**claimed** (a lease of ``locked_until``/``locked_by``, taken by one conditional
``UPDATE`` of the rows still unclaimed, so two workers never both send a delivery) →
each signed (``signing``) and sent (``sending.post``, on the worker's kept connections):
a subscription's in the order of its events, different subscriptions side by side in
threads → in one transaction: each attempt in the log, and

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
attempt; each attempt is signed afresh with the time it is made. Should the worker die
anywhere in a batch, what it had not recorded is still pending in the database (an
event not fanned out, a delivery whose lease runs out): the sweep sends it again.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from sysprompt.conf import AppSettings, app_settings
from sysprompt.events import queue, signing
from sysprompt.events.catalog import DELIVERED, FAILED, PENDING, PING, RETRIES
from sysprompt.events.models import Attempt, AuditRecord, Delivery, Event, Webhook
from sysprompt.events.sending import Outcome, Sender, post, sender

CONCURRENCY = 8
"""Deliveries a worker claims together: those of different subscriptions are sent side
by side (threads), those of one subscription one after another in the order of their
events; the lease covers as many attempts as one subscription has among them."""

_threads: ThreadPoolExecutor | None = None


@dataclass(frozen=True)
class Attempted:
    """A delivery a batch attempted, and the event it belongs to."""

    delivery_id: int
    event_id: int


def deliveries_attempt(*, event_id: int | None, delivery_ids: list[int]) -> int:
    """Attempt each due, pending delivery of event ``event_id`` (fanned out first) or
    among ``delivery_ids``; how many were attempted (the task's work)."""
    events = [] if event_id is None else [event_id]
    return len(attempt_batch(event_ids=events, delivery_ids=delivery_ids))


def attempt_batch(*, event_ids: Sequence[int], delivery_ids: Sequence[int]) -> list[Attempted]:
    """Fan out the events not yet fanned out among ``event_ids``, then attempt every due,
    pending delivery of those events or among ``delivery_ids`` (see the module
    docstring); what was attempted."""
    conf = app_settings()
    fan_out(event_ids)
    via = sender(conf)
    attempted: list[Attempted] = []
    after = 0
    while True:
        token = secrets.token_hex(8)
        claimed = _claim(event_ids, delivery_ids, after, token, conf)
        if not claimed:
            return attempted
        outcomes = _send_all(claimed, conf, via)
        _record_all(claimed, outcomes, token, conf)
        attempted += [Attempted(delivery.pk, delivery.event_id) for delivery in claimed]
        after = claimed[-1].pk


def fan_out(event_ids: Sequence[int]) -> list[int]:
    """Make the deliveries of those of the events not yet fanned out, one per
    subscription each named that still exists, in one transaction; the ids of the
    events fanned out here."""
    if not event_ids:
        return []
    with transaction.atomic():
        events = list(
            Event.objects.select_for_update()
            .filter(pk__in=event_ids, fanned_out=False)
            .order_by("pk")
            .only("pk", "webhook_ids", "created_at")
        )
        if not events:
            return []
        wanted = {webhook_id for event in events for webhook_id in event.webhook_ids}
        existing = set(Webhook.objects.filter(pk__in=wanted).values_list("pk", flat=True))
        Delivery.objects.bulk_create(
            Delivery(
                event_id=event.pk,
                webhook_id=webhook_id,
                next_attempt_at=event.created_at,
                created_at=event.created_at,
            )
            for event in events
            for webhook_id in sorted(set(event.webhook_ids) & existing)
        )
        fanned = [event.pk for event in events]
        Event.objects.filter(pk__in=fanned).update(fanned_out=True)
    return fanned


def _claim(
    event_ids: Sequence[int],
    delivery_ids: Sequence[int],
    after: int,
    token: str,
    conf: AppSettings,
) -> list[Delivery]:
    """Claim up to :data:`CONCURRENCY` of the batch's due deliveries (above ``after``),
    read with their event and subscription."""
    now = timezone.now()
    unclaimed = Q(locked_until__isnull=True) | Q(locked_until__lt=now)
    candidates = list(
        Delivery.objects.select_related("event", "webhook")
        .filter(Q(event_id__in=event_ids) | Q(pk__in=delivery_ids))
        .filter(state=PENDING, next_attempt_at__lte=now, pk__gt=after)
        .filter(Q(webhook__active=True) | Q(event__type=PING))
        .filter(unclaimed)
        .order_by("pk")[:CONCURRENCY]
    )
    if not candidates:
        return []
    ids = [delivery.pk for delivery in candidates]
    in_turn = max(len(group) for group in _by_webhook(candidates).values())
    lease = now + timedelta(seconds=lease_seconds(conf) * in_turn)
    taken = (
        Delivery.objects.filter(pk__in=ids, state=PENDING)
        .filter(unclaimed)
        .update(locked_until=lease, locked_by=token)
    )
    if taken == len(candidates):
        return candidates
    mine = set(
        Delivery.objects.filter(pk__in=ids, locked_by=token).values_list("pk", flat=True)
    )  # another worker claimed some of them first
    return [delivery for delivery in candidates if delivery.pk in mine]


def _send_all(
    claimed: list[Delivery], conf: AppSettings, via: Sender
) -> list[tuple[datetime, Outcome]]:
    """Send the claimed deliveries: each subscription's one after another, in the order
    of its events, and the subscriptions side by side (threads)."""
    global _threads
    results: list[tuple[datetime, Outcome] | None] = [None] * len(claimed)

    def send(indexes: list[int]) -> None:
        for index in indexes:
            results[index] = _send(claimed[index], conf, via)

    groups = list(_by_webhook(claimed).values())
    if len(groups) == 1:
        send(groups[0])
    else:
        if _threads is None:
            _threads = ThreadPoolExecutor(CONCURRENCY, thread_name_prefix="webhook")
        list(_threads.map(send, groups))
    return [result for result in results if result is not None]


def _by_webhook(deliveries: list[Delivery]) -> dict[int, list[int]]:
    """The deliveries' indexes, by subscription, in order."""
    groups: dict[int, list[int]] = {}
    for index, delivery in enumerate(deliveries):
        groups.setdefault(delivery.webhook_id, []).append(index)
    return groups


def retry_delay(failures: int, window: float) -> timedelta:
    """How long to wait after the ``failures``-th failed attempt in a row (1 to 12)."""
    return timedelta(seconds=window * 2 ** (failures - 1) / (2**RETRIES - 1))


def lease_seconds(conf: AppSettings) -> float:
    """How long a claim lasts: longer than any attempt can take (connect, then the
    attempt's time twice: a last read may start just before it runs out)."""
    return conf.webhook_connect_timeout + 2 * conf.webhook_timeout + 2


def _send(delivery: Delivery, conf: AppSettings, via: Sender) -> tuple[datetime, Outcome]:
    """Sign and send a claimed delivery (in a thread: no database); when, and what came
    of it."""
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
    outcome = post(url=webhook.url, content=content, headers=headers, conf=conf, via=via)
    return at, outcome


@transaction.atomic
def _record_all(
    claimed: list[Delivery],
    outcomes: list[tuple[datetime, Outcome]],
    token: str,
    conf: AppSettings,
) -> None:
    """The chunk's attempts in the log, and each delivery's new state: the delivered in
    one ``UPDATE``, the others one by one."""
    Attempt.objects.bulk_create(
        Attempt(
            delivery_id=delivery.pk,
            webhook_id=delivery.webhook_id,
            number=delivery.attempts + 1,
            at=at,
            duration_ms=outcome.duration_ms,
            status_code=outcome.status_code,
            error=outcome.error,
            response=outcome.response,
        )
        for delivery, (at, outcome) in zip(claimed, outcomes, strict=True)
    )
    delivered = [
        delivery.pk
        for delivery, (_, outcome) in zip(claimed, outcomes, strict=True)
        if outcome.delivered
    ]
    if delivered:
        Delivery.objects.filter(pk__in=delivered, locked_by=token).update(
            state=DELIVERED, attempts=F("attempts") + 1, locked_until=None, locked_by=""
        )
    for delivery, (_, outcome) in zip(claimed, outcomes, strict=True):
        if not outcome.delivered:
            _record_failure(delivery, token, outcome, conf)


def _record_failure(delivery: Delivery, token: str, outcome: Outcome, conf: AppSettings) -> None:
    number = delivery.attempts + 1
    mine = Delivery.objects.filter(pk=delivery.pk, locked_by=token)
    now = timezone.now()
    unlocked = {"attempts": number, "locked_until": None, "locked_by": ""}
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

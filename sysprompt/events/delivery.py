"""The worker's side: attempting deliveries, retrying them, pausing what keeps failing.

Work comes in batches: events not yet fanned out — the worker takes them from the
outbox, or a task names one — and deliveries a task names (a retry, a resume, a
recovery). The events are fanned out first (:func:`fan_out`: in one transaction, one
delivery per subscription each event named that still exists); :func:`dispatch` then
names the subscriptions with due work, and :class:`Lanes` sends it:

each subscription in a **lane** of its own, at most ``SYSPROMPT_WEBHOOK_CONCURRENCY``
lanes at once (a thread each; a subscription waiting for a lane keeps its place) →
its due, pending deliveries (of an active subscription; a ``ping`` goes out whatever
the state), up to :data:`CHUNK` at a time in the order of their events, **claimed** (a
lease of ``locked_until``/``locked_by``, taken by one conditional ``UPDATE`` of the rows
still unclaimed, so two workers never both send a delivery; long enough for the chunk's
attempts one after another, as each ends at its deadline) → each signed (``signing``)
and sent (``sending.post``, on the worker's kept connections) in the lane's thread,
which touches no database → when the chunk is done, in one transaction of the thread
that owns the lanes: each attempt in the log, and

* a 2xx: delivered;
* a ``ping``: one attempt only, delivered or failed;
* ``410 Gone``: the subscription is paused at once (the receiver says it is gone);
* anything else: retried with exponential backoff — the k-th retry waits
  ``window × 2^(k-1) / (2^12 - 1)`` (``window``: ``SYSPROMPT_WEBHOOK_RETRY_WINDOW``, a
  day), so 12 retries end one window after the first attempt (21 s, 42 s, … 12 h for a
  day); the retry is enqueued in the same transaction (``queue.send_soon``). After the
  last one the delivery has failed and its subscription is paused, with the reason.

— then the lane takes the subscription's next chunk, or frees itself. A slow receiver
holds its own lane only: the others go on, and the worker keeps taking new work
(``worker``) while lanes are busy. :func:`attempt_batch` is the same run to its end (a
task of RQ, which runs one task at a time).

A paused (or switched off) subscription's pending deliveries wait; resuming it sends
them (``services.webhook_update``). The same event keeps its ``webhook-id`` on every
attempt; each attempt is signed afresh with the time it is made. Should the worker die
anywhere, what it had not recorded is still pending in the database (an event not
fanned out, a delivery whose lease runs out): the sweep sends it again.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from sysprompt.conf import AppSettings, app_settings
from sysprompt.events import queue, signing
from sysprompt.events.catalog import DELIVERED, FAILED, PENDING, PING, RETRIES
from sysprompt.events.models import Attempt, AuditRecord, Delivery, Event, Webhook
from sysprompt.events.sending import Outcome, Sender, post, sender

logger = logging.getLogger("sysprompt.events")

CHUNK = 16
"""Deliveries of one subscription a lane claims, sends one after another and records
together."""


@dataclass(frozen=True)
class Attempted:
    """A delivery a batch attempted (or, from :func:`dispatch`, found due), and the event
    and subscription it belongs to."""

    delivery_id: int
    event_id: int
    webhook_id: int = 0


def deliveries_attempt(*, event_id: int | None, delivery_ids: list[int]) -> int:
    """Attempt each due, pending delivery of event ``event_id`` (fanned out first) or
    among ``delivery_ids``; how many were attempted (the task's work)."""
    events = [] if event_id is None else [event_id]
    return len(attempt_batch(event_ids=events, delivery_ids=delivery_ids))


def attempt_batch(*, event_ids: Sequence[int], delivery_ids: Sequence[int]) -> list[Attempted]:
    """Fan out the events not yet fanned out among ``event_ids``, then attempt the due,
    pending deliveries of the subscriptions those events or ``delivery_ids`` have work
    for, in lanes, to the end (see the module docstring); what was attempted."""
    due = dispatch(event_ids=event_ids, delivery_ids=delivery_ids)
    with Lanes(app_settings()) as lanes:
        lanes.want(item.webhook_id for item in due)
        return lanes.drain()


def dispatch(*, event_ids: Sequence[int], delivery_ids: Sequence[int]) -> list[Attempted]:
    """Fan out the events not yet fanned out among ``event_ids``; the due, pending,
    unclaimed deliveries of those events or among ``delivery_ids`` (of an active
    subscription, or a ``ping``), in order: the work to hand to :class:`Lanes`."""
    fan_out(event_ids)
    if not event_ids and not delivery_ids:
        return []
    now = timezone.now()
    rows = (
        Delivery.objects.filter(Q(event_id__in=event_ids) | Q(pk__in=delivery_ids))
        .filter(state=PENDING, next_attempt_at__lte=now)
        .filter(Q(webhook__active=True) | Q(event__type=PING))
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .order_by("pk")
        .values_list("pk", "event_id", "webhook_id")
    )
    return [Attempted(pk, event_id, webhook_id) for pk, event_id, webhook_id in rows]


@dataclass
class _Chunk:
    webhook_id: int
    claimed: list[Delivery]
    token: str


class Lanes:
    """A worker's lanes (see the module docstring): at most ``conf.webhook_concurrency``
    subscriptions sending at once, each in a thread that only sends. Everything that
    touches the database — claiming, recording — runs in the thread calling
    :meth:`pump`, :meth:`drain` (the worker's own)."""

    def __init__(self, conf: AppSettings) -> None:
        self.size = conf.webhook_concurrency
        self.threads = ThreadPoolExecutor(self.size, thread_name_prefix="webhook")
        self.running: dict[Future[list[tuple[datetime, Outcome]]], _Chunk] = {}
        self.wanted: dict[int, None] = {}  # subscriptions with work, in their order
        self.stopping = threading.Event()

    def __enter__(self) -> Lanes:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Wait for the chunks in flight (each ends by its deadlines), record nothing more."""
        self.threads.shutdown(wait=True)

    def want(self, webhook_ids: Iterable[int]) -> None:
        """Subscriptions with due work: each gets a lane when one is free."""
        for webhook_id in webhook_ids:
            self.wanted.setdefault(webhook_id)

    def idle(self) -> bool:
        return not self.running and not self.wanted

    def finish(self) -> list[Attempted]:
        """A graceful stop: each lane ends after the attempt it is making (each ends by
        its deadline), what was attempted is recorded, the rest of its chunk released
        for the next worker; nothing new is claimed."""
        self.stopping.set()
        self.wanted.clear()
        attempted: list[Attempted] = []
        while self.running:
            self.wait(60.0)
            attempted += self.pump()
        return attempted

    def pump(self) -> list[Attempted]:
        """Record the chunks that are done (their subscriptions wanted again, for what is
        left), then give free lanes to the subscriptions waiting; what was recorded."""
        attempted: list[Attempted] = []
        conf = app_settings()
        for future in [future for future in self.running if future.done()]:
            chunk = self.running.pop(future)
            attempted += self._record(chunk, future, conf)
            if not self.stopping.is_set():
                self.wanted.setdefault(chunk.webhook_id)
        busy = {chunk.webhook_id for chunk in self.running.values()}
        via = sender(conf)
        for webhook_id in list(self.wanted):
            if len(self.running) >= self.size:
                break
            if webhook_id in busy:
                continue
            del self.wanted[webhook_id]
            token = secrets.token_hex(8)
            claimed = _claim(webhook_id, token, conf)
            if claimed:
                future = self.threads.submit(_send_in_turn, claimed, conf, via, self.stopping)
                self.running[future] = _Chunk(webhook_id, claimed, token)
        return attempted

    def wait(self, timeout: float) -> None:
        """Until a lane is done, or ``timeout`` seconds."""
        if self.running:
            wait(list(self.running), timeout=timeout, return_when=FIRST_COMPLETED)

    def drain(self) -> list[Attempted]:
        """Send and record until no subscription has work left (a graceful stop, RQ's
        task, the tests' rounds); what was recorded."""
        attempted = self.pump()
        while not self.idle():
            self.wait(60.0)
            attempted += self.pump()
        return attempted

    def _record(
        self,
        chunk: _Chunk,
        future: Future[list[tuple[datetime, Outcome]]],
        conf: AppSettings,
    ) -> list[Attempted]:
        try:
            outcomes = future.result()
            done, left = chunk.claimed[: len(outcomes)], chunk.claimed[len(outcomes) :]
            _record_all(done, outcomes, chunk.token, conf)
            if left:  # a stop came first: free for the next worker at once
                Delivery.objects.filter(pk__in=[d.pk for d in left], locked_by=chunk.token).update(
                    locked_until=None, locked_by=""
                )
        except Exception:  # the leases run out; the sweep sends them again
            logger.exception("recording webhook attempts failed; the sweep sends them again")
            return []
        return [Attempted(d.pk, d.event_id, d.webhook_id) for d in done]


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


def _claim(webhook_id: int, token: str, conf: AppSettings) -> list[Delivery]:
    """Claim up to :data:`CHUNK` of the subscription's due deliveries, oldest first, read
    with their event and subscription; the lease covers their attempts one after
    another."""
    now = timezone.now()
    unclaimed = Q(locked_until__isnull=True) | Q(locked_until__lt=now)
    candidates = list(
        Delivery.objects.select_related("event", "webhook")
        .filter(webhook_id=webhook_id, state=PENDING, next_attempt_at__lte=now)
        .filter(Q(webhook__active=True) | Q(event__type=PING))
        .filter(unclaimed)
        .order_by("pk")[:CHUNK]
    )
    if not candidates:
        return []
    ids = [delivery.pk for delivery in candidates]
    lease = now + timedelta(seconds=lease_seconds(conf) * len(candidates))
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


def _send_in_turn(
    claimed: list[Delivery], conf: AppSettings, via: Sender, stopping: threading.Event
) -> list[tuple[datetime, Outcome]]:
    """A lane's work: the chunk's deliveries one after another (no database), until the
    end or a stop."""
    outcomes: list[tuple[datetime, Outcome]] = []
    for delivery in claimed:
        if stopping.is_set():
            break
        outcomes.append(_send(delivery, conf, via))
    return outcomes


def retry_delay(failures: int, window: float) -> timedelta:
    """How long to wait after the ``failures``-th failed attempt in a row (1 to 12)."""
    return timedelta(seconds=window * 2 ** (failures - 1) / (2**RETRIES - 1))


def lease_seconds(conf: AppSettings) -> float:
    """How long a claim lasts per attempt: well beyond the most an attempt can take (its
    one deadline, ``SYSPROMPT_WEBHOOK_TIMEOUT``, over every phase), with room for
    recording it."""
    return 2 * conf.webhook_timeout + 5


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

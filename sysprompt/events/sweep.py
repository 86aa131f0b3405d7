"""The recovery sweep: a pending delivery (or an event not yet fanned out) whose task
was lost is enqueued again.

A task can be lost: the worker killed while it ran one (the database backend leaves
that task "running" for ever), RQ down when a change committed, Redis restarted
without its data. The deliveries themselves are rows in the database, so nothing is
lost with the task: the worker (``manage.py events_worker``) runs :func:`sweep` when
it starts and then every ``--sweep-interval`` seconds, and re-enqueues each event that
is older than ``grace`` seconds and still not fanned out into deliveries (RQ: with the
database backend the worker takes those from the outbox itself), and each pending
delivery of an active subscription (or a ``ping``) that is due since more than
``grace`` seconds and not claimed — or whose claim ran out. A healthy queue runs a
task within moments of its due time, so such a delivery has no live task; should one
still be waiting in a long backlog, the duplicate finds the delivery claimed or done
and does nothing. Each recovered delivery is due again from now, so a sweep recovers
it at most once per grace period.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from sysprompt.events import queue
from sysprompt.events.catalog import PENDING, PING
from sysprompt.events.models import Delivery, Event

SWEEP_BATCH = 500
"""The most deliveries one sweep enqueues again; the next sweep takes the rest."""
TASK_BATCH = 50
"""Deliveries per recovery task."""


def sweep(*, grace: float, now: datetime | None = None) -> int:
    """Enqueue again the deliveries that lost their task; how many."""
    now = timezone.now() if now is None else now
    lost = (
        Delivery.objects.filter(state=PENDING, next_attempt_at__lte=now - timedelta(seconds=grace))
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .filter(Q(webhook__active=True) | Q(event__type=PING))
        .order_by("pk")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    ids = list(lost)
    unsent = (
        []
        if queue.outbox_polled()
        else list(
            Event.objects.filter(fanned_out=False, created_at__lte=now - timedelta(seconds=grace))
            .order_by("pk")
            .values_list("pk", flat=True)[:SWEEP_BATCH]
        )
    )
    with transaction.atomic():
        Delivery.objects.filter(pk__in=ids, state=PENDING).update(next_attempt_at=now)
        for start in range(0, len(ids), TASK_BATCH):
            queue.send_soon(delivery_ids=ids[start : start + TASK_BATCH])
        for event_id in unsent:
            queue.send_soon(event_id=event_id)
    return len(ids) + len(unsent)

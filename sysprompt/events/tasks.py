"""The events' tasks, as Django's Tasks API runs them (a worker of the configured
backend: ``manage.py events_worker``). Each is a thin entry into ``delivery``.

A task is bound to the events' queue (``SYSPROMPT_TASKS_QUEUE``) when this module is
imported, as the backend checks the queue then; ``queue.send_soon`` names it again on
every enqueue, so a changed setting takes effect at once.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django_tasks import task

from sysprompt.conf import DEFAULT_TASKS_QUEUE, app_settings


def _queue() -> str:
    try:
        return app_settings().tasks_queue
    except ImproperlyConfigured:  # reported by the system check (sysprompt.E001)
        return DEFAULT_TASKS_QUEUE


@task(queue_name=_queue())
def deliveries_send(event_id: int | None = None, delivery_ids: list[int] | None = None) -> int:
    """Attempt the due deliveries of event ``event_id`` (its fan-out) or those listed
    (a retry, a resume, a recovery); how many were attempted. Safe to run twice: each
    delivery is claimed before it is attempted."""
    from sysprompt.events.delivery import deliveries_attempt  # the task module loads first

    return deliveries_attempt(event_id=event_id, delivery_ids=delivery_ids or [])

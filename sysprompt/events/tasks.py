"""The events' tasks, as Django's Tasks API runs them (a worker of the configured
backend: ``manage.py events_worker``). Each is a thin entry into ``delivery``."""

from __future__ import annotations

from django_tasks import task


@task()
def deliveries_send(event_id: int | None = None, delivery_ids: list[int] | None = None) -> int:
    """Attempt the due deliveries of event ``event_id`` (its fan-out) or those listed
    (a retry, a resume, a recovery); how many were attempted. Safe to run twice: each
    delivery is claimed before it is attempted."""
    from sysprompt.events.delivery import deliveries_attempt  # the task module loads first

    return deliveries_attempt(event_id=event_id, delivery_ids=delivery_ids or [])

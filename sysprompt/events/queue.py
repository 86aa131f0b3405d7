"""Putting a delivery task on the queue, never losing one.

A new event (:func:`event_enqueue`) with the database backend needs no task: its row in
the outbox (``Event``), written in the change's transaction, is what the worker takes
(``worker``), so a save pays one ``INSERT`` for its webhooks. With RQ its task is
enqueued on commit, as below.

For a task (:func:`send_soon`: retries, resumes, recoveries): with the database
backend (``django-tasks-db``) the queue is a table of the same
database, so the task is enqueued inside the caller's transaction: it exists exactly
when the change it reports does. RQ is not transactional: the outbox rows (``Event``,
``Delivery``) are written in the transaction and the job is enqueued on commit; should
the process die in between, or Redis refuse, the deliveries stay pending in the
database and the worker's sweep (``sweep``) enqueues them again.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial

from django.db import DEFAULT_DB_ALIAS, router, transaction
from django_tasks_db import DatabaseBackend

from sysprompt.conf import app_settings
from sysprompt.events.tasks import deliveries_send

logger = logging.getLogger("sysprompt.events")


def outbox_polled() -> bool:
    """Whether the worker takes new events from the outbox itself (the database backend)."""
    return isinstance(deliveries_send.get_backend(), DatabaseBackend)


def event_enqueue(*, event_id: int) -> None:
    """See that a new event, written in the current transaction, is fanned out and sent."""
    if not outbox_polled():
        send_soon(event_id=event_id)


def send_soon(
    *,
    event_id: int | None = None,
    delivery_ids: list[int] | None = None,
    run_after: datetime | None = None,
) -> None:
    """Enqueue :func:`~sysprompt.events.tasks.deliveries_send` (see the module docstring)."""
    queue_name = app_settings().tasks_queue
    task = deliveries_send
    if run_after is not None or queue_name != task.queue_name:
        task = task.using(queue_name=queue_name, run_after=run_after)
    backend = task.get_backend()
    if isinstance(backend, DatabaseBackend) and _same_database():
        task.enqueue(event_id=event_id, delivery_ids=delivery_ids)
        return
    enqueue = partial(_enqueue_after_commit, task, event_id, delivery_ids)
    transaction.on_commit(enqueue, robust=True)


def _same_database() -> bool:
    from django_tasks_db.models import DBTaskResult

    return router.db_for_write(DBTaskResult) == DEFAULT_DB_ALIAS


def _enqueue_after_commit(
    task: object, event_id: int | None, delivery_ids: list[int] | None
) -> None:
    try:
        task.enqueue(event_id=event_id, delivery_ids=delivery_ids)  # type: ignore[attr-defined]
    except Exception:
        # The deliveries are pending in the database: the worker's sweep sends them.
        logger.exception(
            "enqueueing webhook deliveries failed (event %s, deliveries %s); the sweep "
            "will enqueue them again",
            event_id,
            delivery_ids,
        )

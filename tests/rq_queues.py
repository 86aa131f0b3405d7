"""RQ queues on the tests' Redis, opened and emptied by the test process itself.

Each ``django_rq.get_queue`` makes a Redis client of its own, and redis-py's clients are
reference cycles: dropped unclosed, a client's socket waits for the garbage collector,
which may finalise the socket before the client closes it (an unclosed-socket warning).
So the tests close every client they open."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import django_rq
from rq.queue import Queue
from rq.registry import ScheduledJobRegistry


@contextmanager
def opened(name: str) -> Iterator[Queue]:
    """RQ queue ``name`` (as configured in ``RQ_QUEUES``), its connection closed after."""
    queue = django_rq.get_queue(name)
    try:
        yield queue
    finally:
        queue.connection.close()


def emptied(name: str) -> None:
    """Remove every job of queue ``name``, the scheduled ones too."""
    with opened(name) as queue:
        queue.empty()  # type: ignore[no-untyped-call]
        scheduled = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
        for job_id in scheduled.get_job_ids():
            scheduled.remove(job_id, delete_job=True)

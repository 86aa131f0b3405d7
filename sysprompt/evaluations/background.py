"""Runs in the background, through Django's Tasks API on the evaluations' own queue
(``SYSPROMPT_EVAL_TASKS_QUEUE``, default ``evaluations``), apart from the webhooks'.

Starting a run enqueues one task (:func:`run_enqueue`, :func:`~sysprompt.evaluations.
tasks.run_work`). A task works on its run for a slice of at most :data:`SLICE_SECONDS`
(:func:`~sysprompt.evaluations.execution.run_execute`, which claims cases to prepare and
calls to make, each with a lease) and, as it starts, enqueues a follower while the run has
work no one holds: a free worker takes the follower and joins the run, so several worker
processes — or machines, with RQ — share one run, each item done once; and while a task
works, another waits in the queue, so a worker killed mid-run loses only its calls in
flight (their leases run out; the follower takes them up, without calling the finished
ones again). A task that leaves a run unfinished without having enqueued a follower
enqueues one to look again (at once after its slice or a stop; else when the first
lease others hold runs out, in case they died). A task of a finished, failed or
cancelled run does nothing. ``evaluations_worker`` enqueues a task for each unfinished
run as it starts (:func:`runs_recover`): a task lost with its queue (RQ's Redis emptied,
an enqueue Redis refused) is made good there.

The enqueue follows the events' rule (``sysprompt.events.queue``): with the database
backend in the caller's transaction (the task exists exactly when the run does), with
RQ when the transaction commits.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import partial
from types import FrameType
from typing import Any

from django.db import DEFAULT_DB_ALIAS, router, transaction
from django.db.models import Min, Q
from django.utils import timezone
from django_tasks_db import DatabaseBackend

from sysprompt.conf import app_settings
from sysprompt.evaluations.execution import run_execute, worker_name
from sysprompt.evaluations.models import Case, Run, RunCall
from sysprompt.evaluations.tasks import run_work

logger = logging.getLogger("sysprompt.evaluations")

SLICE_SECONDS = 120.0
"""The longest a task works on its run before it hands the rest to the next task (so a
backend's job timeout never cuts a long run, and runs queued behind it get a turn)."""
LOOK_AGAIN_SECONDS = 1.0
"""The soonest a task that found nothing to claim looks at its run again."""

AFTER_ERROR = timedelta(seconds=5)
"""How soon a run whose task failed unexpectedly is looked at again."""

_UNFINISHED = ("queued", "running")


def run_enqueue(*, run_id: int, run_after: datetime | None = None) -> None:
    """Enqueue a task for run ``run_id`` (see the module docstring)."""
    queue_name = app_settings().eval_tasks_queue
    task = run_work
    if run_after is not None or queue_name != task.queue_name:
        task = task.using(queue_name=queue_name, run_after=run_after)
    if isinstance(task.get_backend(), DatabaseBackend) and _same_database():
        task.enqueue(run_id=run_id)
        return
    transaction.on_commit(partial(_enqueue_after_commit, task, run_id), robust=True)


def _same_database() -> bool:
    from django_tasks_db.models import DBTaskResult

    return router.db_for_write(DBTaskResult) == DEFAULT_DB_ALIAS


def _enqueue_after_commit(task: Any, run_id: int) -> None:
    try:
        task.enqueue(run_id=run_id)
    except Exception:
        logger.exception(
            "enqueueing evaluation %s failed; a worker enqueues it again as it starts", run_id
        )


def runs_recover() -> int:
    """Enqueue a task for each run not yet ended; how many."""
    ids = list(Run.objects.filter(status__in=_UNFINISHED).values_list("pk", flat=True))
    for run_id in ids:
        run_enqueue(run_id=run_id)
    return len(ids)


def run_slice(run_id: int, *, seconds: float = SLICE_SECONDS) -> str:
    """One task's work on run ``run_id`` (see the module docstring); the run's status as
    it leaves it."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None or run.status not in _UNFINISHED:
        return "gone" if run is None else run.status
    followed = _open_work(run)
    if followed:
        run_enqueue(run_id=run_id)
    stop = threading.Event()
    if seconds <= 0:
        stop.set()
    timer = threading.Timer(seconds, stop.set)
    timer.daemon = True
    timer.start()
    try:
        with _stopped_by_sigterm(stop):
            status = run_execute(run_id, worker=worker_name(), stop=stop)
    except Exception:
        # The database may be away for a moment: the run is looked at again (or, should
        # this enqueue fail too, when a worker starts), and the task fails saying why.
        if not followed:
            with contextlib.suppress(Exception):
                run_enqueue(run_id=run_id, run_after=timezone.now() + AFTER_ERROR)
        raise
    finally:
        timer.cancel()
    if status == "running" and not followed:
        run_enqueue(run_id=run_id, run_after=None if stop.is_set() else _look_again(run_id))
    return status


def _open_work(run: Run) -> bool:
    """Whether the run has work no one holds: cases to prepare, or calls unclaimed or
    whose lease ran out."""
    if run.status == "queued" or run.suite_id is None:
        return True  # (a run whose suite was deleted fails as its task starts)
    last = (
        Case.objects.filter(suite_id=run.suite_id)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    if last is not None and run.prepared < last:
        return True
    free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=timezone.now())
    return RunCall.objects.filter(free, run_id=run.pk, done=False).exists()


def _look_again(run_id: int) -> datetime:
    """When the first lease another worker holds on the run runs out (it may have died)."""
    soonest = timezone.now() + timedelta(seconds=LOOK_AGAIN_SECONDS)
    held: datetime | None = RunCall.objects.filter(
        run_id=run_id, done=False, claimed_until__isnull=False
    ).aggregate(until=Min("claimed_until"))["until"]
    return max(held, soonest) if held is not None else soonest


@contextlib.contextmanager
def _stopped_by_sigterm(stop: threading.Event) -> Iterator[None]:
    """While the task runs in a worker's main thread (django-tasks-db's ``db_worker``):
    SIGTERM (and SIGINT) also set ``stop``, so a worker asked to stop ends the run's
    calls in flight, saves them and leaves the rest to the next task at once. (RQ's work
    horse is not signalled: its worker waits for the slice to end, or is killed — the
    follower takes the run up.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()
        handler = previous[signal.Signals(signum)]
        if callable(handler):
            handler(signum, frame)

    for sig in previous:
        signal.signal(sig, stopping)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

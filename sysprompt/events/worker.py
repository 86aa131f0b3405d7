"""The database backend's worker for the events: django-tasks-db's ``Worker`` loop, taking
work in batches.

Each round, in one exclusive transaction, it claims up to :data:`TASK_BATCH` ready tasks
of its queues (``RUNNING``, as ``db_worker`` marks one), and beside them takes up to
:data:`EVENT_BATCH` events still waiting in the outbox — with this backend a change
writes its event in its own transaction and no task (the outbox row is the queue
entry; ``queue.event_enqueue``). The events' tasks and those events are one batch for
``delivery.dispatch`` (the fan-out, and which subscriptions have due work); the
subscriptions go to the worker's :class:`~sysprompt.events.delivery.Lanes` and the
tasks are marked done together, each with how many of its deliveries it handed over.
Then the round records what the lanes finished and gives the free lanes new work. A
round never waits for a receiver: while a slow one holds its lane, the next rounds take
new events and send them in the other lanes. Any other task runs alone, as
``db_worker`` runs it. A batch that fails marks its tasks failed; what it left undone
is pending in the database and the sweep sends it again — as when a worker dies in the
middle of a batch. A graceful stop (SIGTERM) takes no new work: each lane ends the
attempt it is making (by its deadline), the attempts are recorded, and the rest of the
lanes' claims released.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from types import FrameType
from typing import Any

from django.db import close_old_connections
from django.db.utils import OperationalError
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from sysprompt.conf import app_settings
from sysprompt.events.delivery import Attempted, Lanes, dispatch
from sysprompt.events.models import Event

logger = logging.getLogger("sysprompt.events")

TASK_BATCH = 50
"""Ready tasks one round claims at most."""
EVENT_BATCH = 50
"""Outbox events one round takes at most."""
TASK_PATH = "sysprompt.events.tasks.deliveries_send"


class BatchWorker(Worker):
    """``db_worker``'s loop (signals, graceful stop, ``--batch``, ``--max-tasks``) with
    :meth:`round` in place of one task at a time."""

    _lanes: Lanes | None = None
    _next_look = 0.0
    """When the queue is looked at again after a look that found nothing (``interval``
    later), while rounds go on recording what the lanes finish."""

    @property
    def lanes(self) -> Lanes:
        """The worker's lanes, made on first use (with the concurrency then set)."""
        if self._lanes is None:
            self._lanes = Lanes(app_settings())
        return self._lanes

    def run(self) -> None:
        logger.info(
            "Starting events worker worker_id=%s queues=%s",
            self.worker_id,
            ",".join(self.queue_names),
        )
        self._loop()
        self.running_task = True  # a second signal still forces the exit
        if self.running:  # --batch, --max-tasks: the work taken is done to its end
            self.lanes.drain()
        else:  # a graceful stop: the attempts in flight end and are recorded
            self.lanes.finish()
        self.lanes.close()

    def _loop(self) -> None:
        while self.running:
            close_old_connections()
            done = self.round()
            if self.batch and done == 0 and self.lanes.idle():
                return
            if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                return
            if self.running and done == 0:
                if self.lanes.running:
                    self.lanes.wait(self.interval)
                else:
                    time.sleep(self.interval)

    def shutdown(self, signum: int, frame: FrameType | None) -> None:
        """``db_worker``'s: a first signal lets the task in progress finish, or exits at
        once when there is none — and the lanes' attempts in flight count as one, so
        they are recorded before the worker exits."""
        if self.running and self._lanes is not None and self._lanes.running:
            self.running_task = True
        super().shutdown(signum, frame)

    def round(self) -> int:
        """Claim one batch and hand it to the lanes; record what the lanes finished and
        give them new work. How many tasks, events and finished attempts it handled (0:
        nothing to do). A first SIGTERM lets it finish (``running_task``): nothing
        claimed is left half-done by a graceful stop."""
        self.running_task = True
        try:
            taken = 0
            if time.monotonic() >= self._next_look:
                taken = self._round()
                if not taken:
                    self._next_look = time.monotonic() + self.interval
            return taken + len(self._pump())
        finally:
            self.running_task = False

    def _pump(self) -> list[Attempted]:
        try:
            return self.lanes.pump()
        except Exception:
            logger.exception("handing webhook deliveries to the lanes failed; trying again")
            time.sleep(self.interval)  # the database may be away for a moment
            return []

    def _round(self) -> int:
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        limit = TASK_BATCH
        if self.max_tasks is not None:
            limit = max(1, min(limit, self.max_tasks - self._run_tasks))
        try:
            with exclusive_transaction(tasks.db):
                claimed = list(tasks.select_for_update(skip_locked=True)[:limit])
                now = timezone.now()
                for task in claimed:
                    task.status = TaskResultStatus.RUNNING
                    task.started_at = now
                    task.worker_ids = [*task.worker_ids, self.worker_id]
                if claimed:
                    DBTaskResult.objects.bulk_update(
                        claimed, ["status", "started_at", "worker_ids"]
                    )
        except OperationalError as error:
            if not is_locked_database_exception(error):
                raise
            return 0  # SQLite busy: try again
        events = list(
            Event.objects.filter(fanned_out=False)
            .order_by("pk")
            .values_list("pk", flat=True)[:EVENT_BATCH]
        )
        ours = [task for task in claimed if task.task_path == TASK_PATH]
        for task in claimed:
            if task.task_path != TASK_PATH:
                self.run_task(task)
                self.running_task = True  # run_task clears it; the round goes on
        if ours or events:
            self._run_batch(ours, events)
        return len(claimed) + len(events)

    def _run_batch(self, tasks: list[DBTaskResult[Any, Any]], events: list[int]) -> None:
        kwargs = [task.args_kwargs["kwargs"] for task in tasks]
        event_ids = sorted(
            {*events, *(k["event_id"] for k in kwargs if k.get("event_id") is not None)}
        )
        delivery_ids = sorted({i for k in kwargs for i in (k.get("delivery_ids") or [])})
        self._run_tasks += len(tasks)
        try:
            due = dispatch(event_ids=event_ids, delivery_ids=delivery_ids)
        except Exception as error:
            logger.exception("a batch of webhook deliveries failed; the sweep sends it again")
            for task in tasks:
                task.set_failed(error)
            time.sleep(self.interval)  # the database may be away for a moment
            return
        self.lanes.want(item.webhook_id for item in due)
        _done(tasks, due)
        logger.info(
            "batch: %d tasks, %d events from the outbox, %d deliveries to send",
            len(tasks),
            len(events),
            len(due),
        )


def _done(tasks: list[DBTaskResult[Any, Any]], attempted: list[Attempted]) -> None:
    """Mark the batch's tasks successful, each with how many of its deliveries it handed
    to the lanes (as the task returns it)."""
    if not tasks:
        return
    by_event = Counter(item.event_id for item in attempted)
    deliveries = {item.delivery_id for item in attempted}
    now = timezone.now()
    for task in tasks:
        k = task.args_kwargs["kwargs"]
        count = by_event[k["event_id"]] if k.get("event_id") is not None else 0
        count += sum(1 for i in k.get("delivery_ids") or [] if i in deliveries)
        task.status = TaskResultStatus.SUCCESSFUL
        task.finished_at = now
        task.return_value = count
        task.exception_class_path = ""
        task.traceback = ""
    DBTaskResult.objects.bulk_update(
        tasks, ["status", "finished_at", "return_value", "exception_class_path", "traceback"]
    )

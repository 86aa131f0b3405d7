"""The evaluations' worker loop: the ``Run`` rows are its queue.

Each round takes the oldest run that is queued or running (a cancelled one too, to
mark it so) and works on it (:func:`~sysprompt.evaluations.execution.run_execute`)
until it is finished or nothing is left for this worker to claim; runs it could do
nothing for are passed over until a round has looked at every run, then it sleeps
``interval``. Any number of workers, on any machines that share the database, share
the runs: each call is claimed by one. A stop (SIGTERM) lets the calls in flight
finish and be saved; claimed calls that were not started are taken up again when
their lease runs out.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections

from sysprompt.evaluations.execution import run_execute, worker_name
from sysprompt.evaluations.models import Run

logger = logging.getLogger("sysprompt.evaluations")


def work(*, stop: threading.Event, interval: float = 0.5, once: bool = False) -> int:
    """Work on runs until ``stop`` is set (``once``: until a round finds nothing to do);
    how many runs this worker saw finish."""
    worker = worker_name()
    finished = 0
    passed: set[int] = set()
    while not stop.is_set():
        close_old_connections()
        run_id = (
            Run.objects.filter(status__in=("queued", "running"))
            .exclude(pk__in=passed)
            .order_by("pk")
            .values_list("pk", flat=True)
            .first()
        )
        if run_id is None:
            if once:
                return finished
            passed.clear()
            stop.wait(interval)
            continue
        logger.info("evaluation %s: worker %s takes it", run_id, worker)
        status = run_execute(run_id, worker=worker, stop=stop)
        logger.info("evaluation %s: %s", run_id, status)
        if status == "finished":
            finished += 1
        if status == "running":
            passed.add(run_id)
    return finished

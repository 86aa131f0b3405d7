"""``manage.py evaluations_worker``: the worker that runs evaluations.

It runs the configured task backend's worker on the evaluations' own queue
(``SYSPROMPT_EVAL_TASKS_QUEUE``, default ``evaluations``) as child processes —
django-tasks-db's ``db_worker`` by default, or django-rq's ``rqworker`` with its
scheduler and django-tasks-rq's job class when ``SYSPROMPT_TASKS_BACKEND=rq`` — each
taking the runs' tasks (``sysprompt.evaluations.background``). As it starts it enqueues a
task for every run not yet ended (a task lost with a queue is made good so).
``--processes N`` runs N side by side; run as many workers as you like, on any machines
that share the database (and, with RQ, the Redis). SIGTERM or SIGINT stop the children:
with the database backend a run's calls in flight are finished and saved, and the rest
is left to the next task.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from sysprompt.conf import app_settings
from sysprompt.evaluations.background import runs_recover
from sysprompt.events.management.commands.events_worker import backend_name
from sysprompt.events.supervision import manage_command, supervise


class Command(BaseCommand):
    help = "Run evaluations: the task backend's worker on the evaluations' own queue."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--interval",
            type=float,
            default=0.5,
            help="Database backend: seconds between looks at an empty queue (default 0.5).",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=1,
            choices=range(1, 17),
            metavar="N",
            help="Worker processes side by side (default 1), each working on one run at a "
            "time; several share a run.",
        )
        parser.add_argument(
            "--once", action="store_true", help="Stop when no run's task is left to do."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        processes = options["processes"]
        queue = app_settings().eval_tasks_queue
        recovered = runs_recover()
        self.stdout.write(
            f"evaluations worker: {backend_name()} backend, queue {queue!r}, {processes} "
            f"{'process' if processes == 1 else 'processes'}, {recovered} unfinished runs "
            "enqueued"
        )
        self.stdout.flush()
        command = worker_command(interval=options["interval"], once=options["once"])
        supervise([command] * processes, exits=options["once"])


def worker_command(*, interval: float, once: bool = False) -> list[str]:
    """The backend's worker command for the evaluations' queue."""
    queue = app_settings().eval_tasks_queue
    if backend_name() == "rq":
        command = [
            *manage_command(),
            "rqworker",
            queue,
            "--with-scheduler",
            "--job-class",
            "django_tasks_rq.Job",
        ]
        return [*command, "--burst"] if once else command
    command = [
        *manage_command(),
        "db_worker",
        "--queue-name",
        queue,
        "--interval",
        f"{interval:g}",
        "--no-reload",
        "--no-startup-delay",
    ]
    return [*command, "--batch"] if once else command

"""``manage.py events_worker``: the worker that delivers webhooks.

It runs the configured task backend's worker as a child process — django-tasks-db's
``db_worker`` taking the events' work in batches (``events_db_worker``, the default),
or django-rq's ``rqworker`` with its scheduler (for retries
at their time) and django-tasks-rq's job class when ``SYSPROMPT_TASKS_BACKEND=rq`` — on
the events' queue (``SYSPROMPT_TASKS_QUEUE``), and beside it the recovery sweep
(``sysprompt.events.sweep``): once at start, then every ``--sweep-interval`` seconds.
``--processes N`` runs N such workers side by side. SIGTERM or SIGINT stop the
children (each finishes the task it runs) and then the command; when a child exits by
itself, the others are stopped and the command fails, for its supervisor to restart.
"""

from __future__ import annotations

import logging
from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from sysprompt.conf import app_settings
from sysprompt.events.supervision import manage_command, supervise
from sysprompt.events.sweep import sweep

logger = logging.getLogger("sysprompt.events")


class Command(BaseCommand):
    help = "Deliver webhooks: the task backend's worker, and the recovery sweep beside it."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--sweep-interval",
            type=float,
            default=30.0,
            help="Seconds between recovery sweeps (default 30).",
        )
        parser.add_argument(
            "--sweep-grace",
            type=float,
            default=300.0,
            help="Seconds a delivery may be overdue before a sweep enqueues it again "
            "(default 300).",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=1,
            choices=range(1, 17),
            metavar="N",
            help="Worker processes side by side (default 1): each sends to up to "
            "SYSPROMPT_WEBHOOK_CONCURRENCY (8) subscriptions at a time.",
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=0.5,
            help="Database backend: seconds between looks at an empty queue (default 0.5).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        command = worker_command(interval=options["interval"])
        processes = options["processes"]
        self.stdout.write(
            f"events worker: {backend_name()} backend, queue {app_settings().tasks_queue!r}, "
            f"{processes} {'process' if processes == 1 else 'processes'}, recovery sweep "
            f"every {options['sweep_interval']:g} s"
        )
        self.stdout.flush()
        self._sweep(options["sweep_grace"])
        supervise(
            [command] * processes,
            every=options["sweep_interval"],
            tick=lambda: self._sweep(options["sweep_grace"]),
        )

    def _sweep(self, grace: float) -> None:
        close_old_connections()
        try:
            recovered = sweep(grace=grace)
        except Exception:  # the database may be away for a moment: sweep again later
            logger.exception("sweep failed")
            return
        if recovered:
            logger.info("sweep: %d deliveries enqueued again", recovered)


def backend_name() -> str:
    """``rq`` or ``database``: the task backend Django's ``TASKS`` names."""
    backend = str(settings.TASKS["default"]["BACKEND"])
    return "rq" if backend.startswith("django_tasks_rq.") else "database"


def worker_command(*, interval: float) -> list[str]:
    """The backend's worker command for the events' queue."""
    manage = manage_command()
    queue = app_settings().tasks_queue
    if backend_name() == "rq":
        return [
            *manage,
            "rqworker",
            queue,
            "--with-scheduler",
            "--job-class",
            "django_tasks_rq.Job",
        ]
    return [
        *manage,
        "events_db_worker",
        "--queue-name",
        queue,
        "--interval",
        f"{interval:g}",
        "--no-reload",
        "--no-startup-delay",
    ]

"""``manage.py events_db_worker``: django-tasks-db's ``db_worker`` (the same options) with
the events' batches (``sysprompt.events.worker``). ``manage.py events_worker`` starts it
for the database backend; it is not meant to be run by hand."""

from __future__ import annotations

from typing import Any

from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

from sysprompt.events.worker import BatchWorker


class Command(DatabaseWorkerCommand):
    help = "Run the database backend's worker, taking the events' work in batches."

    def handle(self, *args: Any, **options: Any) -> None:
        self.configure_logging(options["verbosity"])
        queue_names = options["queue_name"].split(",")
        excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
        worker = BatchWorker(
            queue_names=queue_names,
            interval=options["interval"],
            batch=options["batch"],
            backend_name=options["backend_name"],
            startup_delay=False,
            max_tasks=options["max_tasks"],
            worker_id=options["worker_id"],
            excluded_queue_names=excluded,
        )
        worker.configure_signals()
        worker.run()

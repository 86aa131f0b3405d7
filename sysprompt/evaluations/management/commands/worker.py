"""``manage.py worker``: all background work — webhooks and evaluations — in one command.

It runs ``events_worker`` (webhook deliveries, on the events' queue) and
``evaluations_worker`` (evaluation runs, on their own queue) as two child processes, so
a long evaluation never delays a webhook. SIGTERM or SIGINT stop both (each finishes
what it is doing); when one exits by itself, the other is stopped and the command fails,
for its supervisor to restart (``sysprompt.events.supervision``).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from sysprompt.events.supervision import manage_command, supervise


class Command(BaseCommand):
    help = "Run all background work: webhook deliveries and evaluations, side by side."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("worker: webhooks and evaluations, each in a process of its own")
        self.stdout.flush()
        supervise([[*manage_command(), name] for name in ("events_worker", "evaluations_worker")])

"""``manage.py evaluations_worker``: the worker that runs evaluations (``worker``).

It works on the runs in the database (``sysprompt.evaluations.worker``) until SIGTERM
or SIGINT, which let the model calls in flight finish and be saved first. Run as many
as you like, on any machines that share the database.
"""

from __future__ import annotations

import signal
import threading
from argparse import ArgumentParser
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand

from sysprompt.evaluations.worker import work
from sysprompt_core.variables import default_registry


class Command(BaseCommand):
    help = "Run evaluations: replay suites through their models, as runs are started."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--interval",
            type=float,
            default=0.5,
            help="Seconds between looks when no run waits (default 0.5).",
        )
        parser.add_argument(
            "--once", action="store_true", help="Stop when no run is left to work on."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()

        def stopping(signum: int, frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, stopping)
        signal.signal(signal.SIGINT, stopping)
        default_registry()  # the resolvers (and pygit2) loaded now, not in the first run
        self.stdout.write("evaluations worker: working on runs as they are started")
        self.stdout.flush()
        finished = work(stop=stop, interval=options["interval"], once=options["once"])
        self.stdout.write(f"evaluations worker: stopped ({finished} runs finished here)")

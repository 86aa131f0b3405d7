"""``manage.py worker``: all background work — webhooks and evaluations — in one command.

It runs ``events_worker`` (webhook deliveries, on the events' queue) and
``evaluations_worker`` (evaluation runs, on their own) as two child processes, so a
long evaluation never delays a webhook. SIGTERM or SIGINT stop both (each finishes what
it is doing); when one exits by itself, the other is stopped and the command fails, for
its supervisor to restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError

STOP_TIMEOUT = 60
"""Seconds a child may take to finish once asked to stop."""


class Command(BaseCommand):
    help = "Run all background work: webhook deliveries and evaluations, side by side."

    def handle(self, *args: Any, **options: Any) -> None:
        manage = (
            [sys.executable, os.path.abspath(sys.argv[0])]
            if sys.argv[0].endswith("manage.py")
            else [sys.executable, "-m", "django"]
        )
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        children = [
            subprocess.Popen([*manage, name], env=env)
            for name in ("events_worker", "evaluations_worker")
        ]
        stopping = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write("worker: webhooks and evaluations, each in a process of its own")
        self.stdout.flush()
        while all(child.poll() is None for child in children) and not stopping:
            time.sleep(0.2)
        asked = stopping
        stop(signal.SIGTERM, None)
        codes = [_wait(child) for child in children]
        if not asked:
            raise CommandError(f"a worker exited (status {max(codes)}); stopping all")


def _wait(child: subprocess.Popen[bytes]) -> int:
    try:
        return child.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()

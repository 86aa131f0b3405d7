"""Running worker processes as children of a command, as ``events_worker``,
``evaluations_worker`` and ``worker`` do: one loop for all three.

SIGTERM or SIGINT to the command stop the children (each finishes what it is doing,
within :data:`STOP_TIMEOUT` seconds, else it is killed) and then the command. When a
child exits by itself, the others are stopped and the command fails, for its supervisor
to restart — unless the children were meant to exit (``--once``) and all did so cleanly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType

from django.core.management.base import CommandError

STOP_TIMEOUT = 60
"""Seconds a child may take to finish once asked to stop."""


def manage_command() -> list[str]:
    """How this process was started as ``manage.py`` (or ``django-admin``), to start a
    child command the same way."""
    if sys.argv[0].endswith("manage.py"):
        return [sys.executable, os.path.abspath(sys.argv[0])]
    return [sys.executable, "-m", "django"]


def supervise(
    commands: Sequence[Sequence[str]],
    *,
    every: float = 0.2,
    tick: Callable[[], None] | None = None,
    exits: bool = False,
) -> None:
    """Run ``commands`` as child processes until a signal stops the command or a child
    exits (then the others are stopped). ``tick`` is called every ``every`` seconds
    meanwhile. ``exits``: the children end by themselves when their work is done, and
    the command ends with them (the last one to end) rather than failing."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    children = [subprocess.Popen(list(command), env=env) for command in commands]
    stopping = False
    signalled: set[int] = set()

    def stop(signum: int, frame: FrameType | None) -> None:
        """Ask each child to stop, once: a second SIGTERM would force a worker out of
        the task it is finishing."""
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None and child.pid not in signalled:
                signalled.add(child.pid)
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    next_tick = time.monotonic() + every
    while not stopping:
        ended = [child.poll() for child in children]
        if exits and all(code is not None for code in ended):
            break
        if not exits and any(code is not None for code in ended):
            break
        if exits and any(code not in (None, 0) for code in ended):
            break
        time.sleep(min(0.2, every))
        if tick is not None and time.monotonic() >= next_tick and not stopping:
            tick()
            next_tick = time.monotonic() + every
    asked = stopping  # False: a child exited by itself; the others stop with it
    stop(signal.SIGTERM, None)
    codes = [_wait(child) for child in children]
    if not asked and not (exits and not any(codes)):
        raise CommandError(f"a worker exited (status {max(codes)}); stopping all")


def _wait(child: subprocess.Popen[bytes]) -> int:
    try:
        return child.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()

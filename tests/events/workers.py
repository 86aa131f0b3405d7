"""A real ``manage.py events_worker`` in a subprocess, on the test's own database (the
test uses ``transactional_db``, so its writes are committed and the worker sees them),
that a test can stop gracefully, kill, and start again."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.db import connection

REPO = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The URL of the database the test runs on (its test database)."""
    config: dict[str, Any] = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{config['NAME']}"
    user = quote(config.get("USER") or "", safe="")
    password = quote(config.get("PASSWORD") or "", safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = f"{config.get('HOST') or '127.0.0.1'}:{config.get('PORT') or 5432}"
    return f"postgres://{credentials}{host}/{config['NAME']}"


def environment(sysprompt: dict[str, Any], **extra: str) -> dict[str, str]:
    """The worker's environment: the test database and the SYSPROMPT settings given."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "tests-only-not-a-secret",
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
        "LOG_LEVEL": "INFO",
        **extra,
    }
    names: dict[str, Callable[[Any], str]] = {
        "WEBHOOK_ALLOW_HTTP_HOSTS": ",".join,
        "WEBHOOK_ALLOW_PRIVATE": ",".join,
        "WEBHOOK_TIMEOUT": str,
        "WEBHOOK_CONCURRENCY": str,
        "WEBHOOK_CONNECT_TIMEOUT": str,
        "WEBHOOK_RETRY_WINDOW": str,
        "TASKS_QUEUE": str,
    }
    for key, value in sysprompt.items():
        env[f"SYSPROMPT_{key}"] = names[key](value)
    return env


class WorkerProcess:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log_path = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "manage.py",
                    "events_worker",
                    "--sweep-interval",
                    "0.3",
                    "--sweep-grace",
                    "0.3",
                    "--interval",
                    "0.05",
                ],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a kill takes the child too
            )

    def stop(self) -> int:
        """SIGTERM: the task running finishes, then both processes exit."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        self.process = None
        return code

    def kill(self) -> None:
        """SIGKILL to the worker and every process under it (RQ's work horse leaves the
        process group, so the tree is walked): no task finishes."""
        assert self.process is not None
        for pid in [self.process.pid, *descendants(self.process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def descendants(pid: int) -> list[int]:
    """The processes under ``pid``, read from /proc (children before grandchildren)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid …: comm may hold spaces and parentheses
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found.extend(children)
        frontier = children
    return found


LOADED = 120.0
"""Seconds to wait for what a worker process does: it starts Django (and RQ) first, which
takes most of a minute on a loaded 2-core machine; a quiet one is done in seconds. A
wait ends as soon as its event comes, so only a failure waits this long."""


def wait_until(condition: Any, timeout: float = LOADED, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)

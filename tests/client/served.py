"""A real sysprompt server in a subprocess (``manage.py runserver --noreload``) on a
temporary SQLite file, that a test can stop and start again on the same port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class RealServer:
    def __init__(self, folder: Path) -> None:
        self.root = folder / "root"
        self.cwd = str(self.root / "project")
        os.makedirs(self.cwd)
        Path(self.cwd, "AGENTS.md").write_text("Real server.\n")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
            "SECRET_KEY": "client-tests-only",
            "DEBUG": "false",
            "SYSPROMPT_ALLOWED_ROOTS": str(self.root),
            "PYTHONUNBUFFERED": "1",
        }
        self.log = open(folder / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.process: subprocess.Popen[bytes] | None = None
        self.manage("migrate", "--noinput")
        self.token = self.manage("create_agent_host", "restart-host").strip().splitlines()[-1]

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "runserver",
                "--noreload",
                "--skip-checks",
                f"127.0.0.1:{self.port}",
            ],
            cwd=REPO,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, "the server exited; see server.log"
            try:
                health = httpx.get(
                    f"{self.url}/api/health", headers={"Authorization": f"Token {self.token}"}
                )
                if health.status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None

    def close(self) -> None:
        self.stop()
        self.log.close()

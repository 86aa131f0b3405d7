"""scripts/serve, run as the README says: it prints the allowed roots it uses next to
the URL (a project elsewhere is refused in the preview) and the webhook receivers it
allows (with DEBUG on, those on this machine too), and the server answers there."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[list[str], int, tuple[Path, Path]]]:
    """scripts/serve on a free port with a throwaway database and two allowed roots:
    its stdout lines up to the URL, the port and the roots."""
    roots = (tmp_path / "work", tmp_path / "more")
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SYSPROMPT_", "DJANGO_")) and key not in {"DATABASE_URL", "DEBUG"}
    }
    env |= {
        "PORT": str(port),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SYSPROMPT_ALLOWED_ROOTS": ":".join(map(str, roots)),
        "SYSPROMPT_ADMIN_PASSWORD": "serve-test-password",
    }
    process = subprocess.Popen(
        ["bash", "scripts/serve"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and not any("is running at" in x for x in lines):
            line = process.stdout.readline()
            if not line:
                pytest.fail(f"scripts/serve stopped:\n{''.join(lines)}")
            lines.append(line.rstrip("\n"))
        yield lines, port, roots
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
        if process.stdout is not None:
            process.stdout.close()


def test_serve_prints_the_allowed_roots_next_to_the_url(
    served: tuple[list[str], int, tuple[Path, Path]],
) -> None:
    lines, port, (work, more) = served

    assert lines[-1] == f"sysprompt is running at http://127.0.0.1:{port}/"
    assert lines[-2].startswith(
        "The background worker (webhooks and evaluations) is running beside the server (pid "
    )
    assert lines[-3].startswith(
        "Webhook receivers allowed: public https addresses; plain http to 127.0.0.1, ::1, "
        "localhost (SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS)"
    )  # DEBUG is on: a receiver on this machine can be tried at once
    assert "DEBUG is on" in lines[-3]
    assert lines[-4].startswith(
        f"Working directories allowed (SYSPROMPT_ALLOWED_ROOTS): inside {work}, {more}."
    )
    deadline = time.monotonic() + 120  # Django starts slowly on a loaded machine
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as answer:
                assert answer.status == 200
                break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)

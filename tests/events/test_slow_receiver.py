"""A receiver that drips its answer a byte at a time: the attempt ends at its one
deadline (``SYSPROMPT_WEBHOOK_TIMEOUT``) whatever phase it drips in, and it holds its
own lane only — another subscription's delivery arrives in its usual time, and the
claim on the slow delivery outlasts the attempt.

The receivers are real servers on 127.0.0.1 (a thread each) and, for the worker, the
real ``manage.py events_worker`` in its own process; the timeouts are short (1.5 s, a
byte every 0.3 s) so that the whole answer would take about ten times the deadline.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from pytest_django import Settings

from sysprompt.conf import app_settings
from sysprompt.events import services
from sysprompt.events.models import Attempt, Delivery
from sysprompt.events.sending import post
from tests.events.support import ALLOW_LOCAL, receiving
from tests.events.workers import WorkerProcess, environment, wait_until

TIMEOUT = 1.5
DRIP = 0.3
ANSWERS = {
    # path → the answer, dripped from the byte where the phase begins
    "/status": (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0),
    "/headers": (
        b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 40 + b"\r\nContent-Length: 2\r\n\r\nok",
        17,
    ),
    "/body": (b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + b"z" * 40, 38),
}


@dataclass
class Drip:
    """What the dripping receiver saw: per connection, when it was taken and when the
    sender hung up (``None`` while it is open)."""

    port: int = 0
    opened: list[float] = field(default_factory=list)
    closed: list[float | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _complete(request: bytes) -> bool:
    """Whether ``request`` holds its headers and its whole body (``Content-Length``)."""
    head, found, body = request.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


def _serve(connection: socket.socket, drip: Drip, index: int) -> None:
    with connection:
        request = b""
        while not _complete(request):
            part = connection.recv(65536)
            if not part:
                break
            request += part
        path = request.split(b" ", 2)[1].decode() if request.count(b" ") >= 2 else "/status"
        answer, slow_from = ANSWERS.get(path, ANSWERS["/status"])
        with contextlib.suppress(OSError):
            connection.sendall(answer[:slow_from])
            for byte in answer[slow_from:]:
                readable, _, _ = select.select([connection], [], [], DRIP)
                if readable and not connection.recv(1):
                    break  # the sender hung up
                connection.sendall(bytes([byte]))
            connection.settimeout(30)
            connection.recv(1)  # until the sender hangs up
    with drip.lock:
        drip.closed[index] = time.monotonic()


@pytest.fixture(scope="module")
def drip() -> Iterator[Drip]:
    """A receiver that drips every answer a byte each :data:`DRIP` seconds."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    seen = Drip(port=int(server.getsockname()[1]))
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with seen.lock:
                seen.opened.append(time.monotonic())
                seen.closed.append(None)
                index = len(seen.opened) - 1
            threading.Thread(target=_serve, args=(connection, seen, index), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield seen
    stop.set()
    thread.join(timeout=5)
    server.close()


@pytest.mark.parametrize("phase", ["/status", "/headers", "/body"])
def test_dripping_answer_ends_at_the_deadline(settings: Settings, drip: Drip, phase: str) -> None:
    settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_TIMEOUT": TIMEOUT}
    started = time.monotonic()

    outcome = post(
        url=f"http://127.0.0.1:{drip.port}{phase}", content=b"{}", headers={}, conf=app_settings()
    )

    took = time.monotonic() - started
    assert outcome.error == f"No complete answer within {TIMEOUT:g} s."
    # Not before the deadline, and far from the 12 s the whole answer takes (the margin
    # is a loaded machine's, not a speed the test asks for).
    assert TIMEOUT - 0.1 < took < TIMEOUT + 5


@pytest.fixture
def worker(transactional_db: None, settings: Settings, tmp_path: Path) -> Iterator[WorkerProcess]:
    values = {
        **ALLOW_LOCAL,
        "WEBHOOK_TIMEOUT": TIMEOUT,
        "WEBHOOK_CONNECT_TIMEOUT": 1.0,
        "TASKS_QUEUE": f"tests-{os.getpid()}",
    }
    settings.SYSPROMPT = values
    process = WorkerProcess(environment(values), tmp_path / "worker.log")
    process.start()
    yield process
    process.close()


def test_dripping_receiver_holds_its_own_lane_only(worker: WorkerProcess, drip: Drip) -> None:
    author = User.objects.create_user("ada")
    slow = services.webhook_create(
        url=f"http://127.0.0.1:{drip.port}/status", events=["template.saved"], author=author
    ).webhook.id
    already = len(drip.opened)
    with receiving() as healthy:
        fast = services.webhook_create(url=healthy.url, events=["template.saved"], author=author)
        healthy.secret = fast.secret

        services.webhook_test(webhook_id=slow, author=author)
        wait_until(lambda: len(drip.opened) > already, what="the slow attempt")
        asked = time.monotonic()
        services.webhook_test(webhook_id=fast.webhook.id, author=author)
        healthy.wait_for(1)
        arrived = time.monotonic() - asked
        held = Delivery.objects.get(webhook_id=slow)
        lease_held = held.locked_until is not None and held.locked_until > timezone.now()

        wait_until(lambda: Attempt.objects.filter(webhook_id=slow).exists(), what="the record")

    assert arrived < TIMEOUT  # not behind the slow attempt (a whole answer: 12 s)
    assert lease_held and held.state == "pending"  # claimed while the receiver drips
    opened, closed = drip.opened[already], drip.closed[already]
    assert closed is not None and closed - opened < TIMEOUT + 5  # hung up at the deadline
    [attempt] = Attempt.objects.filter(webhook_id=slow)  # one attempt: the claim held
    assert attempt.error == f"No complete answer within {TIMEOUT:g} s."
    assert len(drip.opened) == already + 1

"""What the events tests share: a real webhook receiver (an HTTP server in a thread of
the test process that verifies every request with the ``standardwebhooks`` library),
and the task queue run the way its worker runs it.

``run_queued`` runs rounds of the events' own worker (``sysprompt.events.worker``:
the ready tasks of django-tasks-db's table and the outbox's new events, in batches), as
``manage.py events_worker`` does, without its loop (which would close the test's
connection between rounds), each round's lanes run to their end.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook as Verifier
from standardwebhooks import WebhookVerificationError

from sysprompt.events.worker import BatchWorker

ALLOW_LOCAL = {
    "WEBHOOK_ALLOW_HTTP_HOSTS": ["127.0.0.1", "localhost"],
    "WEBHOOK_ALLOW_PRIVATE": ["127.0.0.1"],
    "WEBHOOK_TIMEOUT": 2.0,
    "WEBHOOK_CONNECT_TIMEOUT": 1.0,
}
"""SYSPROMPT settings under which the receivers of these tests (on 127.0.0.1) are allowed."""


@dataclass
class Received:
    """One request the receiver got, and what verifying it gave."""

    path: str
    headers: dict[str, str]
    body: bytes
    verified: dict[str, Any] | None
    error: str | None
    client: tuple[str, int] = ("", 0)
    """The sender's address and port: one port per connection."""

    @property
    def message_id(self) -> str:
        return self.headers["webhook-id"]


Respond = Callable[["Received"], tuple[int, dict[str, str], bytes]]


def ok(received: Received) -> tuple[int, dict[str, str], bytes]:
    return 200, {}, b"thanks"


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1: records each request, verifies its signature
    with ``secret`` (set it once the subscription exists) and answers with ``respond``."""

    respond: Respond = ok
    secret: str | None = None
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def verified(self) -> list[dict[str, Any]]:
        with self.lock:
            return [item.verified for item in self.received if item.verified is not None]

    def wait_for(self, count: int, timeout: float = 120.0) -> list[Received]:
        """The requests received once there are ``count``; the default deadline is one a
        worker process that starts Django first meets on a loaded 2-core machine."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received)} requests received, {count} expected")

    def handle(
        self, path: str, headers: dict[str, str], body: bytes, client: tuple[str, int] = ("", 0)
    ) -> tuple[int, dict[str, str], bytes]:
        verified, error = None, None
        if self.secret is not None:
            try:
                verified = Verifier(self.secret).verify(body, headers)
            except WebhookVerificationError as failure:
                error = str(failure)
        item = Received(path, headers, body, verified, error, client)
        with self.lock:
            self.received.append(item)
        return self.respond(item)


@contextmanager
def receiving(respond: Respond = ok) -> Iterator[Receiver]:
    """A running :class:`Receiver`, stopped afterwards."""
    receiver = Receiver(respond=respond)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {key.lower(): value for key, value in self.headers.items()}
            status, extra, answer = receiver.handle(
                self.path, headers, body, (self.client_address[0], self.client_address[1])
            )
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.server = server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def run_queued(*, rounds: int = 1, pause: float = 0.0) -> int:
    """Run every ready task of the queue (``rounds`` times, for retries that become ready
    meanwhile); how many ran."""
    worker = BatchWorker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="tests",
        excluded_queue_names=[],
    )
    ran = 0
    try:
        for index in range(rounds):
            while taken := worker.round():
                ran += taken
                worker.lanes.drain()  # what the lanes hold, sent and recorded
            if index + 1 < rounds:
                time.sleep(pause)
    finally:
        worker.lanes.close()
    return ran


def payloads(receiver: Receiver) -> list[dict[str, Any]]:
    """The verified payloads, in the order received."""
    return receiver.verified()


def body_json(item: Received) -> Any:
    return json.loads(item.body)


def run_until_settled(timeout: float = 20.0) -> None:
    """Run the queue until no delivery of an active subscription is pending (retries
    included, as they become due)."""
    from sysprompt.events.models import Delivery, Event

    deadline = time.monotonic() + timeout
    while (
        Delivery.objects.filter(state="pending", webhook__active=True).exists()
        or Event.objects.filter(fanned_out=False).exists()
    ):
        assert time.monotonic() < deadline, "deliveries still pending"
        run_queued()
        time.sleep(0.005)

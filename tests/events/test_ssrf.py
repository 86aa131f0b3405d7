"""Server-side request forgery, attack by attack, against real local servers.

Each test points a subscription at something on this machine that a webhook must not
reach (or must not be fooled by) and checks, on the receiving side, that nothing
arrived or that the worker let go in time. ``localhost`` is the name that resolves to
127.0.0.1: it comes from the machine's hosts file, the same path any name takes
through the resolver, with no DNS server involved and no mock.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.conf import app_settings
from sysprompt.events import services
from sysprompt.events.catalog import MAX_RESPONSE_BYTES
from sysprompt.events.models import Attempt, Webhook
from sysprompt.events.sending import UNREACHED, post
from tests.events.support import ALLOW_LOCAL, Received, receiving, run_queued


def _deliver_once(author: User, url: str) -> Attempt:
    """Subscribe ``url`` (as stored, unchecked: the settings may have changed since),
    send a test event, run the queue; the one attempt."""
    created = services.webhook_create(
        url="https://example.com/", events=["template.saved"], author=author
    )
    Webhook.objects.filter(pk=created.webhook.id).update(url=url)
    services.webhook_test(webhook_id=created.webhook.id, author=author)
    run_queued()
    return Attempt.objects.get()


def test_name_resolving_to_loopback_is_refused_on_the_address(
    author: User, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SYSPROMPT = {"WEBHOOK_ALLOW_HTTP_HOSTS": ["localhost"]}
    with receiving() as receiver:
        # Accepted when saved: a name is judged when delivering, on what it resolves to.
        created = services.webhook_create(
            url=f"http://localhost:{receiver.port}/hooks", events=["template.saved"], author=author
        )
        services.webhook_test(webhook_id=created.webhook.id, author=author)
        run_queued()

    assert receiver.received == []
    attempt = Attempt.objects.get()
    assert attempt.status_code is None
    assert attempt.error == UNREACHED  # the operator's log has why
    assert "localhost resolves to 127.0.0.1" in caplog.text
    assert "loopback" in caplog.text


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.1.2.3", "loopback"),
        ("0.0.0.0", "'this network'"),  # Linux connects it to the machine itself
        ("[::ffff:127.0.0.1]", "loopback, inside an IPv6 address"),
        ("[::1]", "loopback"),
        ("169.254.169.254", "link-local (cloud metadata)"),
        ("10.0.0.1", "private"),
        ("[fd00:ec2::254]", "unique local"),
    ],
)
def test_address_literal_is_refused_before_connecting(
    author: User, settings: Settings, caplog: pytest.LogCaptureFixture, host: str, reason: str
) -> None:
    settings.SYSPROMPT = {"WEBHOOK_ALLOW_HTTP_HOSTS": [host.strip("[]")]}
    with receiving() as receiver:
        attempt = _deliver_once(author, f"http://{host}:{receiver.port}/hooks")

    assert receiver.received == []
    assert attempt.error == UNREACHED
    assert "Refused: " in caplog.text
    assert reason in caplog.text


def test_name_allowed_by_the_operator_is_reached_with_its_host_header(
    author: User, settings: Settings
) -> None:
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_HTTP_HOSTS": ["localhost"],
        "WEBHOOK_ALLOW_PRIVATE": ["localhost"],
    }
    with receiving() as receiver:
        attempt = _deliver_once(author, f"http://localhost:{receiver.port}/hooks")
        [item] = receiver.wait_for(1)

    assert attempt.status_code == 200
    assert item.headers["host"] == f"localhost:{receiver.port}"


def test_network_allowed_by_the_operator_is_reached(author: User, settings: Settings) -> None:
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_HTTP_HOSTS": ["localhost"],
        "WEBHOOK_ALLOW_PRIVATE": ["127.0.0.0/8", "::1"],
    }
    with receiving() as receiver:
        attempt = _deliver_once(author, f"http://localhost:{receiver.port}/hooks")

    assert attempt.status_code == 200


def test_http_is_refused_on_delivery_when_no_longer_allowed(
    author: User, settings: Settings
) -> None:
    settings.SYSPROMPT = {"WEBHOOK_ALLOW_PRIVATE": ["127.0.0.1"]}
    with receiving() as receiver:
        attempt = _deliver_once(author, receiver.url)

    assert receiver.received == []
    assert "Webhooks use https" in attempt.error


def test_redirect_is_never_followed(author: User, settings: Settings) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    with receiving() as target:

        def redirect(received: Received) -> tuple[int, dict[str, str], bytes]:
            return 307, {"Location": target.url}, b""

        with receiving(redirect) as receiver:
            attempt = _deliver_once(author, receiver.url)
            receiver.wait_for(1)

    assert target.received == []
    assert attempt.status_code == 307
    assert attempt.delivery.state == "failed"  # a redirect is a failed attempt


@pytest.fixture
def silent_server() -> Iterator[int]:
    """Accepts connections and reads, never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(timeout=5)
    for connection in held:
        connection.close()
    listener.close()


def test_receiver_that_never_answers_times_out(
    author: User, settings: Settings, silent_server: int
) -> None:
    settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_TIMEOUT": 0.5}
    started = time.monotonic()

    attempt = _deliver_once(author, f"http://127.0.0.1:{silent_server}/hooks")

    assert attempt.error == "No complete answer within 0.5 s."
    assert time.monotonic() - started < 5


class _Endless(BaseHTTPRequestHandler):
    """Answers 200 with a body that never ends, as fast as it can write."""

    protocol_version = "HTTP/1.1"
    written: list[int] = []

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"x" * 16384
        total = 0
        try:
            while total < 1024**3:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                total += len(chunk)
        except OSError:
            pass
        _Endless.written.append(total)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_endless_answer_is_read_only_to_64_kb(author: User, settings: Settings) -> None:
    settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_TIMEOUT": 10.0}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        attempt = _deliver_once(author, f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()

    assert attempt.status_code == 200
    assert attempt.error == ""
    assert len(attempt.response) == 1000
    assert time.monotonic() - started < 5  # not read to the gigabyte, not timed out
    assert _Endless.written and _Endless.written[-1] < 1024**3  # the worker hung up


def test_proxy_variables_are_ignored(
    author: User, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    with receiving() as proxy, receiving() as receiver:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        attempt = _deliver_once(author, receiver.url)
        receiver.wait_for(1)

    assert attempt.status_code == 200
    assert proxy.received == []


def test_post_bounds_the_answer_read_to_64_kb_constant() -> None:
    assert MAX_RESPONSE_BYTES == 65536
    outcome = post(url="ftp://example.com/", content=b"{}", headers={}, conf=app_settings())
    assert outcome.error.startswith("Refused: ftp: webhooks use https")

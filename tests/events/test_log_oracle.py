"""The delivery log is no oracle of the server's network: what an author reads of an
attempt that reached no receiver — in the API's delivery log and on the subscription's
page — is the same whether the name does not resolve, resolves to a private address,
or leads to one of the machine's own addresses where the port is closed, silent or
speaks no TLS; the operator's log has the detail. The machine's own addresses (every
interface's, not loopback alone) count as internal.

Against real servers on this machine: the address of its own outgoing interface (found
with a UDP socket's ``connect``, which sends nothing), a closed port, a server that never
answers, a plain-HTTP server spoken to with TLS, ``localhost`` and a ``.invalid`` name.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.events import services
from sysprompt.events.addresses import OWN, AllowList, own_addresses
from sysprompt.events.models import Attempt, Webhook
from sysprompt.events.sending import UNREACHED
from tests.events.support import receiving, run_queued

PUBLIC = ipaddress.ip_address("93.184.215.14")


def _outgoing_address() -> str:
    """This machine's address on the interface its traffic leaves by (not loopback)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.200", 9))  # a UDP connect picks the route; nothing is sent
        return str(probe.getsockname()[0])
    except OSError:
        pytest.skip("no IPv4 route: the machine has no address but loopback")
    finally:
        probe.close()


def _closed_port() -> int:
    holder = socket.create_server(("0.0.0.0", 0))
    port = int(holder.getsockname()[1])
    holder.close()
    return port


@contextlib.contextmanager
def _listener(answer: bytes | None) -> Iterator[tuple[int, list[object]]]:
    """A server on every interface: answers ``answer`` (not TLS) and hangs up, or, for
    ``None``, holds each connection silent. Its port, and the connections it took."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.1)
    taken: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            taken.append(connection)
            if answer is not None:
                with contextlib.suppress(OSError):
                    connection.sendall(answer)
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1]), taken
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in taken:
            connection.close()  # type: ignore[attr-defined]
        server.close()


@dataclass(frozen=True)
class Case:
    name: str
    url: str
    detail: str
    """What the operator's log says of it."""


@pytest.fixture
def cases() -> Iterator[list[Case]]:
    own = _outgoing_address()
    with (
        receiving() as receiver,
        _listener(None) as (silent, held),
        _listener(b"HTTP/1.1 400 Bad Request\r\n\r\n") as (plain, answered),
    ):
        yield [
            Case("does not resolve", "http://no-such-receiver.invalid/hooks", "does not resolve"),
            Case("private", f"http://localhost:{receiver.port}/hooks", "resolves to 127.0.0.1"),
            Case("refused", f"http://{own}:{_closed_port()}/hooks", f"Refused: {own} is"),
            Case("silent", f"http://{own}:{silent}/hooks", f"Refused: {own} is"),
            Case("tls", f"https://{own}:{plain}/hooks", f"Refused: {own} is"),
        ]
        assert (receiver.received, held, answered) == ([], [], [])  # nothing reached


def _attempt_as_author(author: User, api: APIClient, page: Client, url: str) -> tuple[object, str]:
    """Subscribe ``url`` (as stored: unchecked), send a test event, run the queue; the
    attempt as the API's log and the page's log show it, without its time and id."""
    created = services.webhook_create(
        url="https://example.com/hooks", events=["template.saved"], author=author
    )
    webhook_id = created.webhook.id
    Webhook.objects.filter(pk=webhook_id).update(url=url)
    services.webhook_test(webhook_id=webhook_id, author=author)
    run_queued()
    [shown] = api.get(f"/api/webhooks/{webhook_id}/deliveries").json()["results"]
    for varying in ("event_id", "at"):
        shown.pop(varying)
    html = page.get(f"/webhooks/{webhook_id}/log", HTTP_HX_REQUEST="true").content.decode()
    html = re.sub(r"<time [^>]*>.*?</time>", "", html)
    html = re.sub(r"msg_[0-9A-Za-z]+", "", html)
    return shown, html


def test_delivery_log_reads_the_same_for_every_unreachable_address(
    author: User,
    author_client: APIClient,
    client: Client,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
    cases: list[Case],
) -> None:
    hosts = ["localhost", "no-such-receiver.invalid", _outgoing_address()]
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_HTTP_HOSTS": hosts,
        "WEBHOOK_TIMEOUT": 1.0,
        "WEBHOOK_CONNECT_TIMEOUT": 0.5,
    }
    client.force_login(author)
    seen = {}
    for case in cases:
        caplog.clear()
        seen[case.name] = _attempt_as_author(author, author_client, client, case.url)
        assert case.detail in caplog.text, (case.name, caplog.text)  # the operator knows

    api, html = seen["does not resolve"]
    assert api == {
        "type": "ping",
        "attempt": 1,
        "status_code": None,
        "error": UNREACHED,
        "response": "",
        "duration_ms": 0,
    }
    assert escape(UNREACHED) in html
    assert seen == dict.fromkeys(seen, (api, html))  # the five read the same


def test_machine_own_interface_address_is_internal() -> None:
    own = ipaddress.ip_address(_outgoing_address())

    assert own in own_addresses()  # read from the kernel's tables, not loopback alone
    assert AllowList.parse(()).refusal("receiver.example", own) is not None


@pytest.mark.parametrize(
    ("allowed", "address", "refused"),
    [
        ((), PUBLIC, True),  # a public address on one of the machine's interfaces
        ((), ipaddress.ip_address(f"::ffff:{PUBLIC}"), True),
        (("93.184.215.14",), PUBLIC, False),  # the operator allows it
        (("receiver.example",), PUBLIC, False),
        ((), ipaddress.ip_address("93.184.215.15"), False),  # another machine's
    ],
)
def test_own_public_address_is_refused_unless_allowed(
    allowed: tuple[str, ...], address: ipaddress.IPv4Address, refused: bool
) -> None:
    reason = AllowList.parse(allowed).refusal("receiver.example", address, own=frozenset({PUBLIC}))

    assert (reason is not None) == refused
    assert reason is None or OWN in reason


@pytest.mark.parametrize("answer", [None, b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_allowed_address_that_takes_no_connection_reads_as_unreached(
    author: User, settings: Settings, answer: bytes | None
) -> None:
    """Allowed by the operator, connected to: a closed port, and TLS to a server that
    speaks none, read the same (the author learns no port of the allowed networks)."""
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_PRIVATE": ["127.0.0.1"],
        "WEBHOOK_TIMEOUT": 1.0,
        "WEBHOOK_CONNECT_TIMEOUT": 0.5,
    }
    with _listener(answer) as (port, taken):
        url = f"https://127.0.0.1:{_closed_port() if answer is None else port}/hooks"
        created = services.webhook_create(url=url, events=["template.saved"], author=author)
        services.webhook_test(webhook_id=created.webhook.id, author=author)
        run_queued()

    [attempt] = Attempt.objects.all()
    assert (attempt.error, attempt.duration_ms) == (UNREACHED, 0)
    assert len(taken) == (0 if answer is None else 1)

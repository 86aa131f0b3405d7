"""One HTTP attempt to a webhook's receiver, within the server-side request forgery rules.

url (checked again: the settings may have changed since it was saved) → the host name
resolved **once** → each address judged (``addresses.AllowList.refusal``): a name whose
every address is refused is refused → a TCP connection to the first allowed address
that answers (the socket's peer checked to be that address) → TLS with the host *name*
for SNI and the certificate check, and ``Host:`` naming it → ``POST`` with the signed
body → the status and at most :data:`~sysprompt.events.catalog.MAX_RESPONSE_BYTES` of
the answer, within the connect timeout and the attempt's timeout. A redirect is never
followed (a 3xx is a failed attempt like any non-2xx), no proxy from the environment is
used.

The connection is made by :class:`GuardedBackend`, a network backend of ``httpcore``:
the check and the connect happen on the same address, so a name that resolves to
127.0.0.1 — at once, or only on a second lookup — never reaches it.

A worker keeps its connections (:class:`Sender`, one pool per process and settings):
a connection is reused for the same scheme, host and port only, for at most
:data:`KEEPALIVE_SECONDS` after its last answer, and it is the connection that was
checked when it was made — so no request ever goes to an address that was not checked,
and a name is resolved (and its addresses checked) again at least that often. An answer
cut at the cap, or not complete in time, closes its connection.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import httpcore
from django.apps import apps

from sysprompt.conf import AppSettings
from sysprompt.errors import InvalidInput
from sysprompt.events.addresses import Address, AllowList
from sysprompt.events.apps import EventsConfig
from sysprompt.events.catalog import MAX_RESPONSE_BYTES, RESPONSE_EXCERPT_CHARS
from sysprompt.events.validation import webhook_url_valid

USER_AGENT = "sysprompt-webhooks/1"
KEEPALIVE_SECONDS = 2.0
"""How long an idle connection is kept for the next attempt to the same origin (less than
common servers' keep-alive, so a kept connection is rarely one the receiver is closing)."""
MAX_CONNECTIONS = 32
"""Connections a worker process keeps open at most (all origins together)."""


class Refused(Exception):
    """The attempt was not made: the URL or every address it leads to is refused."""


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: a status (and the start of the answer) or an error."""

    status_code: int | None
    error: str
    response: str
    duration_ms: int

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to an address the allow list permits for the URL's host."""

    def __init__(self, allow: AllowList) -> None:
        self.allow = allow

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = _resolve(host, port)
        allowed = [address for address in addresses if self.allow.refusal(host, address) is None]
        if not allowed:
            literal = host.strip("[]") == str(addresses[0])
            where = "" if literal else f"{host} resolves to {', '.join(map(str, addresses))}; "
            raise Refused(f"Refused: {where}{self.allow.refusal(host, addresses[0])}.")
        error: Exception | None = None
        for address in allowed:
            try:
                stream = super().connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as failed:
                error = failed
                continue
            peer = ipaddress.ip_address(stream.get_extra_info("server_addr")[0])
            if peer != address:  # never: the connection went to an address not checked
                stream.close()
                raise Refused(f"Refused: connected to {peer}, not to the checked {address}.")
            return stream
        assert error is not None
        raise error


def _resolve(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to, once, in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise httpcore.ConnectError(f"{host} does not resolve: {error}") from None
    addresses: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise httpcore.ConnectError(f"{host} resolves to no address")
    return addresses


def ssl_context(conf: AppSettings) -> ssl.SSLContext:
    """Certificates checked against ``WEBHOOK_CA_FILE``, or certifi's bundle."""
    events = apps.get_app_config("events")
    assert isinstance(events, EventsConfig)
    return events.tls_context(conf.webhook_ca_file)


class Sender:
    """A worker's connection pool: the settings that shape a connection (allow list,
    certificates) are fixed for its life; :func:`sender` makes a new one when they
    change. Safe to share between threads."""

    def __init__(self, conf: AppSettings) -> None:
        self.key = _sender_key(conf)
        self.pool = httpcore.ConnectionPool(
            ssl_context=ssl_context(conf),
            network_backend=GuardedBackend(AllowList.parse(conf.webhook_allow_private)),
            retries=0,
            max_connections=MAX_CONNECTIONS,
            keepalive_expiry=KEEPALIVE_SECONDS,
        )

    def close(self) -> None:
        self.pool.close()


_senders: dict[str, Sender] = {}
_senders_lock = threading.Lock()


@atexit.register
def _senders_close() -> None:
    """Close the kept connections when the process ends (not left to the collector)."""
    with _senders_lock:
        for kept in _senders.values():
            kept.close()
        _senders.clear()


def _sender_key(conf: AppSettings) -> tuple[object, ...]:
    return (conf.webhook_allow_private, conf.webhook_ca_file)


def sender(conf: AppSettings) -> Sender:
    """This process's :class:`Sender` for the settings ``conf`` (a new one, the old one
    closed, when they changed)."""
    with _senders_lock:
        current = _senders.get("worker")
        if current is not None and current.key == _sender_key(conf):
            return current
        _senders["worker"] = fresh = Sender(conf)
    if current is not None:
        current.close()
    return fresh


def post(
    *,
    url: str,
    content: bytes,
    headers: Mapping[str, str],
    conf: AppSettings,
    via: Sender | None = None,
) -> Outcome:
    """Send one attempt (see the module docstring); never raises for the receiver's sake.
    ``via``: the worker's kept connections; without, one connection made and closed."""
    started = time.monotonic()
    try:
        checked = webhook_url_valid(url, conf)
        status, answer = _exchange(checked, content, headers, conf, started, via)
    except InvalidInput as refusal:
        return _failed(f"Refused: {refusal.message}", started)
    except Refused as refusal:
        return _failed(str(refusal), started)
    except httpcore.ConnectTimeout:
        return _failed(f"Connecting timed out after {conf.webhook_connect_timeout:g} s.", started)
    except (httpcore.ReadTimeout, httpcore.WriteTimeout, _Overtime):
        return _failed(f"No complete answer within {conf.webhook_timeout:g} s.", started)
    except httpcore.ConnectError as error:
        return _failed(f"Could not connect: {error}", started)
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as error:
        return _failed(f"The connection failed: {error or type(error).__name__}", started)
    return Outcome(
        status_code=status,
        error="",
        response=answer[:RESPONSE_EXCERPT_CHARS],
        duration_ms=_elapsed_ms(started),
    )


class _Overtime(Exception):
    """The answer kept coming after the attempt's time was up."""


def _exchange(
    url: str,
    content: bytes,
    headers: Mapping[str, str],
    conf: AppSettings,
    started: float,
    via: Sender | None,
) -> tuple[int, str]:
    deadline = started + conf.webhook_timeout
    timeouts = {
        "connect": min(conf.webhook_connect_timeout, conf.webhook_timeout),
        "read": conf.webhook_timeout,
        "write": conf.webhook_timeout,
        "pool": conf.webhook_connect_timeout,
    }
    sent = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **({} if via else {"Connection": "close"}),
        **headers,
    }
    with contextlib.ExitStack() as stack:
        pool = via.pool if via else stack.enter_context(_one_off_pool(conf))
        return _stream(pool, url, content, sent, timeouts, deadline)


def _one_off_pool(conf: AppSettings) -> httpcore.ConnectionPool:
    return httpcore.ConnectionPool(
        ssl_context=ssl_context(conf),
        network_backend=GuardedBackend(AllowList.parse(conf.webhook_allow_private)),
        retries=0,
        max_connections=1,
    )


def _stream(
    pool: httpcore.ConnectionPool,
    url: str,
    content: bytes,
    sent: Mapping[str, str],
    timeouts: Mapping[str, float],
    deadline: float,
) -> tuple[int, str]:
    with (
        pool.stream(
            "POST",
            url,
            headers=list(sent.items()),
            content=content,
            extensions={"timeout": dict(timeouts)},
        ) as response,
    ):
        received = bytearray()
        for chunk in response.iter_stream():
            received += chunk
            if len(received) >= MAX_RESPONSE_BYTES:
                break  # enough: the rest is never read
            if time.monotonic() > deadline:
                raise _Overtime
        return response.status, bytes(received[:MAX_RESPONSE_BYTES]).decode("utf-8", "replace")


def _failed(error: str, started: float) -> Outcome:
    return Outcome(status_code=None, error=error, response="", duration_ms=_elapsed_ms(started))


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)

"""One HTTP attempt to a webhook's receiver, within the server-side request forgery rules
and within one deadline.

url (checked again: the settings may have changed since it was saved) → the host name
resolved **once** → each address judged (``addresses.AllowList.refusal``: the special
ranges and the machine's own addresses): a name whose every address is refused is
refused → a TCP connection to the first allowed address that answers (the socket's peer
checked to be that address) → TLS with the host *name* for SNI and the certificate
check, and ``Host:`` naming it → ``POST`` with the signed body → the status and at most
:data:`~sysprompt.events.catalog.MAX_RESPONSE_BYTES` of the answer. A redirect is never
followed (a 3xx is a failed attempt like any non-2xx), no proxy from the environment is
used.

**One deadline.** The attempt ends ``SYSPROMPT_WEBHOOK_TIMEOUT`` seconds after it
began, whatever phase it is in: the name's resolution (in a thread of its own, waited
for until the deadline), each connection (also within the connect timeout), the TLS
handshake, the request, the status line, the headers and the body. Every read and
write on the connection (:class:`_DeadlineStream`) waits at most the time left, and
none starts once it is spent — so a receiver that drips its answer a byte at a time
holds an attempt no longer than one that sends nothing.

**What the author reads.** An attempt that reached no receiver — a name that does not
resolve, an address refused (private, the machine's own, …), a connection refused or
timed out, a failed TLS handshake — is recorded with one sentence (:data:`UNREACHED`)
and no duration, so the delivery log tells nothing of which internal names, addresses
and ports exist; the detail goes to the operator's log (``sysprompt.events``,
WARNING). After a connection is made the author reads the status, the start of the
answer, or that no complete answer came in time.

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
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
from django.apps import apps

from sysprompt.conf import AppSettings
from sysprompt.errors import InvalidInput
from sysprompt.events.addresses import Address, AllowList
from sysprompt.events.apps import EventsConfig
from sysprompt.events.catalog import MAX_RESPONSE_BYTES, RESPONSE_EXCERPT_CHARS
from sysprompt.events.validation import AddressRefused, webhook_url_valid

logger = logging.getLogger("sysprompt.events")

USER_AGENT = "sysprompt-webhooks/1"
KEEPALIVE_SECONDS = 2.0
"""How long an idle connection is kept for the next attempt to the same origin (less than
common servers' keep-alive, so a kept connection is rarely one the receiver is closing)."""
MAX_CONNECTIONS = 32
"""Connections a worker process keeps open at most (all origins together)."""
RESOLVERS = 8
"""Name resolutions a process runs at once (threads: the system's resolver blocks); one
that outlives its attempt's deadline is abandoned to the resolver's own timeouts."""
UNREACHED = (
    "Not delivered: no receiver was reached. The URL's host must resolve to an address "
    "webhooks may reach (a public one, or one the operator allows), accept a connection "
    "and complete TLS with a valid certificate for its name in time. The server's log "
    "has the detail."
)
"""What the author reads of every attempt that reached no receiver, whatever the cause."""


class Refused(Exception):
    """The attempt was not made: the URL or every address it leads to is refused."""


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: a status (and the start of the answer) or an error."""

    status_code: int | None
    error: str
    """What the author reads (one sentence for every attempt that reached nothing)."""
    response: str
    duration_ms: int
    detail: str = ""
    """What happened, for the operator's log (empty when delivered)."""

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
                    str(address),
                    port,
                    _time_left(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as failed:
                error = failed
                continue
            peer = ipaddress.ip_address(stream.get_extra_info("server_addr")[0])
            if peer != address:  # never: the connection went to an address not checked
                stream.close()
                raise Refused(f"Refused: connected to {peer}, not to the checked {address}.")
            return _DeadlineStream(stream)
        assert error is not None
        raise error


_deadline: ContextVar[float | None] = ContextVar("webhook_deadline", default=None)
"""When the attempt running in this thread must end (``time.monotonic()``), if any."""


@contextlib.contextmanager
def _until(deadline: float) -> Iterator[None]:
    token = _deadline.set(deadline)
    try:
        yield
    finally:
        _deadline.reset(token)


def _time_left(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the attempt's time; ``expired`` raised when
    nothing is left."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the attempt's time ran out")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read, write and TLS handshake waits at most what is left
    of the current attempt's time (the deadline of the thread using it)."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


_resolvers = ThreadPoolExecutor(RESOLVERS, thread_name_prefix="webhook-resolve")


def _resolve(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to, once, in the resolver's order — waited for
    until the attempt's deadline at most."""
    name = host.strip("[]")
    lookup = _resolvers.submit(socket.getaddrinfo, name, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=_time_left(None, httpcore.ConnectTimeout))
    except FutureTimeout:
        lookup.cancel()
        raise httpcore.ConnectTimeout(f"resolving {host} took longer than the attempt") from None
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
    except AddressRefused as refusal:
        return _unreached(url, f"Refused: {refusal.detail}.", started)
    except InvalidInput as refusal:  # the URL itself (its scheme, …): the author's to fix
        return _failed(url, f"Refused: {refusal.message}", str(refusal.message), started)
    except Refused as refusal:
        return _unreached(url, str(refusal), started)
    except httpcore.ConnectTimeout as error:
        return _unreached(url, f"Connecting timed out: {error or 'no answer'}", started)
    except httpcore.ConnectError as error:  # refused, unreachable, TLS failed, no such name
        return _unreached(url, f"Could not connect: {error}", started)
    except (httpcore.ReadTimeout, httpcore.WriteTimeout, httpcore.PoolTimeout) as error:
        said = f"No complete answer within {conf.webhook_timeout:g} s."
        return _failed(url, said, f"{said} ({type(error).__name__})", started)
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as error:
        said = "The connection failed before a complete answer."
        return _failed(url, said, f"{said} {error or type(error).__name__}", started)
    return Outcome(
        status_code=status,
        error="",
        response=answer[:RESPONSE_EXCERPT_CHARS],
        duration_ms=_elapsed_ms(started),
    )


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
        "pool": min(conf.webhook_connect_timeout, conf.webhook_timeout),
    }
    sent = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **({} if via else {"Connection": "close"}),
        **headers,
    }
    with contextlib.ExitStack() as stack, _until(deadline):
        pool = via.pool if via else stack.enter_context(_one_off_pool(conf))
        return _stream(pool, url, content, sent, timeouts)


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
        return response.status, bytes(received[:MAX_RESPONSE_BYTES]).decode("utf-8", "replace")


def _failed(url: str, error: str, detail: str, started: float) -> Outcome:
    """An attempt that reached the receiver (or whose URL was refused as written)."""
    took = _elapsed_ms(started)
    logger.warning("webhook to %s not delivered after %d ms: %s", _origin(url), took, detail)
    return Outcome(status_code=None, error=error, response="", duration_ms=took, detail=detail)


def _unreached(url: str, detail: str, started: float) -> Outcome:
    """An attempt that reached no receiver: :data:`UNREACHED` and no duration for the
    author (how long it took would tell a refused port from a silent one), the detail
    for the operator."""
    logger.warning(
        "webhook to %s reached no receiver after %d ms: %s",
        _origin(url),
        _elapsed_ms(started),
        detail,
    )
    return Outcome(status_code=None, error=UNREACHED, response="", duration_ms=0, detail=detail)


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (its path or query may hold a token)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a URL that cannot be read)"
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)

"""Which addresses a webhook may reach: the server-side request forgery rules.

A receiver must be on the public internet. Every address a name resolves to — and every
address literal in a URL — is classified here; one in a special-purpose range
(loopback, private, link-local and so the cloud metadata services, shared, reserved,
documentation, multicast, …; IPv4 and IPv6, with IPv4 addresses embedded in IPv6 ones
judged as IPv4) is refused unless the operator allows it:

* ``SYSPROMPT_WEBHOOK_ALLOW_PRIVATE`` lists host names (the URL's host, whatever it
  resolves to) and networks (``10.0.0.0/8``, ``127.0.0.1``) that may be reached anyway.

The machine's own addresses count as internal too, whatever their range: a public
address on one of its interfaces reaches the server's own ports as surely as 127.0.0.1
(:func:`own_addresses`: every address of every interface, read from the kernel's
``/proc/net/fib_trie`` and ``/proc/net/if_inet6`` — nothing is executed — at most
every :data:`OWN_ADDRESSES_SECONDS`; on a system without them, the addresses the
machine's own name resolves to).

:func:`refusal` answers with the reason an address is refused (or ``None``); the
worker applies it to the address it is about to connect to (``sending``), and the
validation of a new subscription to an address literal in its URL. The reason is for
the operator's log: an author reads one generic sentence (``sending``), so the delivery
log tells nothing of which internal names and addresses exist.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_SPECIAL: Final[tuple[tuple[str, str], ...]] = (
    # IPv4 (IANA's special-purpose registry, and the rest that is not public unicast)
    ("0.0.0.0/8", "'this network'"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT; also a cloud metadata range)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (cloud metadata)"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation"),
    ("192.31.196.0/24", "AS112"),
    ("192.52.193.0/24", "AMT"),
    ("192.88.99.0/24", "6to4 relay"),
    ("192.168.0.0/16", "private"),
    ("192.175.48.0/24", "AS112"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("255.255.255.255/32", "broadcast"),
    # IPv6
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "IPv4-compatible (deprecated)"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("2001::/23", "IETF protocol assignments (Teredo included)"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing"),
    ("fc00::/7", "unique local (private; cloud metadata)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
)
SPECIAL_NETWORKS: Final[tuple[tuple[Network, str], ...]] = tuple(
    (ipaddress.ip_network(network), reason) for network, reason in _SPECIAL
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def refusal(address: Address) -> str | None:
    """Why ``address`` is no public unicast address (``"loopback"``, …), or ``None``.

    An IPv4 address inside an IPv6 one (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``) is judged as that IPv4 address, so
    ``::ffff:127.0.0.1`` is loopback. Anything Python's ``ipaddress`` does not deem
    global is refused too, should its table know a range this one does not.
    """
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = refusal(embedded)
        return None if reason is None else f"{reason}, inside an IPv6 address"
    for network, reason in SPECIAL_NETWORKS:
        if address.version == network.version and address in network:
            return reason
    if not address.is_global:
        return "not globally routable"
    return None


OWN_ADDRESSES_SECONDS: Final = 5.0
"""How long the machine's addresses, once read, are taken as they were."""
OWN = "one of this machine's own addresses"
_FIB_TRIE: Final = Path("/proc/net/fib_trie")
_IF_INET6: Final = Path("/proc/net/if_inet6")
_own: tuple[float, frozenset[Address]] = (float("-inf"), frozenset())
_own_lock = threading.Lock()


def own_addresses() -> frozenset[Address]:
    """Every address of this machine's interfaces (loopback included), IPv4 and IPv6,
    read again at most every :data:`OWN_ADDRESSES_SECONDS`."""
    global _own
    with _own_lock:
        read_at, addresses = _own
        if time.monotonic() - read_at < OWN_ADDRESSES_SECONDS:
            return addresses
        _own = (time.monotonic(), addresses := _own_read())
        return addresses


def _own_read() -> frozenset[Address]:
    found: set[Address] = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    ipv4 = _fib_trie_local(_read_text(_FIB_TRIE))
    ipv6 = _if_inet6(_read_text(_IF_INET6))
    found |= ipv4 | ipv6
    if not ipv4 and not ipv6:  # no /proc (not Linux): what the machine's name resolves to
        with contextlib.suppress(OSError, UnicodeError):
            for info in socket.getaddrinfo(socket.gethostname(), None):
                found.add(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
    return frozenset(found)


def _read_text(path: Path) -> str:
    try:
        with path.open(encoding="ascii", errors="replace") as file:
            return file.read(1 << 20)  # a few KB on a machine with many interfaces
    except OSError:
        return ""


def _fib_trie_local(text: str) -> set[Address]:
    """The IPv4 addresses of the machine's interfaces: in the kernel's routing trie, the
    leaves (``|-- a.b.c.d``) followed by ``/32 host LOCAL``."""
    found: set[Address] = set()
    leaf = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|--"):
            leaf = stripped[3:].strip()
        elif stripped.startswith("/32 host LOCAL") and leaf:
            with contextlib.suppress(ValueError):
                found.add(ipaddress.IPv4Address(leaf))
    return found


def _if_inet6(text: str) -> set[Address]:
    """The IPv6 addresses of the machine's interfaces: the first field (32 hex digits) of
    each line of ``/proc/net/if_inet6``."""
    found: set[Address] = set()
    for line in text.splitlines():
        fields = line.split()
        if fields and len(fields[0]) == 32:
            with contextlib.suppress(ValueError):
                found.add(ipaddress.IPv6Address(int(fields[0], 16)))
    return found


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return address.sixtofour


@dataclass(frozen=True)
class AllowList:
    """``SYSPROMPT_WEBHOOK_ALLOW_PRIVATE``: host names and networks the operator trusts."""

    names: frozenset[str]
    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, entries: tuple[str, ...]) -> AllowList:
        names: set[str] = set()
        networks: list[Network] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.lower().removesuffix("."))
        return cls(frozenset(names), tuple(networks))

    def refusal(
        self, host: str, address: Address, own: frozenset[Address] | None = None
    ) -> str | None:
        """Why a connection to ``address`` for the URL host ``host`` is refused, or None
        (for the operator's log). ``own``: the machine's addresses (:func:`own_addresses`
        unless given)."""
        if host.lower().removesuffix(".") in self.names:
            return None
        reason = refusal(address)
        if reason is None and address in (own_addresses() if own is None else own):
            reason = OWN
        elif reason is None:
            embedded = _embedded_ipv4(address)
            if embedded is not None and embedded in (own_addresses() if own is None else own):
                reason = f"{OWN}, inside an IPv6 address"
        if reason is None:
            return None
        for network in self.networks:
            if address.version == network.version and address in network:
                return None
        article = "" if reason.startswith(OWN) else "a "
        return (
            f"{address} is {article}{reason}{'' if article == '' else ' address'}, which "
            "webhooks may not reach unless SYSPROMPT_WEBHOOK_ALLOW_PRIVATE lists it"
        )


def address_literal(host: str) -> Address | None:
    """The address a URL's host names literally (``[::1]`` without brackets), or None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None

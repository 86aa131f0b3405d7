"""Which addresses a webhook may reach, range by range, IPv4 and IPv6, and what the
operator's allow list lets through."""

from __future__ import annotations

import ipaddress

import pytest

from sysprompt.events.addresses import AllowList, refusal


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("0.0.0.0", "'this network'"),
        ("10.20.30.40", "private"),
        ("100.64.0.1", "shared"),
        ("100.100.100.200", "shared"),  # a cloud's metadata service
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("169.254.169.254", "link-local (cloud metadata)"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.0.0.192", "IETF protocol assignments"),
        ("192.0.2.1", "documentation"),
        ("192.168.1.1", "private"),
        ("198.18.0.1", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::7f00:1", "IPv4-compatible"),
        ("::ffff:127.0.0.1", "loopback, inside an IPv6 address"),
        ("::ffff:169.254.169.254", "link-local (cloud metadata), inside an IPv6 address"),
        ("64:ff9b::a00:1", "private, inside an IPv6 address"),  # NAT64 of 10.0.0.1
        ("2002:7f00:1::1", "loopback, inside an IPv6 address"),  # 6to4 of 127.0.0.1
        ("2001::1", "IETF protocol assignments"),  # Teredo
        ("2001:db8::1", "documentation"),
        ("fc00::1", "unique local"),
        ("fd00:ec2::254", "unique local"),  # a cloud's IPv6 metadata service
        ("fe80::1", "link-local"),
        ("ff02::1", "multicast"),
    ],
)
def test_special_address_is_refused(address: str, reason: str) -> None:
    found = refusal(ipaddress.ip_address(address))

    assert found is not None and found.startswith(reason)


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_address_is_reachable(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("entries", "host", "address", "allowed"),
    [
        (("10.0.0.0/8",), "hooks.internal", "10.1.2.3", True),
        (("10.0.0.0/8",), "hooks.internal", "192.168.1.1", False),
        (("127.0.0.1",), "localhost", "127.0.0.1", True),
        (("127.0.0.1",), "localhost", "127.0.0.2", False),
        (("hooks.internal",), "HOOKS.internal.", "10.9.9.9", True),
        (("hooks.internal",), "other.internal", "10.9.9.9", False),
        (("::1",), "localhost", "::1", True),
        (("::1",), "localhost", "127.0.0.1", False),
        ((), "example.com", "93.184.216.34", True),
    ],
)
def test_allow_list_lets_listed_names_and_networks_through(
    entries: tuple[str, ...], host: str, address: str, allowed: bool
) -> None:
    found = AllowList.parse(entries).refusal(host, ipaddress.ip_address(address))

    assert (found is None) == allowed
    if found is not None:
        assert "SYSPROMPT_WEBHOOK_ALLOW_PRIVATE" in found

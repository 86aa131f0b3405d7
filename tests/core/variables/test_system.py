"""system: variables — the clock, the platform and the host name."""

from __future__ import annotations

import socket
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

from sysprompt_core.variables import Missing, ResolveContext
from sysprompt_core.variables.system import SystemResolver

NOW = datetime(2026, 11, 22, 9, 15, 3, 123456, tzinfo=UTC)
PLUS_TWO = timezone(timedelta(hours=2))


def resolve(*names: str, now: datetime = NOW) -> dict[str, str | Missing]:
    return SystemResolver().resolve(names, ResolveContext(cwd=None, now=now))


@pytest.mark.parametrize(
    ("now", "name", "expected"),
    [
        (NOW, "time", "2026-11-22T09:15:03.123Z"),
        (NOW, "date", "2026-11-22"),
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "time", "2026-01-02T03:04:05.000Z"),
        (datetime(2026, 11, 22, 23, 59, 59, 999999, UTC), "time", "2026-11-22T23:59:59.999Z"),
        (datetime(2026, 11, 22, 23, 59, 59, 999999, UTC), "date", "2026-11-22"),
        (datetime(2026, 11, 23, 1, 0, 0, 5000, PLUS_TWO), "time", "2026-11-22T23:00:00.005Z"),
        (datetime(2026, 11, 23, 1, 0, 0, tzinfo=PLUS_TWO), "date", "2026-11-22"),
    ],
)
def test_system_clock_formats_utc(now: datetime, name: str, expected: str) -> None:
    assert resolve(name, now=now) == {name: expected}


def test_system_time_and_date_share_one_instant() -> None:
    before = datetime.now(UTC)
    values = SystemResolver().resolve(["time", "date"], ResolveContext(cwd=None))
    after = datetime.now(UTC)
    time, date = values["time"], values["date"]
    assert isinstance(time, str)
    assert isinstance(date, str)
    assert time.startswith(f"{date}T")
    stamp = datetime.strptime(time, "%Y-%m-%dT%H:%M:%S.%f%z")
    assert before - timedelta(milliseconds=1) <= stamp <= after


def test_system_os_is_sys_platform() -> None:
    assert resolve("os") == {"os": sys.platform}


def test_system_hostname_is_socket_hostname() -> None:
    assert resolve("hostname") == {"hostname": socket.gethostname()}


@pytest.mark.parametrize("name", ["nope", "Time", "time ", ""])
def test_system_unknown_name_is_missing(name: str) -> None:
    assert resolve(name) == {name: Missing("unknown variable")}


def test_system_context_with_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        ResolveContext(cwd=None, now=datetime(2026, 11, 22, 9, 15))

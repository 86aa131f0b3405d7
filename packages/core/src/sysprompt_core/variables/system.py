"""``system:`` variables: the clock and the machine the server runs on."""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from sysprompt_core.variables.registry import (
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    Value,
    VariableInfo,
)

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "system",
        "time",
        "The current UTC time in ISO 8601 with milliseconds, e.g. 2026-11-22T09:15:03.123Z.",
    ),
    VariableInfo("system", "date", "The current UTC date, e.g. 2026-11-22."),
    VariableInfo("system", "os", "The server's operating system: linux, darwin or win32."),
    VariableInfo("system", "hostname", "The host name of the machine the server runs on."),
)


def format_time(now: datetime) -> str:
    """``now`` in UTC as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (milliseconds truncated)."""
    utc = now.astimezone(UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def format_date(now: datetime) -> str:
    return f"{now.astimezone(UTC):%Y-%m-%d}"


def system_value(name: str, context: ResolveContext) -> Value:
    match name:
        case "time":
            return format_time(context.now)
        case "date":
            return format_date(context.now)
        case "os":
            return sys.platform
        case "hostname":
            return socket.gethostname()
        case _:
            return Missing("unknown variable")


class SystemResolver(Resolver):
    type = "system"

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def value(self, name: str, context: ResolveContext) -> Value:
        return system_value(name, context)


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(SystemResolver())

"""A Redis database of the test run's own (imported by tests/conftest.py).

``TEST_REDIS_URL`` names the Redis server the tests use (default
``redis://127.0.0.1:6379/0``), never the database on it: each pytest run claims an
empty database numbered 1 or above there, from the highest down, points
``TEST_REDIS_URL`` at it (the tests, their worker processes and pytest-xdist's
workers all read it from the environment) and empties it when the run ends. So the
tests never touch database 0, where a developer's own server keeps its queues, and
leave no ``rq:*`` key behind; two runs side by side (or nested, as the scripts' tests
run scripts/test) each have their own.

The claim is a key in the database (``CLAIM``: host and process id, so a database
whose claimant died on this host is taken over and emptied). A Redis that does not
answer is left as it is: the tests that need one fail on their own, saying so.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

import redis

CLAIM = "sysprompt-tests:claimed-by"
CLAIMED = "SYSPROMPT_TESTS_REDIS_CLAIMED"  # the URL claimed, for the run's own workers
DEFAULT_URL = "redis://127.0.0.1:6379/0"


class NoFreeDatabase(Exception):
    """Every database above 0 on the server holds something or is claimed."""


def with_database(url: str, number: int) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{number}", parts.query, parts.fragment))


def _claimant() -> str:
    return f"{socket.gethostname()} {os.getpid()}"


def _claimant_is_gone(value: bytes | None) -> bool:
    """Whether ``value`` names a process of this host that no longer runs."""
    if value is None:
        return False
    host, _, pid = value.decode(errors="replace").rpartition(" ")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _databases(server: redis.Redis) -> int:
    try:
        return int(server.config_get("databases").get("databases") or 16)
    except redis.ResponseError:  # CONFIG disabled: Redis's default
        return 16


def _take(server: redis.Redis) -> bool:
    """Claim the server's current database if it is free (or its claimant is gone)."""
    if server.set(CLAIM, _claimant(), nx=True):
        if server.dbsize() == 1:
            return True
        server.delete(CLAIM)  # someone else's data: not ours to empty
        return False
    with server.pipeline() as pipe:
        try:
            pipe.watch(CLAIM)  # type: ignore[no-untyped-call]
            value = pipe.get(CLAIM)
            if not _claimant_is_gone(value.encode() if isinstance(value, str) else value):
                return False
            pipe.multi()
            pipe.flushdb()
            pipe.set(CLAIM, _claimant())
            pipe.execute()
        except redis.WatchError:
            return False
    return True


def _release(server: redis.Redis) -> None:
    """Empty the claimed database (the claim goes with it)."""
    try:
        server.flushdb()
    finally:
        server.close()


def claim(environ: os._Environ[str] | dict[str, str]) -> Callable[[], None] | None:
    """Point ``TEST_REDIS_URL`` in ``environ`` at a database of this run's own; the
    function that empties it at the end, or None when there is nothing to do (a worker
    of a run that claimed already, or no Redis answering)."""
    url = environ.get("TEST_REDIS_URL", DEFAULT_URL)
    if environ.get(CLAIMED) == url:
        return None
    try:
        first = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        first.ping()
        count = _databases(first)
        first.close()
    except (redis.ConnectionError, redis.TimeoutError):
        return None
    for number in range(count - 1, 0, -1):
        server = redis.Redis.from_url(
            with_database(url, number), socket_timeout=10, socket_connect_timeout=5
        )
        if _take(server):
            claimed = with_database(url, number)
            environ["TEST_REDIS_URL"] = environ[CLAIMED] = claimed
            return functools.partial(_release, server)
        server.close()
    raise NoFreeDatabase(
        f"No free Redis database on {url}: each of 1-{count - 1} holds keys or belongs to "
        "another test run. Empty one (redis-cli -n N flushdb) or raise `databases`."
    )

"""The tests' Redis (tests/redis_database.py): a pytest run is given a database of its
own on the server ``TEST_REDIS_URL`` names — never database 0, where a developer's own
server keeps its queues — and empties it when it ends, so no ``rq:*`` key is left
anywhere. Runs a real pytest on the probe (redis_probe.py), which enqueues a job and
leaves it, against the Redis the suite itself uses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import redis

from tests import redis_database
from tests.redis_database import CLAIMED, with_database

REPO = Path(__file__).resolve().parents[2]
PROBE = "tests/scripts/redis_probe.py"


def _run_probe(tmp_path: Path, url: str, **extra: str) -> tuple[str, str]:
    """pytest on the probe with ``TEST_REDIS_URL=url``; the queue it used and the URL
    the probe was given."""
    queue = f"sysprompt-probe-{uuid.uuid4().hex[:12]}"
    log = tmp_path / f"{queue}.log"
    env = {key: value for key, value in os.environ.items() if key != CLAIMED}
    env |= {
        "TEST_REDIS_URL": url,
        "SYSPROMPT_PROBE_QUEUE": queue,
        "SYSPROMPT_PROBE_LOG": str(log),
        **extra,
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", PROBE, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return queue, log.read_text()


def _keys_naming(server: redis.Redis, queue: str) -> list[bytes]:
    """Keys whose name or (for RQ's sets of queues) members name ``queue``."""
    found = list(server.scan_iter(f"*{queue}*"))
    found += [b"rq:queues" for member in server.smembers("rq:queues") if queue in str(member)]
    return found


def test_run_uses_a_database_of_its_own_and_leaves_no_rq_keys_in_database_0(
    tmp_path: Path,
) -> None:
    server_url = with_database(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0"), 0)

    queue, given = _run_probe(tmp_path, server_url)

    number = int(urlsplit(given).path.lstrip("/"))
    assert number != 0, given
    assert with_database(given, 0) == server_url
    with redis.Redis.from_url(server_url) as database_0:
        assert _keys_naming(database_0, queue) == []
    with redis.Redis.from_url(given) as own:
        assert _keys_naming(own, queue) == []
        assert own.get("sysprompt-tests:claimed-by") is None  # released


def test_runs_side_by_side_get_different_databases(tmp_path: Path) -> None:
    # This very run holds a database: a second run on the same server gets another.
    ours = os.environ["TEST_REDIS_URL"]

    _, given = _run_probe(tmp_path, with_database(ours, 0))

    assert given != ours


def test_database_whose_claimant_died_is_taken_over_and_emptied() -> None:
    server = with_database(os.environ["TEST_REDIS_URL"], 0)
    first: dict[str, str] = {"TEST_REDIS_URL": server}
    release = redis_database.claim(first)
    assert release is not None
    dead = subprocess.Popen(["true"])
    dead.wait()
    with redis.Redis.from_url(first["TEST_REDIS_URL"]) as database:
        # As a run killed with SIGKILL leaves it: its claim and a job of its tests.
        database.set(redis_database.CLAIM, f"{socket.gethostname()} {dead.pid}")
        database.set("rq:job:left-behind", "x")

        second: dict[str, str] = {"TEST_REDIS_URL": server}
        release_again = redis_database.claim(second)
        assert release_again is not None
        try:
            assert second["TEST_REDIS_URL"] == first["TEST_REDIS_URL"]
            assert database.get("rq:job:left-behind") is None
            ours = f"{socket.gethostname()} {os.getpid()}"
            assert database.get(redis_database.CLAIM) == ours.encode()
        finally:
            release_again()
        assert database.dbsize() == 0

"""``/mcp`` on PostgreSQL, as production runs it: gunicorn from ``gunicorn.conf.py`` on
a fresh database next to the test run's (``DATABASE_URL``; skipped on SQLite), with
``CONN_MAX_AGE`` keeping connections between requests.

The MCP layer calls the backend from a worker thread of each request's event loop;
the backend hands the work back to the request's thread, so the server holds one
connection per gunicorn thread at most, however many MCP calls it answered. A call
that kept a connection of its own on a worker thread would leave them piling up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import anyio
import psycopg
import pytest

from benchmarks._support import postgres_database
from tests.client.isolated import run_isolated
from tests.mcp.served import Deployment, Server, deploy, gunicorn, mcp_session

ADMIN_URL = os.environ.get("DATABASE_URL", "")
THREADS = 4

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="a gunicorn server process"),
    pytest.mark.skipif(
        not ADMIN_URL.startswith(("postgres://", "postgresql://")),
        reason="PostgreSQL (DATABASE_URL) only",
    ),
]


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with postgres_database(ADMIN_URL) as database:
        yield database.url


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, database_url: str) -> Deployment:
    return deploy(tmp_path_factory.mktemp("mcp-postgres"), database_url)


@pytest.fixture(scope="module")
def server(deployment: Deployment) -> Iterator[Server]:
    with gunicorn(
        deployment, "postgres", CONN_MAX_AGE="600", GUNICORN_THREADS=str(THREADS)
    ) as running:
        yield running


def server_connections(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_mcp_calls_use_the_request_threads_connections(
    server: Server, deployment: Deployment, database_url: str
) -> None:
    async def calls(index: int) -> None:
        host = ("host-a", "host-b")[index % 2]
        arguments = {"conversation_id": f"mcp-pg-{index}", "cwd": deployment.cwd}
        async with mcp_session(server, deployment.tokens[host]) as session:
            for _ in range(5):
                prompt = await session.call_tool("get_system_prompt", arguments)
                assert not prompt.is_error, prompt.content
                listed = await session.call_tool("list_fragments", {})
                assert not listed.is_error, listed.content

    async def burst() -> None:
        async with anyio.create_task_group() as group:
            for index in range(8):
                group.start_soon(calls, index)

    run_isolated(burst())

    held = server_connections(database_url)
    assert 1 <= held <= THREADS

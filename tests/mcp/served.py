"""A real deployment for the ``/mcp`` tests: gunicorn started from the checkout's
``gunicorn.conf.py`` (threaded WSGI workers, DEBUG off) on a SQLite file of its own,
with agent hosts, a prompt author and a fragment made through the app's services; and
the official MCP SDK's Streamable HTTP client to talk to it."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT = 120
START_TIMEOUT = 60
LISTENING = re.compile(rb"Listening at: http://127\.0\.0\.1:(\d+)")
_DROPPED = ("DATABASE_URL", "GUNICORN_CMD_ARGS", "PORT", "SYSPROMPT_MCP_WRITE")

SETUP = """
import json, os
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from sysprompt.accounts import services
from sysprompt.library import services as library
services.groups_ensure()
author = get_user_model().objects.create_user("author")
author.groups.add(Group.objects.get(name=services.PROMPT_AUTHORS_GROUP))
library.variant_save(name="greeting", text="Hello from the library.", author=author)
library.variant_save(
    name="greeting", provider="openai", text="Hello, OpenAI models.", author=author
)
library.variant_save(
    name="outer", text="Outer for [prompt:model]: [fragment:greeting]", author=author
)
tokens = {name: services.agent_host_create(name=name).token for name in ("host-a", "host-b")}
tokens["author"] = Token.objects.create(user=author).key
print(json.dumps(tokens))
"""


@dataclass(frozen=True)
class Deployment:
    env: dict[str, str]
    folder: Path
    cwd: str
    tokens: dict[str, str]


@dataclass(frozen=True)
class Server:
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def deploy(folder: Path, database_url: str | None = None) -> Deployment:
    """A migrated database with host-a, host-b (agent hosts), author (a prompt author)
            the fragment ``greeting`` (a default and an ``openai`` variant) and ``outer``, which
        includes it. ``database_url``: another database than a SQLite file in ``folder``
    (an empty PostgreSQL database)."""
    import json

    root = folder / "root"
    cwd = root / "project"
    cwd.mkdir(parents=True)
    (cwd / "AGENTS.md").write_text("Served over MCP.\n")
    env = {key: value for key, value in os.environ.items() if key not in _DROPPED}
    env |= {
        "DEBUG": "false",
        "SECRET_KEY": "mcp-tests-only-not-a-secret",
        "DATABASE_URL": database_url or f"sqlite:///{folder / 'db.sqlite3'}",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SYSPROMPT_ALLOWED_ROOTS": str(root),
        "GUNICORN_BIND": "127.0.0.1:0",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "4",
        "PYTHONUNBUFFERED": "1",
    }
    manage(env, "migrate", "--noinput", "--verbosity", "0")
    tokens = json.loads(manage(env, "shell", "--no-imports", "-c", SETUP).strip().splitlines()[-1])
    return Deployment(env=env, folder=folder, cwd=str(cwd), tokens=tokens)


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=15)
            break
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def gunicorn(deployment: Deployment, name: str, **extra: str) -> Iterator[Server]:
    """``python -m gunicorn`` in the checkout (it reads ``gunicorn.conf.py``), in a
    process group of its own, stopped with it."""
    log = deployment.folder / f"{name}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn"],
            cwd=REPO,
            env={**deployment.env, **extra},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (found := LISTENING.search(log.read_bytes())):
            assert process.poll() is None, f"gunicorn exited:\n{log.read_text(errors='replace')}"
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.1)
        yield Server(port=int(found.group(1)), log=log)
    finally:
        _stop(process)


@contextlib.asynccontextmanager
async def mcp_session(
    server: Server, token: str | None, **headers: str
) -> AsyncIterator[ClientSession]:
    """The SDK's Streamable HTTP client, initialized, sending ``token`` as a bearer
    token (none: no Authorization header)."""
    sent = dict(headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with (
        create_mcp_http_client(headers=sent) as http,
        streamable_http_client(server.mcp, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session

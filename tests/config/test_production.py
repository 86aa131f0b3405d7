"""Production serving: a real gunicorn started from gunicorn.conf.py with DEBUG off,
static files collected and served by whitenoise, and the health endpoint, talked to over
HTTP with the standard library only. Every step has a timeout; each server's process
group is killed at teardown.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT = 180  # collectstatic compresses every file on a 2-core machine
START_TIMEOUT = 30
STOP_TIMEOUT = 15
HTTP_TIMEOUT = 30
LISTENING = re.compile(rb"Listening at: http://127\.0\.0\.1:(\d+)")
ONE_YEAR = 365 * 24 * 3600

# Variables of the test run's own environment that must not reach the servers.
_DROPPED = ("DATABASE_URL", "GUNICORN_CMD_ARGS", "SECURE_PROXY_SSL_HEADER", "PORT")


@dataclass(frozen=True)
class Deployment:
    """A deployed checkout: collected static files, a migrated database, an API token."""

    env: dict[str, str]
    static_root: Path
    token: str
    logs: Path


@dataclass(frozen=True)
class Server:
    port: int
    log: Path


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def _environment(database_url: str, static_root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _DROPPED}
    return env | {
        "DEBUG": "false",
        "SECRET_KEY": "production-test-key-not-a-secret",
        "DATABASE_URL": database_url,
        "STATIC_ROOT": str(static_root),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GUNICORN_BIND": "127.0.0.1:0",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "2",
    }


def _manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)}:\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    tmp = tmp_path_factory.mktemp("deployment")
    static_root = tmp / "static"
    env = _environment(f"sqlite:///{tmp / 'db.sqlite3'}", static_root)
    _manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    _manage(env, "migrate", "--noinput", "--verbosity", "0")
    token = _manage(env, "create_agent_host", "health-probe").splitlines()[-1]
    return Deployment(env=env, static_root=static_root, token=token, logs=tmp)


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=STOP_TIMEOUT)
            break
        except subprocess.TimeoutExpired:
            continue
    process.wait(timeout=STOP_TIMEOUT)


def _port(process: subprocess.Popen[bytes], log: Path) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if found := LISTENING.search(log.read_bytes()):
            return int(found.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    pytest.fail(f"gunicorn did not start:\n{log.read_text(errors='replace')}")


@contextmanager
def _gunicorn(env: dict[str, str], log: Path) -> Iterator[Server]:
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn"],  # reads ./gunicorn.conf.py
            cwd=REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield Server(port=_port(process, log), log=log)
        finally:
            _stop(process)


@pytest.fixture(scope="module")
def server(deployment: Deployment) -> Iterator[Server]:
    with _gunicorn(deployment.env, deployment.logs / "gunicorn.log") as running:
        yield running


def _get(
    server: Server,
    path: str,
    headers: dict[str, str] | None = None,
    connection: http.client.HTTPConnection | None = None,
) -> Answer:
    conn = connection or http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_TIMEOUT)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    finally:
        if connection is None:
            conn.close()


def _token(token: str) -> dict[str, str]:
    return {"Authorization": f"Token {token}"}


def _max_age(cache_control: str) -> int:
    found = re.search(r"max-age=(\d+)", cache_control)
    assert found is not None, cache_control
    return int(found.group(1))


def _hashed(deployment: Deployment, name: str) -> str:
    manifest = json.loads((deployment.static_root / "staticfiles.json").read_text())
    hashed: str = manifest["paths"][name]
    assert hashed != name
    return hashed


# a healthy deployment


def test_health_answers_ok_when_token_valid(deployment: Deployment, server: Server) -> None:
    answer = _get(server, "/api/health", _token(deployment.token))

    assert answer.status == 200
    assert answer.json() == {"status": "ok", "database": "ok"}


def test_health_refuses_when_token_missing(server: Server) -> None:
    answer = _get(server, "/api/health")

    assert answer.status == 401
    assert "detail" in answer.json()


def test_static_hashed_file_cached_long_when_collected(
    deployment: Deployment, server: Server
) -> None:
    path = "/static/" + _hashed(deployment, "admin/css/base.css")

    answer = _get(server, path, {"Accept-Encoding": "gzip"})

    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/css")
    assert answer.headers["content-encoding"] == "gzip"
    assert "immutable" in answer.headers["cache-control"]
    assert _max_age(answer.headers["cache-control"]) >= ONE_YEAR


def test_static_unhashed_file_cached_briefly_when_collected(server: Server) -> None:
    answer = _get(server, "/static/admin/css/base.css")

    assert answer.status == 200
    assert "immutable" not in answer.headers["cache-control"]
    assert _max_age(answer.headers["cache-control"]) <= 3600


def test_admin_login_links_hashed_static_when_debug_off(
    deployment: Deployment, server: Server
) -> None:
    answer = _get(server, "/admin/login/")

    assert answer.status == 200
    assert f'"/static/{_hashed(deployment, "admin/css/base.css")}"'.encode() in answer.body


def test_connection_kept_alive_when_requests_follow(deployment: Deployment, server: Server) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_TIMEOUT)
    try:
        first = _get(server, "/api/health", _token(deployment.token), connection)
        socket_before = connection.sock
        second = _get(server, "/api/health", _token(deployment.token), connection)
        assert connection.sock is socket_before  # no reconnect in between
    finally:
        connection.close()

    assert (first.status, second.status) == (200, 200)
    assert first.headers.get("connection", "").lower() == "keep-alive"


def test_server_logs_no_traceback_when_serving(server: Server) -> None:
    assert b"Traceback" not in server.log.read_bytes()


# a database that cannot be reached


@pytest.mark.parametrize(
    "database_url",
    ["postgres://postgres@127.0.0.1:1/none", "sqlite:////nonexistent-dir/db.sqlite3"],
)
def test_health_answers_503_when_database_unreachable(
    deployment: Deployment, tmp_path: Path, database_url: str
) -> None:
    env = deployment.env | {"DATABASE_URL": database_url}

    with _gunicorn(env, tmp_path / "gunicorn.log") as running:
        answer = _get(running, "/api/health", _token("any-token-at-all"))

    assert answer.status == 503
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["retry-after"].isdigit()
    body = answer.json()
    assert isinstance(body, dict) and list(body) == ["detail"]
    assert b"Traceback" not in answer.body
    assert b"Traceback" not in running.log.read_bytes()


def _request(
    server: Server, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_TIMEOUT)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        conn.close()


# pages when the database cannot be reached: a small 503 page, never a traceback

PAGE_REQUESTS: list[tuple[str, str, dict[str, str], bytes]] = [
    ("GET", "/", {"Cookie": "sessionid=any-session-at-all"}, b""),
    ("GET", "/conversations/", {"Cookie": "sessionid=any-session-at-all"}, b""),
    (
        "POST",
        "/accounts/login/",
        {
            "Cookie": "csrftoken=" + "a" * 32,
            "X-CSRFToken": "a" * 32,
            "Content-Type": "application/x-www-form-urlencoded",
        },
        b"username=ada&password=secret",
    ),
]


@pytest.mark.parametrize(
    "database_url",
    ["postgres://postgres@127.0.0.1:1/none", "sqlite:////nonexistent-dir/db.sqlite3"],
)
def test_page_answers_503_when_database_unreachable(
    deployment: Deployment, tmp_path: Path, database_url: str
) -> None:
    env = deployment.env | {"DATABASE_URL": database_url}

    with _gunicorn(env, tmp_path / "gunicorn.log") as running:
        answers = [
            _request(running, method, path, body, headers)
            for method, path, headers, body in PAGE_REQUESTS
        ]
        log = running.log.read_bytes()

    for answer in answers:
        assert answer.status == 503, answer.body[:300]
        assert answer.headers["content-type"].startswith("text/html")
        assert answer.headers["retry-after"].isdigit()
        assert answer.headers["cache-control"] == "no-store"
        assert "default-src 'self'" in answer.headers["content-security-policy"]
        assert b"sysprompt is unavailable" in answer.body
        assert b'href="/static/css/app' in answer.body  # the app's own look
        assert b"Traceback" not in answer.body
    assert b"Traceback" not in log
    assert b"database unavailable" in log


# API errors over real HTTP (the WSGI stream, not the test client's body)


def test_api_errors_are_json_over_http(deployment: Deployment, server: Server) -> None:
    token = {**_token(deployment.token), "Content-Type": "application/json"}
    preview = "/api/system-prompt/preview"

    too_large = _request(
        server, "POST", preview, b'{"template": "' + b"x" * 3_000_000 + b'"}', token
    )
    too_deep = _request(server, "POST", preview, b"[" * 100_000, token)
    unknown = _request(server, "GET", "/api/nope", headers=token)
    wrong_method = _request(server, "PATCH", "/api/health", headers=token)

    for answer, status in [(too_large, 413), (too_deep, 400), (unknown, 404), (wrong_method, 405)]:
        assert answer.status == status, answer.body[:300]
        assert answer.headers["content-type"] == "application/json"
        assert list(answer.json()) == ["detail"]
        assert answer.headers["cache-control"] == "no-store"

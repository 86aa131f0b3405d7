"""Plumbing for ``api_load.py`` and ``client.py``: databases, a gunicorn server, one
served deployment of both (:func:`served`: a fresh database, migrated, a superuser's
token, gunicorn), the template with git and file variables both measure, wrk, a
keep-alive client.

Everything that starts a process or creates a database is a context manager, so the
benchmark's ``ExitStack`` stops and drops it again on success, error, Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import http.client
import json
import math
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GUNICORN = str(Path(PYTHON).with_name("gunicorn"))
WRK = "wrk"
GIT_IDENTITY = (
    *("-c", "user.name=Bench", "-c", "user.email=bench@example.com"),
    *("-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"),
)


class BenchmarkError(Exception):
    """Something the benchmark needs did not work; the message says what."""


def terminate_on_sigterm() -> None:
    """Turn SIGTERM and SIGHUP into SystemExit, and SIGINT into KeyboardInterrupt even
    when it was inherited as ignored (a background job), so every cleanup runs."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --- a real git repository ---------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return done.stdout


AGENTS_MD = (
    "# Working on this repository\n\n"
    + "".join(
        f"- Rule {n}: keep changes small, run the tests, explain the reason in the commit.\n"
        for n in range(1, 25)
    )
    + "\nUse tabs. Prefer small functions.\n"
)


def make_repo(path: Path) -> Path:
    """A repository of ~120 files in 6 commits on branch ``feature/bench``, with an
    AGENTS.md, three modified files, one staged file and two untracked files."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    for commit in range(5):
        for directory in range(4):
            folder = path / "src" / f"pkg{directory}"
            folder.mkdir(parents=True, exist_ok=True)
            for n in range(6):
                name = folder / f"module_{n}.py"
                name.write_text(f"# commit {commit}\n" + f"VALUE_{n} = {commit * n}\n" * 40)
        (path / "README.md").write_text(f"Project, revision {commit}\n")
        git(path, "add", "-A")
        git(path, "commit", "--quiet", "-m", f"commit {commit}")
    git(path, "checkout", "--quiet", "-b", "feature/bench")
    (path / "AGENTS.md").write_text(AGENTS_MD)
    git(path, "add", "AGENTS.md")
    git(path, "commit", "--quiet", "-m", "AGENTS.md")
    for n in range(3):
        (path / "src" / "pkg0" / f"module_{n}.py").write_text("# changed\n")
    (path / "src" / "pkg1" / "module_0.py").write_text("# staged\n")
    git(path, "add", "src/pkg1/module_0.py")
    (path / "notes.txt").write_text("untracked\n")
    (path / "src" / "scratch.py").write_text("untracked\n")
    git(path, "status", "--short")  # refresh the index once, as a developer's shell would
    return path


# --- databases -----------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    """A fresh benchmark database: ``label`` is sqlite or postgres."""

    label: str
    url: str


@contextlib.contextmanager
def sqlite_database(workdir: Path) -> Iterator[Database]:
    folder = Path(tempfile.mkdtemp(prefix="sqlite-", dir=workdir))
    yield Database("sqlite", f"sqlite:///{folder / 'db.sqlite3'}")


@contextlib.contextmanager
def postgres_database(admin_url: str, suffix: str = "") -> Iterator[Database]:
    """Create ``bench_sysprompt_<pid>`` (and ``_<suffix>``, for a second one at once)
    next to ``admin_url``'s database; drop it after."""
    name = f"bench_sysprompt_{os.getpid()}" + (f"_{suffix}" if suffix else "")
    parts = urllib.parse.urlsplit(admin_url)
    url = urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))
    try:
        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise BenchmarkError(f"cannot reach PostgreSQL at {admin_url}: {exc}") from exc
    with admin:
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        admin.execute(drop)
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield Database("postgres", url)
        finally:
            admin.execute(drop)


# --- the application -----------------------------------------------------------------


def server_env(database: Database, roots: Path) -> dict[str, str]:
    """The production-like environment: DEBUG off, a secret key, the bench database."""
    ours = ("SYSPROMPT_", "DJANGO_", "GUNICORN_", "WEB_CONCURRENCY", "CONN_MAX_AGE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update(
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(40),
        DATABASE_URL=database.url,
        SYSPROMPT_ALLOWED_ROOTS=str(roots),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        PYTHONDONTWRITEBYTECODE="1",
        SYSPROMPT_ENV_FILE="",  # the tree measured, not a developer's .env
    )
    return env


BENCH_USERNAME = "bench"
"""The superuser whose token the load runs with; it owns the conversations."""
CREATE_USER = f"""
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
user = get_user_model().objects.create_superuser(
    username="{BENCH_USERNAME}", email="", password=None
)
print(Token.objects.create(user=user).key)
"""


def run(argv: list[str], env: Mapping[str, str], what: str) -> str:
    done = subprocess.run(argv, cwd=ROOT, env=dict(env), capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchmarkError(f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def prepare(env: Mapping[str, str]) -> str:
    """Migrate the database, create a superuser with an API token; return the token."""
    manage = [PYTHON, "manage.py"]
    run([*manage, "migrate", "--noinput"], env, "manage.py migrate")
    output = run([*manage, "shell", "--no-imports", "-c", CREATE_USER], env, "creating the user")
    token = output.strip().splitlines()[-1] if output.strip() else ""
    if len(token) != 40:
        raise BenchmarkError(f"unexpected token output: {token!r}")
    return token


def database_arguments(parser: argparse.ArgumentParser) -> None:
    """``--database sqlite|postgres|both`` and ``--postgres-url``, as every in-process
    benchmark takes them."""
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )


def measured_per_database(
    args: argparse.Namespace, argv: Sequence[str], *, work: Path, roots: Path
) -> Iterator[tuple[str, Any]]:
    """For each database ``args`` names (:func:`database_arguments`): a fresh one,
    migrated (:func:`prepare`), ``argv`` run with its environment, and the JSON its
    last line of output prints, with the database's label."""
    kinds = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    for kind in kinds:
        with contextlib.ExitStack() as stack:
            database = stack.enter_context(
                sqlite_database(work) if kind == "sqlite" else postgres_database(args.postgres_url)
            )
            env = server_env(database, roots)
            prepare(env)
            output = run([*argv], env, "the in-process measurement")
            yield kind, json.loads(output.strip().splitlines()[-1])


@dataclass(frozen=True)
class Server:
    port: int
    token: str
    log: Path
    pgid: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def gunicorn(
    env: Mapping[str, str],
    token: str,
    *,
    workers: int,
    threads: int,
    log: Path,
    checkout: Path = ROOT,
    prefix: Sequence[str] = (),
) -> Iterator[Server]:
    """gunicorn with gthread workers, in its own process group; stopped with the group.
    ``checkout``: the source tree to serve (another one than this, e.g. an older commit
    unpacked with ``git archive``, to measure it with the same benchmark). ``prefix``:
    a command that runs gunicorn (it ends by executing its arguments)."""
    port = free_port()
    # Our own (empty) config file, so that the checkout's gunicorn.conf.py, which
    # gunicorn would read from the working directory, does not change what is measured.
    config = log.with_suffix(".conf.py")
    config.write_text("# api_load.py passes every setting on the command line\n")
    argv = [
        *prefix,
        GUNICORN,
        f"--config={config}",
        "config.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        f"--workers={workers}",
        "--worker-class=gthread",
        f"--threads={threads}",
        "--keep-alive=30",  # the construct client pauses between requests
        "--graceful-timeout=3",
        "--no-control-socket",  # gunicorn 27's default socket is shared by every server
        f"--error-logfile={log}",
        "--log-level=warning",
    ]
    with log.open("ab") as out:
        if checkout != ROOT:
            sources = [checkout, *(checkout / "packages" / p / "src" for p in ("core", "client"))]
            env = {**env, "PYTHONPATH": os.pathsep.join(map(str, sources))}
        process = subprocess.Popen(
            argv,
            cwd=checkout,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        server = Server(port=port, token=token, log=log, pgid=process.pid)
        _wait_ready(server, process)
        yield server
    finally:
        stop_group(process)


def stop_group(process: subprocess.Popen[Any], grace: float = 8.0) -> None:
    """SIGTERM the process group (gunicorn's graceful stop), SIGKILL what outlives it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _wait_ready(server: Server, process: subprocess.Popen[bytes], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchmarkError(f"gunicorn exited ({process.returncode}):\n{tail(server.log)}")
        with contextlib.suppress(OSError, http.client.HTTPException), Client(server) as client:
            if client.request("GET", "/api/health")[0] == 200:
                return
        time.sleep(0.1)
    raise BenchmarkError(f"gunicorn did not answer within {timeout:g}s:\n{tail(server.log)}")


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class Client:
    """One keep-alive HTTP/1.1 connection carrying the API token."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        self.headers = {
            "Authorization": f"Token {server.token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, payload, self.headers)
                response = self.connection.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.connection.close()  # the server closed an idle connection: reconnect
                if attempt == 2:
                    raise
        return response.status, json.loads(data) if data else None

    def expect(self, status: set[int], method: str, path: str, body: Any = None) -> Any:
        code, data = self.request(method, path, body)
        if code not in status:
            raise BenchmarkError(f"{method} {path} answered {code}: {data}")
        return data


class RawRequest:
    """One prepared request, sent again and again on a keep-alive socket with the least
    client work (no header parsing beyond the status and Content-Length), so that a
    timing is the server's. http.client adds about 0.4 ms a request here."""

    def __init__(self, server: Server, method: str, path: str, body: Any = None) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Token {server.token}\r\nAccept: application/json\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        self.request = head.encode() + payload
        self.what = f"{method} {path}"
        self.socket = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def __enter__(self) -> RawRequest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.socket.close()

    def send(self) -> tuple[int, bytes]:
        """Send the request; the answer's status and body."""
        self.socket.sendall(self.request)
        data = b""
        while b"\r\n\r\n" not in data:
            data += self._receive()
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in lines
                if line.lower().startswith(b"content-length:")
            ),
            None,
        )
        if length is None:
            raise BenchmarkError(f"{self.what}: an answer without Content-Length")
        while len(body) < length:
            body += self._receive()
        return int(lines[0].split()[1]), body

    def _receive(self) -> bytes:
        chunk = self.socket.recv(1 << 16)
        if not chunk:
            raise BenchmarkError(f"{self.what}: the server closed the connection")
        return chunk


# --- one served deployment ------------------------------------------------------------


def say(message: str) -> None:
    """Progress, on stderr, so that stdout holds only the report."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Deployment:
    """A fresh database, migrated, and gunicorn serving it: ``server.token`` is the
    superuser's; ``env`` is the server's environment (for ``manage.py`` commands and
    in-process measurements on the same database)."""

    database: Database
    env: dict[str, str]
    server: Server


@contextlib.contextmanager
def served(
    label: str,
    *,
    workdir: Path,
    roots: Path,
    postgres_url: str,
    workers: int,
    threads: int,
) -> Iterator[Deployment]:
    """A fresh ``label`` database (sqlite: a file in ``workdir``; postgres: one created
    next to ``postgres_url``), migrated, a superuser with a token, and gunicorn on it
    (``SYSPROMPT_ALLOWED_ROOTS`` = ``roots``; its log ``workdir/gunicorn-<label>.log``);
    stopped and dropped on exit."""
    with contextlib.ExitStack() as stack:
        if label == "sqlite":
            database = stack.enter_context(sqlite_database(workdir))
        else:
            database = stack.enter_context(postgres_database(postgres_url))
        say(f"{label}: migrating {database.url}")
        env = server_env(database, roots)
        token = prepare(env)
        log = workdir / f"gunicorn-{label}.log"
        server = stack.enter_context(
            gunicorn(env, token, workers=workers, threads=threads, log=log)
        )
        yield Deployment(database, env, server)


def database_version(database: Database) -> str:
    if database.label == "sqlite":
        return f"SQLite {sqlite3.sqlite_version}"
    with psycopg.connect(database.url) as connection:
        row = connection.execute("SHOW server_version").fetchone()
    return f"PostgreSQL {row[0].split()[0] if row else '?'}"


GIT_TEMPLATE_EXTRA = (
    "Branch: [git:branch]\nStatus:\n[git:status]\nInstructions:\n[file:AGENTS.md]\n"
)
"""What both benchmarks add to the default template: git and file variables."""
GIT_PROMPT_PARTS = (
    "Branch: feature/bench\n",
    " M src/pkg0/module_0.py",
    "?? notes.txt",
    "Use tabs.",
)
"""What the prompt of that template holds in :func:`make_repo`'s repository."""


def save_git_template(server: Server) -> None:
    """Save the current template plus :data:`GIT_TEMPLATE_EXTRA` (as the superuser)."""
    with Client(server) as admin:
        current = admin.expect({200}, "GET", "/api/system-prompt")
        body = {"template": current["template"] + GIT_TEMPLATE_EXTRA}
        admin.expect({200}, "PUT", "/api/system-prompt", body)


def git_prompt_check(prompt: str | None, what: str = "the constructed prompt") -> str:
    """``prompt``, when the git and file variables really resolved (a git that fails is
    fast); else :class:`BenchmarkError`."""
    text = prompt or ""
    missing = [part for part in GIT_PROMPT_PARTS if part not in text]
    if missing:
        raise BenchmarkError(f"{what} lacks {missing}:\n{prompt}")
    return text


# --- wrk -----------------------------------------------------------------------------

LUA = """
-- Generated by benchmarks/api_load.py.
local method = %(method)s
local before, after = %(before)s, %(after)s
local first, last = %(first)d, %(last)d
local headers = {["Authorization"] = %(authorization)s, ["Content-Type"] = "application/json"}
local body = %(body)s
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("number", #threads)
end

-- Every request is formatted once, here: the per-request client work (one random pick)
-- is then the same for every endpoint, and small, on a machine whose 2 cores wrk shares
-- with the server.
function init(args)
  math.randomseed(7919 * number + 17)
  bad, bad_example = 0, ""
  prepared = {}
  if last < first then
    prepared[1] = wrk.format(method, before, headers, body)
  else
    for i = first, last do
      prepared[#prepared + 1] = wrk.format(method, before .. i .. after, headers, body)
    end
  end
  count = #prepared
end

function request()
  return prepared[math.random(count)]
end

function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if bad_example == "" then bad_example = status .. " " .. string.sub(body, 1, 160) end
  end
end

function done(summary, latency, requests)
  local bad, example = 0, ""
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("bad")
    if example == "" then example = thread:get("bad_example") end
  end
  local e = summary.errors
  io.write(string.format(
    "WRK-RESULT %%d %%d %%d %%d %%d %%d %%d %%d %%.1f %%.1f %%.1f %%.1f\\n",
    summary.requests, summary.duration, bad, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
  io.write("WRK-BAD " .. example:gsub("\\n", " ") .. "\\n")
end
"""


def lua_string(text: str) -> str:
    """A Lua string literal (JSON's escapes are valid Lua escapes for this text)."""
    if any(ord(c) > 126 for c in text):
        raise ValueError("keep Lua literals ASCII")
    return json.dumps(text)


@dataclass(frozen=True)
class Load:
    """What wrk sends: ``before + n + after`` for n random in first..last, or a fixed path
    when ``last < first``."""

    method: str
    before: str
    after: str = ""
    first: int = 1
    last: int = 0
    body: str | None = None

    def script(self, token: str) -> str:
        return LUA % {
            "method": lua_string(self.method),
            "before": lua_string(self.before),
            "after": lua_string(self.after),
            "first": self.first,
            "last": self.last,
            "authorization": lua_string(f"Token {token}"),
            "body": "nil" if self.body is None else lua_string(self.body),
        }


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    non_2xx: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float
    bad_example: str
    app_cpu_ms: float = math.nan  # CPU of the gunicorn processes per request
    db_cpu_ms: float = math.nan  # CPU of the PostgreSQL backends per request

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def wrk(
    server: Server,
    load: Load,
    *,
    duration: int,
    connections: int,
    threads: int,
    workdir: Path,
    meter: CpuMeter | None = None,
) -> WrkResult:
    """Run wrk against ``server`` for ``duration`` seconds and parse its ``done()`` line."""
    script = workdir / "load.lua"
    script.write_text(load.script(server.token))
    argv = [
        WRK,
        f"--threads={min(threads, connections)}",
        f"--connections={connections}",
        f"--duration={duration}s",
        "--timeout=30s",
        f"--script={script}",
        server.url,
    ]
    before = meter.snapshot() if meter else None
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=duration + 60)
    finally:
        if process.poll() is None:
            stop_group(process, grace=1)
    result = _parse_wrk(out, err, process.returncode)
    if meter and before:
        app, db = meter.per_request(before, meter.snapshot(), result.requests)
        result = dataclasses.replace(result, app_cpu_ms=app, db_cpu_ms=db)
    return result


def _parse_wrk(out: str, err: str, returncode: int) -> WrkResult:
    lines = out.splitlines()
    result = next((line.split() for line in lines if line.startswith("WRK-RESULT ")), None)
    if returncode != 0 or result is None:
        raise BenchmarkError(f"wrk failed ({returncode}):\n{out}{err}")
    requests, micros, bad, connect, read, write, _status, timeout = (int(x) for x in result[1:9])
    p50, p99, mean, peak = (float(x) / 1000 for x in result[9:13])
    example = next((line[8:] for line in lines if line.startswith("WRK-BAD ")), "")
    return WrkResult(
        requests=requests,
        seconds=micros / 1e6,
        non_2xx=bad,
        socket_errors=connect + read + write + timeout,
        p50_ms=p50,
        p99_ms=p99,
        mean_ms=mean,
        max_ms=peak,
        bad_example=example.strip(),
    )


# --- the peer: one git status --short process ----------------------------------------

# What the git: values reproduce in-process; the benchmark's peer stays this one process.
GIT_STATUS = ("git", "--no-optional-locks", "status", "--short")
_REPOSITORY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


def git_status_seconds(repo: Path) -> float:
    """Seconds for one ``git --no-optional-locks status --short`` process, started without
    a shell, with stdin and stderr closed."""
    env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_ENV}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    start = time.perf_counter()
    process = subprocess.Popen(
        GIT_STATUS,
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,
    )
    output, _ = process.communicate(timeout=60)
    elapsed = time.perf_counter() - start
    if process.returncode != 0 or not output:
        raise BenchmarkError(f"git status failed in {repo} ({process.returncode})")
    return elapsed


# --- CPU accounting (Linux /proc) -----------------------------------------------------

Snapshot = tuple[dict[int, float], dict[int, float]]


def process_cpu(pids: Iterable[int]) -> dict[int, float]:
    """User + system CPU seconds of each live process among ``pids``."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone
        seconds[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def group_members(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` (gunicorn's master and workers)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid:
                members.append(int(entry.name))
    return members


class CpuMeter:
    """CPU per request of the server's processes and of its PostgreSQL backends.

    Less sensitive than throughput to other work on the machine: it says where the
    cores go. The backends are found in ``pg_stat_activity`` of the benchmark database.
    """

    def __init__(self, server: Server, database_url: str | None) -> None:
        self.pgid = server.pgid
        self.connection = psycopg.connect(database_url, autocommit=True) if database_url else None
        self.enabled = os.path.exists("/proc/self/stat")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()

    def _backends(self) -> list[int]:
        if self.connection is None:
            return []
        rows = self.connection.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        return [int(row[0]) for row in rows]

    def snapshot(self) -> Snapshot:
        if not self.enabled:
            return {}, {}
        return process_cpu(group_members(self.pgid)), process_cpu(self._backends())

    def per_request(self, before: Snapshot, after: Snapshot, requests: int) -> tuple[float, float]:
        """Milliseconds of CPU per request, of the app and of the database backends."""
        if not self.enabled or requests == 0:
            return math.nan, math.nan
        app, db = (
            sum(cpu - start.get(pid, 0.0) for pid, cpu in end.items())
            for start, end in zip(before, after, strict=True)
        )
        return app * 1000 / requests, (db * 1000 / requests if self.connection else math.nan)


# --- memory of a process group (Linux /proc) ------------------------------------------


def resident_bytes(pid: int) -> int:
    """``VmRSS`` of ``pid`` in bytes (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def group_resident(pgid: int) -> dict[int, int]:
    """Resident bytes of each process of process group ``pgid`` (a server started with
    ``start_new_session``: gunicorn's master, its workers and their git readers)."""
    return {pid: resident_bytes(pid) for pid in group_members(pgid)}


class ResidentSampler:
    """The peak of a process group's summed resident memory, sampled every ``every``
    seconds in a thread while the ``with`` block runs (short-lived processes, such as a
    git reader killed at its deadline, are seen while they live)."""

    def __init__(self, pgid: int, every: float = 0.01) -> None:
        self.pgid = pgid
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(group_resident(self.pgid).values()))
            self._stop.wait(self.every)

    def __enter__(self) -> ResidentSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def untracked_repository(path: Path, files: int, per_directory: int = 100) -> Path:
    """A repository with one commit and ``files`` untracked files in folders of
    ``per_directory``, all listed one by one (``status.showUntrackedFiles=all``): a
    status as large as a repository of that many files can make."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "README").write_text("huge\n")
    git(path, "add", "README")
    git(path, "commit", "--quiet", "-m", "first")
    git(path, "config", "status.showUntrackedFiles", "all")
    for number in range(files):
        folder = path / f"d{number // per_directory:05}"
        if number % per_directory == 0:
            folder.mkdir()
        (folder / f"untracked-file-{number % per_directory:04}.txt").touch()
    return path

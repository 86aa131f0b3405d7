"""scripts/test when nothing answers at the test URLs: it starts a throwaway PostgreSQL
and Redis (Debian's packages, as an unprivileged user when root), runs the tests
against them, and stops and removes both afterwards — after a pass, a failure and a
Ctrl-C alike. Runs the real script with a one-test selection (servers_probe.py) and
both URLs at closed ports. Each pass runs in pytest-xdist's worker processes, as a full
run does."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.redis_database import with_database

REPO = Path(__file__).resolve().parents[2]
PROBE = "tests/scripts/servers_probe.py"
STARTED = re.compile(r"Started a throwaway (PostgreSQL|Redis) on 127\.0\.0\.1:(\d+) in (\S+)")
RUN_TIMEOUT = 600
"""The script starts PostgreSQL and Redis, then pytest twice: minutes on a loaded 2-core
machine; a run ends as soon as it is done, so only a hung one waits this long."""


def _packages_missing() -> str | None:
    """Why the Debian packages cannot be present here, or None."""
    if shutil.which("dpkg") is None:
        return "not Debian (no dpkg): Debian's postgresql and redis-server cannot be installed"
    present = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) and bool(
        shutil.which("redis-server")
    )
    if not present and os.geteuid() != 0:
        return "postgresql or redis-server is not installed, and installing needs root"
    return None


pytestmark = pytest.mark.skipif(_packages_missing() is not None, reason=str(_packages_missing()))


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass(frozen=True)
class Started:
    kind: str
    port: int
    folder: Path


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    return env | {
        "TEST_POSTGRES_URL": f"postgres://postgres@127.0.0.1:{closed_port()}/postgres",
        "TEST_REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0",
        "SYSPROMPT_PROBE_LOG": str(tmp_path / "probe.log"),
        "TEST_DATABASES": "sqlite postgres",  # not the outer run's choice
        "TEST_WORKERS": "2",  # in worker processes, as a full run; the probe is one test
        **extra,
    }


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


AS_IN_A_TERMINAL = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
)
"""Runs a command with Ctrl-C's signal at its default, as a terminal's shell starts a job:
a suite started in the background by a non-interactive shell ignores SIGINT, and an
ignored signal is inherited across exec — bash may then not trap it (a run under two
CPU burners, started so, failed the Ctrl-C test for that reason alone)."""


def run_script(env: dict[str, str], *, interrupt_when: Path | None = None) -> Run:
    """scripts/test with the probe, in a session of its own; with ``interrupt_when``,
    Ctrl-C (SIGINT to the whole group, as a terminal sends it) once that file exists.
    Should it not end in time, it is killed and the servers it announced are stopped
    with the script's own clean-up before the test fails."""
    process = subprocess.Popen(
        [*AS_IN_A_TERMINAL, "bash", "scripts/test", PROBE, "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + RUN_TIMEOUT
    try:
        if interrupt_when is not None:
            while not interrupt_when.exists() and process.poll() is None:
                assert time.monotonic() < deadline, "the probe never started waiting"
                time.sleep(0.1)
            os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=30)
        reap(started(stderr))
        raise
    return Run(process.returncode, stdout, stderr)


def reap(servers: dict[str, Started]) -> None:
    """Stop and remove what a killed run left, as scripts/test itself would."""
    folders = " ".join(f"'{server.folder}'" for server in servers.values())
    subprocess.run(
        [
            "bash",
            "-c",
            "source scripts/_install; source scripts/_servers; "
            f"SYSPROMPT_SERVER_DIRS=({folders}); sysprompt_servers_stop",
        ],
        cwd=REPO,
        timeout=60,
        check=False,
    )


def started(stderr: str) -> dict[str, Started]:
    return {
        kind: Started(kind, int(port), Path(folder))
        for kind, port, folder in STARTED.findall(stderr)
    }


def answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def running_in(folder: Path) -> list[str]:
    """Command lines of processes that name ``folder``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in text:
            found.append(text)
    return found


def assert_gone(servers: dict[str, Started]) -> None:
    for server in servers.values():
        assert not server.folder.exists(), f"{server.kind} left {server.folder}"
        assert not answers(server.port), f"{server.kind} still answers on {server.port}"
        assert running_in(server.folder) == [], f"{server.kind} still runs"


def test_script_starts_throwaway_servers_and_removes_them(tmp_path: Path) -> None:
    run = run_script(environment(tmp_path))

    assert run.returncode == 0, run.stderr + run.stdout
    servers = started(run.stderr)
    assert set(servers) == {"PostgreSQL", "Redis"}, run.stderr
    seen = [json.loads(line) for line in (tmp_path / "probe.log").read_text().splitlines()]
    redis = f"redis://127.0.0.1:{servers['Redis'].port}/0"
    # Each pytest run has a database of its own on that Redis (tests/redis_database.py).
    assert [with_database(each.pop("redis"), 0) for each in seen] == [redis, redis]
    assert seen == [
        {"vendor": "sqlite", "port": ""},
        {"vendor": "postgresql", "port": str(servers["PostgreSQL"].port)},
    ]
    assert "tests on SQLite: passed\ntests on PostgreSQL: passed\n" in run.stderr
    assert_gone(servers)


def test_script_runs_both_passes_when_the_first_fails_and_fails_at_the_end(
    tmp_path: Path,
) -> None:
    env = environment(tmp_path, SYSPROMPT_PROBE_FAIL="1")

    run = run_script(env)

    assert run.returncode == 1, run.stderr
    seen = [json.loads(line) for line in (tmp_path / "probe.log").read_text().splitlines()]
    assert [each["vendor"] for each in seen] == ["sqlite", "postgresql"]
    assert run.stdout.count("failing on purpose") >= 2
    results = run.stderr[run.stderr.index("=== results") :]
    assert "tests on SQLite: FAILED (exit status 1)" in results
    assert "tests on PostgreSQL: FAILED (exit status 1)" in results
    assert_gone(started(run.stderr))


def test_script_removes_the_servers_when_the_tests_fail(tmp_path: Path) -> None:
    env = environment(tmp_path, TEST_DATABASES="postgres", SYSPROMPT_PROBE_FAIL="1")

    run = run_script(env)

    assert run.returncode != 0
    assert "failing on purpose" in run.stdout
    servers = started(run.stderr)
    assert set(servers) == {"PostgreSQL", "Redis"}, run.stderr
    assert_gone(servers)


def test_script_removes_the_servers_on_ctrl_c(tmp_path: Path) -> None:
    env = environment(tmp_path, TEST_DATABASES="postgres", SYSPROMPT_PROBE_WAIT="60")

    run = run_script(env, interrupt_when=tmp_path / "probe.log.waiting")

    assert run.returncode == 130, run.stderr  # the script's own exit on SIGINT
    servers = started(run.stderr)
    assert set(servers) == {"PostgreSQL", "Redis"}, run.stderr
    assert_gone(servers)

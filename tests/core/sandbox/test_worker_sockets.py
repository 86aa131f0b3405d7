"""Issue 24, point 4: a confined reader can talk to no other service.

From inside real reader processes (``probe_worker``, confined exactly as the git reader
is: seccomp filter, then Landlock), each connection is attempted against a real local
listener that records what reaches it: TCP, UDP, a UNIX socket with a path (inside the
allowed roots, where Landlock alone would let it through), a socket pair, and
PostgreSQL's own socket where this machine has one. Each fails with the kernel's error
and nothing arrives. Landlock's ABI 4 already refused TCP; UDP and UNIX sockets were
open to a reader before the seccomp filter.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_core.sandbox import WorkerPool, seccomp_status
from tests.core.sandbox.support import errno_of, probe_pool, run, spec

SECCOMP = seccomp_status()
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not SECCOMP.available, reason=f"no seccomp: {SECCOMP.reason}"
)

POSTGRES_SOCKET = Path("/var/run/postgresql/.s.PGSQL.5432")


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    made = probe_pool()
    yield made
    made.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = tmp_path / "root"
    made.mkdir()
    return made


def nothing_arrives(listener: socket.socket) -> bool:
    listener.settimeout(0.05)
    try:
        if listener.type == socket.SOCK_DGRAM:
            listener.recvfrom(64)
        else:
            listener.accept()[0].close()
    except TimeoutError:
        return True
    return False


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "seccomp-alone"])
def test_worker_sockets_tcp_connect_fails(pool: WorkerPool, root: Path, landlock: bool) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert errno_of(run(pool, spec(root, landlock=landlock), "connect", port)) == errno.EACCES
        assert nothing_arrives(listener)


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "seccomp-alone"])
def test_worker_sockets_udp_sendto_fails(pool: WorkerPool, root: Path, landlock: bool) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        assert errno_of(run(pool, spec(root, landlock=landlock), "udp", port)) == errno.EACCES
        assert nothing_arrives(listener)


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "seccomp-alone"])
def test_worker_sockets_unix_connect_fails_even_inside_the_roots(
    pool: WorkerPool, root: Path, landlock: bool
) -> None:
    path = root / "service.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen()
        assert errno_of(run(pool, spec(root, landlock=landlock), "unix", path)) == errno.EACCES
        assert nothing_arrives(listener)


def test_worker_sockets_socketpair_fails(pool: WorkerPool, root: Path) -> None:
    assert errno_of(run(pool, spec(root), "socketpair")) == errno.EACCES


@pytest.mark.skipif(not POSTGRES_SOCKET.exists(), reason="no PostgreSQL socket here")
def test_worker_sockets_postgresql_socket_is_out_of_reach(pool: WorkerPool, root: Path) -> None:
    """What the review did: a confined reader queried PostgreSQL over its socket."""
    assert os.access(POSTGRES_SOCKET, os.W_OK)  # this test process could connect
    assert errno_of(run(pool, spec(root), "unix", POSTGRES_SOCKET)) == errno.EACCES

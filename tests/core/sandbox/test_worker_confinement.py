"""The confinement proven from inside a worker: what a confined worker can and cannot do.

Each probe runs in a worker that confined itself exactly as the git reader does
(``sysprompt_core.sandbox.worker.serve``: its imports, then the spec, the limits and
Landlock), on real files: reading beneath the roots works; reading outside them, and
writing, creating, removing, renaming, truncating, executing, connecting and signalling
anywhere, fail with the kernel's error. Without Landlock (the fallback) the worker
says so, and reading outside works: that is what is lost.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_core.sandbox import WorkerPool, landlock_status
from tests.core.sandbox.support import errno_of, probe_pool, run, spec

STATUS = landlock_status()
pytestmark = pytest.mark.skipif(not STATUS.available, reason=f"no Landlock: {STATUS.reason}")


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    made = probe_pool()
    yield made
    made.close()


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``root`` (allowed) with a file, a folder and a link out; ``outside`` with a file."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "folder").mkdir(parents=True)
    outside.mkdir()
    (root / "inside.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("secret\n")
    (root / "link-out").symlink_to(outside / "secret.txt")
    return root, outside


def test_worker_reads_beneath_its_roots(pool: WorkerPool, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    worker = spec(root)
    assert errno_of(run(pool, worker, "read", root / "inside.txt")) == 0
    assert errno_of(run(pool, worker, "list", root / "folder")) == 0
    assert run(pool, worker, "read", root / "inside.txt").landlock == STATUS.abi


@pytest.mark.parametrize(
    ("probe", "where"),
    [
        ("read", "outside/secret.txt"),
        ("read", "root/link-out"),  # a symlink inside that leads outside
        ("list", "outside"),
        ("read", "/etc/hostname"),
        ("read", "/proc/1/environ"),
    ],
)
def test_worker_cannot_read_outside_its_roots(
    pool: WorkerPool, tree: tuple[Path, Path], probe: str, where: str
) -> None:
    root, _ = tree
    path = where if where.startswith("/") else root.parent / where
    assert errno_of(run(pool, spec(root), probe, path)) == errno.EACCES


@pytest.mark.parametrize(
    ("probe", "where"),
    [
        ("write", "root/new.txt"),
        ("append", "root/inside.txt"),
        ("truncate", "root/inside.txt"),
        ("mkdir", "root/new-folder"),
        ("unlink", "root/inside.txt"),
        ("rename", "root/inside.txt"),
        ("symlink", "root/new-link"),
        ("write", "outside/new.txt"),
        ("write", "/tmp/sysprompt-worker-probe.txt"),
    ],
)
def test_worker_cannot_write_anywhere(
    pool: WorkerPool, tree: tuple[Path, Path], probe: str, where: str
) -> None:
    root, _ = tree
    path = where if where.startswith("/") else root.parent / where
    assert errno_of(run(pool, spec(root), probe, path)) == errno.EACCES
    assert (root / "inside.txt").read_text() == "inside\n"
    assert sorted(p.name for p in root.iterdir()) == ["folder", "inside.txt", "link-out"]
    assert not Path("/tmp/sysprompt-worker-probe.txt").exists()


def test_worker_cannot_execute_a_program(pool: WorkerPool, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert errno_of(run(pool, spec(root), "execute", "/bin/true")) == errno.EACCES


@pytest.mark.skipif(STATUS.abi < 4, reason="Landlock handles TCP from ABI 4")
def test_worker_cannot_connect_over_tcp(pool: WorkerPool, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert errno_of(run(pool, spec(root), "connect", port)) == errno.EACCES


@pytest.mark.skipif(STATUS.abi < 6, reason="Landlock scopes signals from ABI 6")
def test_worker_cannot_signal_a_process_outside(pool: WorkerPool, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert errno_of(run(pool, spec(root), "signal", os.getpid())) == errno.EPERM


def test_worker_without_landlock_says_so_and_reads_outside(
    pool: WorkerPool, tree: tuple[Path, Path]
) -> None:
    """The fallback (``GIT_LANDLOCK`` off, or no Landlock): what is lost."""
    root, outside = tree
    exchange = run(pool, spec(root, landlock=False), "read", outside / "secret.txt")
    assert exchange.landlock == 0
    assert errno_of(exchange) == 0

"""Issue 24, point 3: a reader the kernel cannot confine fails closed.

Real reader processes in which the kernel's confinement is really blocked (a seccomp
filter makes the Landlock system calls, or the ``seccomp`` ones, fail with ``ENOSYS``:
``blocked``), as on an old kernel or under a container's policy. Such a reader reads
nothing — not a file outside the roots, not a repository — and says why, unless its
spec accepts unconfined readers (``SYSPROMPT_GIT_ALLOW_UNCONFINED``); then it reads,
and what the missing mechanism stopped is possible again.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_core.sandbox import WorkerPool, landlock_status, seccomp_status
from sysprompt_core.variables import Missing
from sysprompt_core.variables.git import GitResolver
from tests.core.sandbox.support import REPO, errno_of, run, spec
from tests.core.variables.support import context, make_repo

LANDLOCK, SECCOMP = landlock_status(), seccomp_status()
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not (LANDLOCK.available and SECCOMP.available),
    reason="blocking needs both here",
)


def blocked(groups: list[str], worker: str) -> tuple[str, ...]:
    """A worker command whose process has the system calls of ``groups`` blocked."""
    return (
        sys.executable,
        "-P",
        "-c",
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        f"from tests.core.sandbox.blocked import block; block({groups!r}); "
        f"from {worker} import main; main()",
    )


@pytest.fixture(scope="module")
def no_landlock() -> Iterator[WorkerPool]:
    made = WorkerPool(blocked(["landlock"], "tests.core.sandbox.probe_worker"))
    yield made
    made.close()


@pytest.fixture(scope="module")
def no_seccomp() -> Iterator[WorkerPool]:
    made = WorkerPool(blocked(["seccomp"], "tests.core.sandbox.probe_worker"))
    yield made
    made.close()


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return root, outside


def refused(pool: WorkerPool, root: Path, path: Path, **options: bool) -> str:
    exchange = run(pool, spec(root, **options), "read", path)
    [answer] = exchange.messages
    assert "errno" not in answer  # the probe never ran
    reason = answer["refused"]
    assert isinstance(reason, str)
    assert "SYSPROMPT_GIT_ALLOW_UNCONFINED=true" in reason
    return reason


def test_confinement_without_landlock_reads_nothing_and_says_why(
    no_landlock: WorkerPool, tree: tuple[Path, Path]
) -> None:
    root, outside = tree
    reason = refused(no_landlock, root, outside / "secret.txt", allow_unconfined=False)
    assert "Landlock is unavailable: the kernel has no Landlock" in reason


def test_confinement_without_landlock_reads_when_the_operator_accepts_it(
    no_landlock: WorkerPool, tree: tuple[Path, Path]
) -> None:
    root, outside = tree
    exchange = run(no_landlock, spec(root, allow_unconfined=True), "read", outside / "secret.txt")
    assert (exchange.landlock, errno_of(exchange)) == (0, 0)  # what Landlock stopped
    sockets = run(no_landlock, spec(root, allow_unconfined=True), "socketpair")
    assert errno_of(sockets) == errno.EACCES  # the seccomp filter still holds


def test_confinement_without_seccomp_reads_nothing_and_says_why(
    no_seccomp: WorkerPool, tree: tuple[Path, Path]
) -> None:
    root, _ = tree
    reason = refused(no_seccomp, root, root, allow_unconfined=False)
    assert "seccomp is unavailable: " in reason
    assert "Landlock" not in reason


def test_confinement_without_seccomp_reads_when_the_operator_accepts_it(
    no_seccomp: WorkerPool, tree: tuple[Path, Path]
) -> None:
    root, _ = tree
    exchange = run(no_seccomp, spec(root, allow_unconfined=True), "socketpair")
    assert errno_of(exchange) == 0  # what the filter stopped
    assert exchange.landlock == LANDLOCK.abi


@pytest.mark.skipif(LANDLOCK.abi < 6, reason="Landlock handles TCP from ABI 4, scopes from 6")
def test_confinement_without_seccomp_landlock_still_refuses_tcp_and_abstract_sockets(
    no_seccomp: WorkerPool, tree: tuple[Path, Path]
) -> None:
    """Landlock's own network and scope rules, seen where the filter is missing."""
    root, _ = tree
    worker = spec(root, allow_unconfined=True)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert errno_of(run(no_seccomp, worker, "connect", port)) == errno.EACCES
    name = f"\0sysprompt-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as abstract:
        abstract.bind(name)
        abstract.listen()
        assert errno_of(run(no_seccomp, worker, "unix", name)) == errno.EPERM


def test_confinement_landlock_switched_off_reads_nothing_unless_accepted(
    no_landlock: WorkerPool, tree: tuple[Path, Path]
) -> None:
    root, _ = tree
    reason = refused(no_landlock, root, root, landlock=False, allow_unconfined=False)
    assert "Landlock is switched off (SYSPROMPT_GIT_LANDLOCK=false)" in reason


def test_confinement_git_values_do_not_exist_without_landlock(tmp_path: Path) -> None:
    """The real git reader, Landlock blocked: a repository inside the roots is not read."""
    root = tmp_path / "root"
    repo = make_repo(root / "proj")
    resolver = GitResolver(WorkerPool(blocked(["landlock"], "sysprompt_core.sandbox.worker")))
    try:
        values = resolver.resolve(["branch", "status"], context(repo, roots=(root,)))
        assert all(isinstance(value, Missing) for value in values.values())
        reason = values["branch"].reason if isinstance(values["branch"], Missing) else ""
        assert reason.startswith("git readers cannot be confined by the kernel here")
        accepted = context(repo, roots=(root,), allow_unconfined=True)
        assert resolver.resolve(["branch"], accepted)["branch"] == "main"
    finally:
        resolver.pool.close()

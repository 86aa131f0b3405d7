"""The pool of worker processes: deadlines kill, a busy pool answers within the deadline,
memory is bounded and given back, answers are bounded, and a fork starts afresh.

Real worker processes (``probe_worker``), confined as the git reader is.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_core.sandbox import Exchange, Outcome, WorkerPool
from sysprompt_core.sandbox.worker import RECYCLE_BYTES
from tests.core.sandbox.support import MIB, PROBE_COMMAND, probe_pool, run, spec
from tests.core.variables.support import process_is_dead

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux processes")


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    made = probe_pool()
    yield made
    made.close()


def dies_soon(pid: int) -> bool:
    deadline = time.monotonic() + 20  # a loaded machine's; a quiet one takes milliseconds
    while not process_is_dead(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_pool_reuses_one_worker_for_many_requests(pool: WorkerPool, tmp_path: Path) -> None:
    pids = {run(pool, spec(tmp_path), "list", tmp_path).pid for _ in range(5)}
    assert len(pids) == 1
    assert pool.pids() == list(pids)


def test_pool_kills_a_worker_at_the_deadline(pool: WorkerPool, tmp_path: Path) -> None:
    run(pool, spec(tmp_path), "list", tmp_path)  # started
    [pid] = pool.pids()
    started = time.monotonic()
    exchange = run(pool, spec(tmp_path), "sleep", 60, seconds=0.3)
    assert time.monotonic() - started < 20  # at the deadline, not after the 60 s sleep
    assert exchange.outcome is Outcome.TIMED_OUT
    assert exchange.messages == ({"slept": True},)  # what it said before is kept
    assert dies_soon(pid)
    assert run(pool, spec(tmp_path), "list", tmp_path).outcome is Outcome.DONE  # replaced
    assert pool.pids() != [pid]


def test_pool_busy_answers_busy_at_the_deadline_not_later(pool: WorkerPool, tmp_path: Path) -> None:
    run(pool, spec(tmp_path), "list", tmp_path)
    results: list[Exchange] = []
    sleeper = threading.Thread(
        target=lambda: results.append(run(pool, spec(tmp_path), "sleep", 6.0, seconds=10))
    )
    sleeper.start()
    time.sleep(0.2)
    started = time.monotonic()
    busy = run(pool, spec(tmp_path), "list", tmp_path, seconds=0.3)
    waited = time.monotonic() - started
    sleeper.join()
    assert busy.outcome is Outcome.BUSY
    assert 0.25 < waited < 4  # not until the sleeper frees the worker, 6 s on
    assert results[0].outcome is Outcome.DONE
    assert run(pool, spec(tmp_path), "list", tmp_path, seconds=5).outcome is Outcome.DONE


def test_pool_waits_for_a_worker_that_comes_free_before_the_deadline(
    pool: WorkerPool, tmp_path: Path
) -> None:
    run(pool, spec(tmp_path), "list", tmp_path)
    sleeper = threading.Thread(target=run, args=(pool, spec(tmp_path), "sleep", 0.3))
    sleeper.start()
    time.sleep(0.1)
    assert run(pool, spec(tmp_path), "list", tmp_path, seconds=5).outcome is Outcome.DONE
    sleeper.join()


def test_pool_queue_wait_does_not_eat_the_read_timeout(pool: WorkerPool, tmp_path: Path) -> None:
    run(pool, spec(tmp_path), "list", tmp_path)
    sleeper = threading.Thread(target=run, args=(pool, spec(tmp_path), "sleep", 0.6))
    sleeper.start()
    time.sleep(0.1)
    started = time.monotonic()
    # Queued about 0.5 s for the one worker, then 0.2 s of reading: more than the 0.4 s
    # the read may take, had the wait counted against it.
    exchange = run(pool, spec(tmp_path), "sleep", 0.2, seconds=0.4, queue_seconds=5)
    took = time.monotonic() - started
    sleeper.join()
    assert exchange.outcome is Outcome.DONE
    assert took > 0.4  # it did queue, and still read in full


def test_pool_slow_start_counts_as_queueing_not_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE_START_DELAY", "0.5")
    monkeypatch.setattr("sysprompt_core.sandbox.pool._PASSED_ENVIRONMENT", {"PROBE_START_DELAY"})
    slow = WorkerPool(PROBE_COMMAND)
    try:
        exchange = run(slow, spec(tmp_path), "list", tmp_path, seconds=0.3, queue_seconds=10)
        assert exchange.outcome is Outcome.DONE
    finally:
        slow.close()


def test_pool_worker_memory_is_limited(pool: WorkerPool, tmp_path: Path) -> None:
    limited = spec(tmp_path, memory_limit=128 * MIB)
    assert run(pool, limited, "allocate", 64 * MIB).messages == ({"allocated": 64 * MIB},)
    assert run(pool, limited, "allocate", 256 * MIB).messages == ({"memory_error": True},)


def test_pool_worker_that_kept_memory_is_replaced(pool: WorkerPool, tmp_path: Path) -> None:
    first = run(pool, spec(tmp_path), "keep", RECYCLE_BYTES + 8 * MIB)
    assert first.outcome is Outcome.DONE
    assert first.pid is not None
    assert dies_soon(first.pid)  # it exited on its own: nothing held
    assert run(pool, spec(tmp_path), "list", tmp_path).pid != first.pid


@pytest.mark.parametrize(
    ("recycle_bytes", "replaced"), [(2 * MIB, True), (RECYCLE_BYTES + 16 * MIB, False)]
)
def test_pool_worker_that_grew_past_its_specs_bound_is_replaced_after_its_read(
    pool: WorkerPool, tmp_path: Path, recycle_bytes: int, replaced: bool
) -> None:
    bounded = spec(tmp_path, recycle_bytes=recycle_bytes)
    run(pool, bounded, "list", tmp_path)  # started, and has read
    [ready] = pool.pids()

    grown = run(pool, bounded, "keep", 6 * MIB)

    assert (grown.outcome, grown.pid) == (Outcome.DONE, ready)
    assert dies_soon(ready) is replaced
    assert (run(pool, bounded, "list", tmp_path).pid != ready) is replaced


def test_pool_answer_larger_than_the_limit_fails_and_kills(
    pool: WorkerPool, tmp_path: Path
) -> None:
    exchange = run(pool, spec(tmp_path), "say", 200_000, limit=100_000)
    assert exchange.outcome is Outcome.FAILED
    assert exchange.reason == "the worker answered more than 100,000 bytes at once"
    assert exchange.pid is not None and dies_soon(exchange.pid)


def test_pool_worker_that_dies_fails_with_why(pool: WorkerPool, tmp_path: Path) -> None:
    exchange = run(pool, spec(tmp_path), "exit", 3)
    assert exchange.outcome is Outcome.FAILED
    assert exchange.reason == "the worker stopped (exit status 3)"
    assert run(pool, spec(tmp_path), "list", tmp_path).outcome is Outcome.DONE


def test_pool_worker_of_another_spec_makes_room(pool: WorkerPool, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = run(pool, spec(tmp_path / "a"), "list", tmp_path / "a")
    second = run(pool, spec(tmp_path / "b"), "list", tmp_path / "b")
    assert first.pid != second.pid
    assert first.pid is not None and dies_soon(first.pid)
    assert pool.pids() == [second.pid]


def test_pool_slow_start_answers_busy_and_the_worker_serves_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE_START_DELAY", "1.0")
    monkeypatch.setattr("sysprompt_core.sandbox.pool._PASSED_ENVIRONMENT", {"PROBE_START_DELAY"})
    slow = WorkerPool(PROBE_COMMAND)
    try:
        assert run(slow, spec(tmp_path), "list", tmp_path, seconds=0.2).outcome is Outcome.BUSY
        later = run(slow, spec(tmp_path), "list", tmp_path, seconds=10)
        assert later.outcome is Outcome.DONE
        assert slow.pids() == [later.pid]  # the worker that started in the background
    finally:
        slow.close()


def test_pool_after_fork_the_child_starts_its_own_workers(pool: WorkerPool, tmp_path: Path) -> None:
    parent = run(pool, spec(tmp_path), "list", tmp_path).pid
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            forgotten = pool.pids() == []
            mine = run(pool, spec(tmp_path), "list", tmp_path)
            ok = forgotten and mine.outcome is Outcome.DONE and mine.pid != parent
            pool.close()
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.close(read)
    os.waitpid(child, 0)
    assert answer == b"ok"
    assert pool.pids() == [parent]  # the child never touched the parent's worker
    assert run(pool, spec(tmp_path), "list", tmp_path).pid == parent

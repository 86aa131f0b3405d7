"""A burst of first turns on a loaded machine queues for the git readers, then reads
(issue 24, point 8).

A real server (gunicorn, one gthread worker with a thread per turn, two git readers,
DEBUG off, SQLite) on a small real repository, its readers not started yet; the
machine loaded with :data:`BURNERS` CPU-burning processes. 50 first turns of different
conversations at once: every one is stored with its branch, none answers 503, while
the wait bound (``SYSPROMPT_GIT_QUEUE_TIMEOUT``) holds. Before, the wait for a reader
(and its start) came out of the read's own ``SYSPROMPT_GIT_TIMEOUT``: on a loaded
machine the turns at the back of the queue answered 503 ("every git reader of the
server was busy until the deadline").
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks._support import Server, make_repo
from benchmarks.git_pool import cpu_burners, first_turns, git_server
from sysprompt_core.sandbox import landlock_status

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not landlock_status().available, reason="Landlock"
)

TURNS = 50
BURNERS = 4  # twice the machine's cores
GIT_TIMEOUT = 1.0
"""What one read of the small repository may take: ample for the read itself (tens of
milliseconds, loaded), not for 50 reads queued two at a time behind it."""
QUEUE_TIMEOUT = 60.0
"""The wait bound, far above what the burst queues."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("git-burst")
    root = folder / "root"
    repo = make_repo(root / "repo")
    extra = {
        "SYSPROMPT_GIT_TIMEOUT": str(GIT_TIMEOUT),
        "SYSPROMPT_GIT_QUEUE_TIMEOUT": str(QUEUE_TIMEOUT),
    }
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(
            git_server(folder, root, readers=2, threads=TURNS, extra=extra)
        )
        yield server, repo


def test_git_burst_of_50_first_turns_on_a_loaded_machine_answers_no_503(
    served: tuple[Server, Path],
) -> None:
    server, repo = served
    names = [f"burst-{n}" for n in range(TURNS)]

    with cpu_burners(BURNERS):
        turns = first_turns(server, repo, names, TURNS)

    statuses = sorted(turn.status for turn in turns)
    slowest = max(turn.seconds for turn in turns)
    assert statuses == [201] * TURNS, (statuses, f"slowest {slowest:.1f} s")
    assert all("Branch: feature/bench\n" in turn.prompt for turn in turns)
    assert slowest < QUEUE_TIMEOUT + GIT_TIMEOUT + 30  # the wait stayed bounded

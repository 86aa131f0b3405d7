"""Git readers that grew are replaced after their read (issue 31, point 14), against a
real server: gunicorn (one gthread worker, DEBUG off, SQLite), two git readers, a
repository of 40,000 untracked files whose status (about 1.4 MB) is read in full.

Eight previews of ``[git:status]`` at once: each reader's allocator keeps part of what
a large read took (2 to 6 MB here, up to 32 MB for a status of 300,000 files), and a
reader was kept until its own measure passed 32 MiB — two readers per server process,
each holding tens of megabytes. Now the pool reads a reader's resident memory from
``/proc`` as its read ends and replaces one that holds more than
``SYSPROMPT_GIT_RECYCLE_BYTES`` above what it held when ready (lowered here to 1 MiB,
below what every one of these reads leaves): afterwards the readers are fresh
processes, each within the bound of an idle one. (gunicorn's own worker, which handled
the eight prompts of 1.4 MB, keeps what its allocator kept: about 50 MB here, with the
file and prompt limits raised to 4 MiB for this test.)
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks._support import (
    Client,
    Server,
    group_resident,
    gunicorn,
    make_repo,
    prepare,
    server_env,
    sqlite_database,
    untracked_repository,
)
from sysprompt_core.sandbox import landlock_status

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not landlock_status().available, reason="Landlock and /proc"
)

MIB = 1024 * 1024
RECYCLE_BYTES = MIB
UNTRACKED_FILES = 40_000
BRANCH = "feature/bench"  # benchmarks' make_repo


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, Path]]:
    folder = tmp_path_factory.mktemp("git-recycle")
    root = folder / "root"
    small = make_repo(root / "small")
    huge = untracked_repository(root / "huge", UNTRACKED_FILES)
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, root) | {
            "SYSPROMPT_GIT_WORKERS": "2",
            "SYSPROMPT_GIT_RECYCLE_BYTES": str(RECYCLE_BYTES),
            "SYSPROMPT_MAX_FILE_BYTES": str(4 * MIB),
            "SYSPROMPT_MAX_PROMPT_BYTES": str(4 * MIB),
            "SYSPROMPT_GIT_TIMEOUT": "60",
            "SYSPROMPT_GIT_QUEUE_TIMEOUT": "300",
        }
        token = prepare(env)
        server = stack.enter_context(
            gunicorn(env, token, workers=1, threads=12, log=folder / "gunicorn.log")
        )
        yield server, small, huge


def preview(server: Server, cwd: Path, template: str) -> Any:
    with Client(server) as client:
        client.connection.timeout = 300
        code, answer = client.request(
            "POST", "/api/system-prompt/preview", {"cwd": str(cwd), "template": template}
        )
    assert code == 200, answer
    return answer


def readers(server: Server) -> dict[int, int]:
    """Resident bytes of each git reader (a process below gunicorn's worker)."""
    found = {}
    for pid, size in group_resident(server.pgid).items():
        with contextlib.suppress(OSError):
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            if pid != server.pgid and parent != server.pgid:
                found[pid] = size
    return found


def two_readers(server: Server, small: Path) -> dict[int, int]:
    """Both readers started and idle, after previews of the small repository two at a
    time; then their resident memory."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pair = [
            threading.Thread(target=preview, args=(server, small, "[git:branch]")) for _ in range(2)
        ]
        for thread in pair:
            thread.start()
        for thread in pair:
            thread.join()
        found = readers(server)
        if len(found) == 2:
            return found
        time.sleep(0.5)
    raise AssertionError(f"two git readers never ran: {readers(server)}")


def test_git_recycle_server_readers_that_grew_are_replaced_after_eight_reads(
    served: tuple[Server, Path, Path],
) -> None:
    server, small, huge = served
    idle = two_readers(server, small)
    idle_reader = max(idle.values())

    answers: list[Any] = []
    threads = [
        threading.Thread(target=lambda: answers.append(preview(server, huge, "[git:status]")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(answers) == 8
    assert all(len(a["system_prompt"] or "") > MIB for a in answers), [  # read in full
        a["reasons"] for a in answers
    ]
    after = two_readers(server, small)  # the replacements have started and read
    assert not set(after) & set(idle)  # the readers that read the status are gone
    assert all(size < idle_reader + RECYCLE_BYTES for size in after.values()), (idle, after)
    assert sum(after.values()) < sum(idle.values()) + 2 * RECYCLE_BYTES

"""The git attacks of issue 19 against a real server: gunicorn, DEBUG off, SQLite, its
git readers confined by Landlock, memory measured from ``/proc``.

* Point 1: a repository whose ``.git/refs/heads``, ``.git/objects/pack`` and
  ``.git/objects/XX`` are symlinks into a repository outside the roots, with no index:
  neither the preview nor an agent host's first turn shows a name from outside.
* Point 6: an outside ``include.path``, ``core.excludesFile``, symlinked
  ``.git/info/exclude`` or in-tree ``.gitignore``: the preview is the same whether the
  outside file holds the guessed line or not.
* Point 4: ``git:status`` of a repository of 40,000 untracked files (each listed),
  with git readers limited to 56 MiB: one read and eight at once stay bounded (two
  readers at most, each within its limit), nothing is held afterwards (no process
  keeps the read's memory), and other conversations' first turns meanwhile are stored
  with their git value or answered 503, never frozen without it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchmarks._support import (
    Client,
    ResidentSampler,
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
from tests.core.variables.test_git_confinement import (
    ATTACKS,
    GUESS,
    SECRET,
    borrowed_objects_repo,
)

STATUS = landlock_status()
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not STATUS.available, reason="Landlock and /proc"
)

MIB = 1024 * 1024
MEMORY_LIMIT = 56 * MIB
UNTRACKED_FILES = 40_000
BRANCH = "feature/bench"  # benchmarks' make_repo


@dataclass(frozen=True)
class Served:
    server: Server
    root: Path
    outside: Path
    small: Path
    huge: Path
    borrowed: Path

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        with Client(self.server) as client:
            client.connection.timeout = 60
            return client.request("POST", path, body)

    def preview(self, cwd: Path, template: str) -> Any:
        body = {"cwd": str(cwd), "template": template}
        code, answer = self.post("/api/system-prompt/preview", body)
        assert code == 200, answer
        return answer

    def first_turn(self, conversation: str, cwd: Path) -> tuple[int, Any]:
        path = f"/api/conversations/{conversation}/system-prompt/resolve"
        return self.post(path, {"cwd": str(cwd)})

    def set_template(self, text: str) -> None:
        with Client(self.server) as client:
            client.expect({200}, "PUT", "/api/system-prompt", {"template": text})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("git-server")
    root = folder / "root"
    root.mkdir()
    borrowed = borrowed_objects_repo(folder)  # folder/root/proj and folder/outside
    small = make_repo(root / "small")
    huge = untracked_repository(root / "huge", UNTRACKED_FILES)
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, root) | {
            "SYSPROMPT_GIT_WORKERS": "2",
            "SYSPROMPT_GIT_MEMORY_LIMIT": str(MEMORY_LIMIT),
            "SYSPROMPT_GIT_TIMEOUT": "3",
        }
        token = prepare(env)
        server = stack.enter_context(
            gunicorn(env, token, workers=1, threads=12, log=folder / "gunicorn.log")
        )
        yield Served(server, root, folder / "outside", small, huge, borrowed)


# --- point 1 ------------------------------------------------------------------------


def test_git_server_preview_through_symlinks_in_dot_git_shows_no_outside_name(
    served: Served,
) -> None:
    answer = served.preview(served.borrowed, "[git:branch]\n[git:status]\n")
    assert SECRET not in str(answer)
    assert answer["variables"] == {"git:branch": None, "git:status": None}


def test_git_server_first_turn_through_symlinks_in_dot_git_stores_no_outside_name(
    served: Served,
) -> None:
    served.set_template("Branch [git:branch]\n[git:status]\n")
    code, answer = served.first_turn("borrowed-objects", served.borrowed)
    assert code == 201, answer
    assert SECRET not in str(answer)
    assert answer["system_prompt"] == "Branch \n\n"


# --- point 6 ------------------------------------------------------------------------


@pytest.mark.parametrize("attack", ATTACKS)
def test_git_server_outside_configuration_and_ignore_files_do_not_count(
    served: Served, attack: str
) -> None:
    answers = []
    for text in (GUESS, "other.txt"):
        inside, outside = served.root / f"attack-{attack}", served.outside.parent / f"out-{attack}"
        for folder in (inside, outside):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        cwd = ATTACKS[attack](inside, outside, text)
        answers.append(served.preview(cwd, "[git:branch]\n[git:status]\n"))
    guessed, other = answers
    assert guessed["variables"] == other["variables"]
    assert guessed["reasons"] == other["reasons"]
    assert SECRET not in str(guessed)


# --- point 4 ------------------------------------------------------------------------


def git_readers(served: Served) -> dict[int, int]:
    """Resident bytes of each git reader (a process below gunicorn's worker)."""
    group = group_resident(served.server.pgid)
    readers = {}
    for pid, size in group.items():
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if pid != served.server.pgid and parent != served.server.pgid:
            readers[pid] = size
    return readers


def gunicorn_resident(served: Served) -> int:
    group = group_resident(served.server.pgid)
    return sum(size for pid, size in group.items() if pid not in git_readers(served))


def warm(served: Served) -> None:
    """Both git readers started (previews two at a time)."""
    for _ in range(5):
        pair = [threading.Thread(target=served.preview, args=(served.small, "[git:branch]"))]
        pair.append(threading.Thread(target=served.preview, args=(served.small, "[git:branch]")))
        for thread in pair:
            thread.start()
        for thread in pair:
            thread.join()
        if len(git_readers(served)) == 2:
            return


def bounded(reason: str | None) -> bool:
    return reason is not None and (
        "needs more memory than a git reader may use" in reason
        or reason.startswith(("git timed out", "busy: all 2 git readers"))
        or "larger than the 1048576-byte limit" in reason
    )


def test_git_server_huge_status_reads_stay_bounded_and_hold_nothing(served: Served) -> None:
    served.set_template("On [git:branch].")
    warm(served)
    idle_server = gunicorn_resident(served)
    idle_reader = max(git_readers(served).values(), default=0)
    ceiling = idle_server + 2 * MEMORY_LIMIT + 32 * MIB

    with ResidentSampler(served.server.pgid) as one:
        answer = served.preview(served.huge, "[git:status]")
    assert bounded(answer["reasons"].get("git:status")), answer["reasons"]
    assert one.peak < ceiling

    answers: list[Any] = []
    turns: list[tuple[int, Any]] = []

    def read() -> None:
        answers.append(served.preview(served.huge, "[git:status]"))

    def turn(number: int) -> None:
        turns.append(served.first_turn(f"meanwhile-{number}", served.small))

    threads = [threading.Thread(target=read) for _ in range(8)]
    threads += [threading.Thread(target=turn, args=(number,)) for number in range(4)]
    with ResidentSampler(served.server.pgid) as eight:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    for code, body in turns:  # stored with the branch, or asked to retry: never frozen
        assert (code, body.get("system_prompt")) in ((201, f"On {BRANCH}."), (503, None))
    assert gunicorn_resident(served) < idle_server + 24 * MIB  # the server holds nothing
    assert len(git_readers(served)) <= 2
    assert all(size < idle_reader + 16 * MIB for size in git_readers(served).values())
    assert eight.peak < ceiling
    assert all(bounded(answer["reasons"].get("git:status")) for answer in answers)

"""Issue 24, point 3, against real servers: where the kernel cannot confine the git
readers, the server fails closed.

Two gunicorn servers run on one SQLite database, each started by
``tests.core.sandbox.blocked``, which blocks the Landlock system calls (``ENOSYS``) in
gunicorn and so in its workers and their git readers, as a container's seccomp policy
does. Before, such a server logged nothing and served git values through unconfined
readers (the review listed names from a repository outside the roots). Now:

* by default it logs an error at start, and every ``git:`` value does not exist, with
  the reason in the preview — a repository whose ``.git`` links outside the roots and
  a plain one alike; an agent host's first turn is stored without them;
* with ``SYSPROMPT_GIT_ALLOW_UNCONFINED=true`` it logs a warning and reads.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchmarks._support import (
    PYTHON,
    Client,
    Server,
    gunicorn,
    make_repo,
    prepare,
    server_env,
    sqlite_database,
)
from sysprompt_core.sandbox import seccomp_status
from tests.core.variables.test_git_confinement import SECRET, borrowed_objects_repo

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not seccomp_status().available,
    reason="blocking Landlock takes a seccomp filter",
)

BRANCH = "feature/bench"  # benchmarks' make_repo
BLOCKED = [PYTHON, "-m", "tests.core.sandbox.blocked", "landlock"]
REFUSED = "git readers cannot be confined by the kernel here (Landlock is unavailable: "


@dataclass(frozen=True)
class Servers:
    closed: Server
    accepted: Server
    small: Path
    borrowed: Path


def post(server: Server, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    with Client(server) as client:
        return client.request("POST", path, body)


def preview(server: Server, cwd: Path, template: str) -> Any:
    code, answer = post(
        server, "/api/system-prompt/preview", {"cwd": str(cwd), "template": template}
    )
    assert code == 200, answer
    return answer


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    folder = tmp_path_factory.mktemp("git-unconfined")
    borrowed = borrowed_objects_repo(folder)  # folder/root/proj and folder/outside
    small = make_repo(folder / "root" / "small")
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, folder / "root") | {
            "SYSPROMPT_GIT_WORKERS": "1",
            "SYSPROMPT_GIT_TIMEOUT": "3",
        }
        token = prepare(env)
        accepting = env | {"SYSPROMPT_GIT_ALLOW_UNCONFINED": "true"}
        closed, accepted = (
            stack.enter_context(
                gunicorn(environ, token, workers=1, threads=4, log=log, prefix=BLOCKED)
            )
            for environ, log in ((env, folder / "closed.log"), (accepting, folder / "open.log"))
        )
        yield Servers(closed, accepted, small, borrowed)


def test_git_unconfined_server_logs_an_error_at_start(servers: Servers) -> None:
    log = servers.closed.log.read_text()
    assert "ERROR sysprompt.git: git: values will not be read: git readers cannot be " in log
    assert "Landlock is unavailable: the kernel has no Landlock" in log


@pytest.mark.parametrize("repository", ["borrowed", "small"])
def test_git_unconfined_preview_has_no_git_values_and_says_why(
    servers: Servers, repository: str
) -> None:
    answer = preview(servers.closed, getattr(servers, repository), "[git:branch]\n[git:status]")
    assert answer["variables"] == {"git:branch": None, "git:status": None}
    assert all(reason.startswith(REFUSED) for reason in answer["reasons"].values())
    assert "SYSPROMPT_GIT_ALLOW_UNCONFINED=true" in answer["reasons"]["git:branch"]
    assert SECRET not in str(answer)


def test_git_unconfined_first_turn_is_stored_without_git_values(servers: Servers) -> None:
    with Client(servers.closed) as client:
        client.expect({200}, "PUT", "/api/system-prompt", {"template": "On [git:branch]."})
    path = "/api/conversations/unconfined-first/system-prompt/resolve"
    code, answer = post(servers.closed, path, {"cwd": str(servers.small)})
    assert (code, answer["system_prompt"]) == (201, "On .")


def test_git_unconfined_accepted_server_reads_and_warns(servers: Servers) -> None:
    answer = preview(servers.accepted, servers.small, "[git:branch]")
    assert answer["variables"] == {"git:branch": BRANCH}
    log = servers.accepted.log.read_text()
    assert "WARNING sysprompt.git: git readers are not confined by the kernel" in log
    assert "ERROR" not in log

"""A busy pool of git readers never freezes a prompt without its git values.

Every git reader of the process (one, here) is kept reading a repository whose index
is a FIFO nobody writes to. Meanwhile an agent host's first turn, a construct and a
compact of a template with ``[git:branch]`` queue for a reader as long as they may,
then answer 503 with ``Retry-After`` and a JSON detail, and store nothing; the preview
answers 200 and says why the value is missing. Once the reader is free, the same first
turn stores the prompt with the branch.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.prompts.models import ConversationPrompt
from sysprompt_core.variables import ResolveContext, ResolverOptions
from tests.core.variables.support import git, make_repo, shared_git

pytestmark = [pytest.mark.django_db, pytest.mark.skipif(not os.path.isdir("/proc"), reason="/proc")]

TEMPLATE = "/api/system-prompt"
CONVERSATION = "/api/conversations/{}/system-prompt"
DEADLINE = 0.5


def waiting_on_a_fifo(pid: int) -> bool:
    """Whether process ``pid`` is blocked opening a FIFO that has no writer."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == "wait_for_partner"
    except OSError:
        return False


@dataclass
class Blocked:
    """The project to resolve in, and how to let the blocked reader finish."""

    project: Path
    index: Path

    def release(self) -> None:
        """A writer comes and goes: the reader's open returns, and it reads nothing."""
        with contextlib.suppress(OSError):  # no reader is left
            os.close(os.open(self.index, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def busy(allowed_root: Path, settings: Settings) -> Iterator[Blocked]:
    """The one git reader blocked on another repository's index."""
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "GIT_WORKERS": 1,
        "GIT_TIMEOUT": DEADLINE,
        "GIT_QUEUE_TIMEOUT": DEADLINE,
    }
    project = make_repo(allowed_root / "project")
    blocked = make_repo(allowed_root / "blocked")
    index = blocked / ".git" / "index"
    index.unlink()
    os.mkfifo(index)
    resolver = shared_git()
    options = ResolverOptions(allowed_roots=(str(allowed_root),), git_timeout=60, git_workers=1)
    assert resolver.resolve(["branch"], ResolveContext(str(project), options=options)) == {
        "branch": "main"
    }  # the one reader runs, confined to this root
    reader = threading.Thread(
        target=resolver.resolve, args=(["status"], ResolveContext(str(blocked), options=options))
    )
    reader.start()
    deadline = time.monotonic() + 60
    while not any(waiting_on_a_fifo(pid) for pid in resolver.pool.pids()):
        assert time.monotonic() < deadline, "the reader never blocked on the index"
        time.sleep(0.01)
    blocked_reader = Blocked(project, index)
    try:
        yield blocked_reader
    finally:
        blocked_reader.release()
        reader.join(10)


def put_template(client: APIClient, text: str) -> None:
    response = client.put(TEMPLATE, {"template": text}, format="json")
    assert response.status_code == 200, response.content


def turn(client: APIClient, action: str, cwd: Path) -> object:
    return client.post(CONVERSATION.format("c1") + f"/{action}", {"cwd": str(cwd)}, format="json")


@pytest.mark.parametrize("action", ["resolve", "construct", "compact"])
def test_git_busy_first_turn_answers_503_and_stores_nothing(
    author_client: APIClient, agent_client: APIClient, busy: Blocked, action: str
) -> None:
    put_template(author_client, "On [git:branch].")
    started = time.monotonic()
    response = turn(agent_client, action, busy.project)
    waited = time.monotonic() - started

    assert response.status_code == 503  # type: ignore[attr-defined]
    assert response["Retry-After"] == "1"  # type: ignore[index]
    assert response.json() == {  # type: ignore[attr-defined]
        "detail": "git:branch could not be read now: every git reader of the server was "
        "busy until the deadline. Nothing was stored; try again in 1 s."
    }
    assert DEADLINE * 0.9 < waited < DEADLINE + 1.5  # waited for a reader, never longer
    assert not ConversationPrompt.objects.exists()


def test_git_busy_preview_shows_the_reason(agent_client: APIClient, busy: Blocked) -> None:
    body = {"cwd": str(busy.project), "template": "On [git:branch]."}
    response = agent_client.post(TEMPLATE + "/preview", body, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["system_prompt"] == "On ."
    assert body["reasons"]["git:branch"] == (
        "busy: all 1 git readers stayed busy for the 0.5s a read may queue; try again shortly"
    )


def test_git_busy_first_turn_once_free_stores_the_branch(
    author_client: APIClient, agent_client: APIClient, busy: Blocked
) -> None:
    put_template(author_client, "On [git:branch].")
    first = turn(agent_client, "resolve", busy.project)
    assert first.status_code == 503  # type: ignore[attr-defined]
    busy.release()
    git(busy.project, "checkout", "--quiet", "-b", "feature")

    deadline = time.monotonic() + 60
    while (response := turn(agent_client, "resolve", busy.project)).status_code == 503:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline
        time.sleep(0.1)

    assert response.status_code == 201  # type: ignore[attr-defined]
    assert response.json()["system_prompt"] == "On feature."  # type: ignore[attr-defined]

"""The attack on the editor's file suggestions: swap a directory with a symlink to a
folder outside the allowed roots while ``/editor/files`` walks the working directory.

A background thread exchanges, over and over (bounded in time and count), a directory
with a symlink to the outside folder, atomically with ``renameat2(RENAME_EXCHANGE)``
(two ``rename`` calls where the kernel lacks it). Meanwhile the view is asked many
times. A walk that looks names up again would list the outside folder's names, and a
``realpath`` of an entry that changed kind under it raised ``EINVAL`` (a 500). Walking
with directory descriptors, and checking what was opened, must let neither through.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

OUTSIDE_NAME = "outside-secret-name"
SWAP_SECONDS = 4.0
SWAP_ITERATIONS = 5_000_000
MAX_REQUESTS = 2_000


EXCHANGER = r"""
import ctypes, errno, os, signal, sys, time
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
place, link, seconds, limit = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
try:
    exchange = ctypes.CDLL(None, use_errno=True).renameat2
except AttributeError:  # a C library without it (glibc before 2.28, musl)
    exchange = None
old, new, swaps, deadline = os.fsencode(place), os.fsencode(link), 0, time.monotonic() + seconds
print("started", flush=True)
while not stop and swaps < limit and time.monotonic() < deadline:
    if exchange is not None:
        if exchange(-100, old, -100, new, 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
            swaps += 1
            continue
        if ctypes.get_errno() not in (errno.EINVAL, errno.ENOSYS):
            raise OSError(ctypes.get_errno(), "renameat2")
        exchange = None  # the file system cannot exchange: rename three times
    parked = place + ".parked"
    os.rename(place, parked)
    os.rename(link, place)
    os.rename(parked, link)
    swaps += 1
print(swaps, flush=True)
"""


@dataclass
class Exchanger:
    """A process that exchanges ``place`` (a directory) with ``link`` (a symlink to the
    outside), atomically where the kernel can, until ``SWAP_SECONDS`` have passed."""

    place: Path
    link: Path
    swaps: int = 0

    @contextmanager
    def running(self) -> Iterator[subprocess.Popen[str]]:
        arguments = [str(self.place), str(self.link), str(SWAP_SECONDS), str(SWAP_ITERATIONS)]
        process = subprocess.Popen(
            [sys.executable, "-c", EXCHANGER, *arguments], stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "started"
            yield process
        finally:
            process.terminate()
            out, _ = process.communicate(timeout=10)
            self.swaps = int(out.strip() or 0)


@dataclass
class Outcome:
    answers: int = 0
    leaked: int = 0
    server_errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    benign: int = 0


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "deeper").mkdir(parents=True)
    (folder / f"{OUTSIDE_NAME}.md").write_text("secret\n")
    (folder / "deeper" / f"{OUTSIDE_NAME}-2.md").write_text("secret\n")
    return folder


def _attack(client: Client, cwd: Path, exchanger: Exchanger) -> Outcome:
    """Ask for the suggestions of ``cwd`` while ``exchanger`` swaps, ``MAX_REQUESTS`` at
    most; count the answers that list an outside name and the 5xx."""
    outcome = Outcome()
    with exchanger.running() as process:
        while process.poll() is None and outcome.answers < MAX_REQUESTS:
            response = client.get("/editor/files", {"cwd": str(cwd)})
            outcome.answers += 1
            status = response.status_code
            outcome.statuses[status] = outcome.statuses.get(status, 0) + 1
            if response.status_code >= 500:
                outcome.server_errors += 1
                continue
            text = response.content.decode()
            if OUTSIDE_NAME in text:
                outcome.leaked += 1
            elif "inside.md" in text:
                outcome.benign += 1
    return outcome


@pytest.fixture
def quiet_client(author: User) -> Client:
    """A logged-in author whose 500s come back as answers (counted), not exceptions."""
    client = Client(raise_request_exception=False)
    client.force_login(author)
    return client


@pytest.mark.django_db
def test_files_race_subdirectory_swapped_lists_nothing_outside(
    quiet_client: Client, allowed_root: Path, outside: Path
) -> None:
    project = allowed_root / "project"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "inside.md").write_text("x\n")
    (project / "sub.link").symlink_to(outside, target_is_directory=True)
    exchanger = Exchanger(project / "sub", project / "sub.link")

    outcome = _attack(quiet_client, project, exchanger)

    assert exchanger.swaps > 100 and outcome.benign > 0, outcome  # the attack really ran
    assert (outcome.leaked, outcome.server_errors) == (0, 0), outcome


@pytest.mark.django_db
def test_files_race_cwd_swapped_lists_nothing_outside(
    quiet_client: Client, allowed_root: Path, outside: Path
) -> None:
    (allowed_root / "project").mkdir()
    (allowed_root / "project" / "inside.md").write_text("x\n")
    (allowed_root / "project.link").symlink_to(outside, target_is_directory=True)
    exchanger = Exchanger(allowed_root / "project", allowed_root / "project.link")

    outcome = _attack(quiet_client, allowed_root / "project", exchanger)

    assert exchanger.swaps > 100 and outcome.benign > 0, outcome
    assert (outcome.leaked, outcome.server_errors) == (0, 0), outcome

"""The attack: swap a directory for a symlink while prompts are being resolved.

A background thread renames, over and over (bounded in time and count), a directory
inside the allowed root with a symlink to a directory outside it that holds a secret.
Meanwhile previews and first-turn resolves (which store) run against it. Checking a
name and then opening it again by name would let some of them read the secret; the
checks made on opened descriptors must let none through.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt import errors
from sysprompt.prompts import rendering, services
from sysprompt.prompts.models import ConversationPrompt

SECRET = "SECRET-7f3a9c-outside-the-roots"
BENIGN = "benign text inside the root"
SWAP_SECONDS = 2.0
SWAP_ITERATIONS = 50_000
MAX_PREVIEWS = 4_000
MAX_RESOLVES = 1_500


@dataclass
class Swapper:
    """Swaps ``place`` between a real directory and a symlink to ``target``."""

    place: Path
    target: Path
    swaps: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        parked_dir = self.place.with_name(self.place.name + ".dir")
        parked_link = self.place.with_name(self.place.name + ".link")
        parked_link.symlink_to(self.target, target_is_directory=True)
        deadline = time.monotonic() + SWAP_SECONDS
        while self.swaps < SWAP_ITERATIONS and time.monotonic() < deadline:
            if self.stop.is_set():
                break
            os.rename(self.place, parked_dir)  # the real directory steps aside …
            os.rename(parked_link, self.place)  # … and the symlink takes its name
            os.rename(self.place, parked_link)
            os.rename(parked_dir, self.place)
            self.swaps += 1


@pytest.fixture
def running() -> Iterator[list[threading.Thread]]:
    threads: list[threading.Thread] = []
    yield threads
    for thread in threads:
        thread.join(timeout=10)


def _start(swapper: Swapper, threads: list[threading.Thread]) -> threading.Thread:
    thread = threading.Thread(target=swapper.run, daemon=True)
    threads.append(thread)
    thread.start()
    return thread


def _resolve(conversation_id: str, cwd: Path, user: User) -> str | None:
    extra: dict[str, Any] = {}
    # The same test ran against the code before the fix, whose resolve had no user.
    if "user" in inspect.signature(services.conversation_prompt_resolve).parameters:
        extra["user"] = user
    stored = services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(cwd), **extra
    )
    return stored.prompt.system_prompt


@dataclass
class Outcome:
    leaks: list[str] = field(default_factory=list)
    benign: int = 0
    refused: int = 0
    crashed: list[str] = field(default_factory=list)
    previews: int = 0
    resolves: int = 0


def _attack(thread: threading.Thread, cwd: Path, template: str, user: User) -> Outcome:
    """Previews and first-turn resolves, alternately, while ``thread`` swaps."""
    outcome = Outcome()
    services.template_save(text=template)
    while thread.is_alive() and (
        outcome.previews < MAX_PREVIEWS or outcome.resolves < MAX_RESOLVES
    ):
        texts: list[str | None] = []
        try:
            if outcome.previews < MAX_PREVIEWS:
                outcome.previews += 1
                preview = rendering.template_preview(cwd=str(cwd), template=template)
                texts.append(preview.rendered.prompt)
                texts.extend(v for v in preview.rendered.values.values() if isinstance(v, str))
            if outcome.resolves < MAX_RESOLVES:
                outcome.resolves += 1
                texts.append(_resolve(f"race-{outcome.resolves}", cwd, user))
        except errors.InvalidInput:
            outcome.refused += 1  # cwd_check caught the swap: refused, nothing read
        except OSError as exc:  # would be a 500
            outcome.crashed.append(repr(exc))
        joined = "\n".join(text for text in texts if text)
        if SECRET in joined:
            outcome.leaks.append(joined)
        elif BENIGN in joined:
            outcome.benign += 1
    return outcome


@pytest.fixture
def layout(allowed_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``allowed_root`` and, outside it, a folder holding the secret."""
    outside = tmp_path / "outside"
    (outside / "proj").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "proj" / "AGENTS.md").write_text(SECRET + "\n")
    return allowed_root, outside


def _stored_leaks() -> int:
    return ConversationPrompt.objects.filter(system_prompt__contains=SECRET).count()


@pytest.mark.django_db
def test_confinement_cwd_swapped_for_symlink_leaks_nothing(
    layout: tuple[Path, Path], agent_host: User, running: list[threading.Thread]
) -> None:
    root, outside = layout
    (root / "swap" / "proj").mkdir(parents=True)
    (root / "swap" / "proj" / "AGENTS.md").write_text(BENIGN + "\n")
    swapper = Swapper(root / "swap", outside)
    thread = _start(swapper, running)

    outcome = _attack(
        thread, root / "swap" / "proj", "[file:AGENTS.md]\n[prompt:cwd]\n", agent_host
    )
    swapper.stop.set()
    thread.join()

    assert swapper.swaps > 0 and outcome.benign > 0  # the attack really ran
    assert outcome.leaks == []
    assert _stored_leaks() == 0
    assert outcome.crashed == []


@pytest.mark.django_db
def test_confinement_file_component_swapped_for_symlink_leaks_nothing(
    layout: tuple[Path, Path], agent_host: User, running: list[threading.Thread]
) -> None:
    root, outside = layout
    (root / "proj" / "sub").mkdir(parents=True)
    (root / "proj" / "sub" / "secret.txt").write_text(BENIGN + "\n")
    swapper = Swapper(root / "proj" / "sub", outside)
    thread = _start(swapper, running)

    outcome = _attack(thread, root / "proj", "[file:sub/secret.txt]\n", agent_host)
    swapper.stop.set()
    thread.join()

    assert swapper.swaps > 0 and outcome.benign > 0
    assert outcome.leaks == []
    assert _stored_leaks() == 0
    assert outcome.crashed == []

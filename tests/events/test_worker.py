"""The real worker (``manage.py events_worker``, database backend) in its own process:
it delivers what the test process enqueues, and when it is stopped — gracefully, or
killed in the middle of a delivery — and started again, nothing is lost: each event
arrives, the interrupted one again with the same ``webhook-id``."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.models import Delivery, Event
from sysprompt.prompts.services import template_save
from tests.events.support import ALLOW_LOCAL, Received, Receiver, receiving
from tests.events.workers import LOADED, WorkerProcess, environment, wait_until


@pytest.fixture
def sysprompt(settings: Settings) -> dict[str, object]:
    values = {**ALLOW_LOCAL, "WEBHOOK_TIMEOUT": 2.0, "TASKS_QUEUE": f"tests-{os.getpid()}"}
    settings.SYSPROMPT = values
    return values


class Gate:
    """Holds the receiver's answer to a request while closed (the worker waits on it)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.held = threading.Event()

    def respond(self, received: Received) -> tuple[int, dict[str, str], bytes]:
        if not self.open.is_set():
            self.held.set()
            self.open.wait(timeout=30)
        return 200, {}, b"ok"


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def receiver(gate: Gate) -> Iterator[Receiver]:
    with receiving(gate.respond) as running:
        yield running


@pytest.fixture
def worker(
    transactional_db: None, sysprompt: dict[str, object], tmp_path: Path
) -> Iterator[WorkerProcess]:
    process = WorkerProcess(environment(sysprompt), tmp_path / "worker.log")
    yield process
    process.close()


def _subscribe(receiver: Receiver) -> User:
    author = User.objects.create_user("ada")
    receiver.secret = services.webhook_create(
        url=receiver.url, events=["template.saved"], author=author
    ).secret
    return author


def test_worker_delivers_and_catches_up_after_a_stop(
    worker: WorkerProcess, receiver: Receiver
) -> None:
    author = _subscribe(receiver)
    worker.start()
    template_save(text="one", author=author)
    receiver.wait_for(1)

    assert worker.stop() == 0
    template_save(text="two", author=author)  # while no worker runs
    template_save(text="three", author=author)
    worker.start()
    received = receiver.wait_for(3)

    assert [item.verified["data"]["version"] for item in received if item.verified] == [1, 2, 3]
    assert "events worker: database backend" in worker.log()


def test_worker_killed_mid_delivery_loses_nothing(
    worker: WorkerProcess, receiver: Receiver, gate: Gate
) -> None:
    author = _subscribe(receiver)
    worker.start()
    template_save(text="one", author=author)
    receiver.wait_for(1)

    gate.open.clear()
    template_save(text="two", author=author)
    assert gate.held.wait(timeout=LOADED), worker.log()
    worker.kill()  # in the middle of sending "two": its task stays "running" for ever
    gate.open.set()
    template_save(text="three", author=author)
    worker.start()
    wait_until(
        lambda: not Delivery.objects.exclude(state="delivered").exists(),
        what="every delivery delivered",
    )

    received = receiver.wait_for(4)
    versions = [item.verified["data"]["version"] for item in received if item.verified]
    assert sorted(set(versions)) == [1, 2, 3] and versions.count(2) == 2
    ids: dict[int, set[str]] = {
        item.verified["data"]["version"]: set() for item in received if item.verified
    }
    for item in received:
        assert item.verified is not None
        ids[item.verified["data"]["version"]].add(item.message_id)
    assert all(len(message_ids) == 1 for message_ids in ids.values())  # same webhook-id
    assert {next(iter(v)) for v in ids.values()} == set(
        Event.objects.values_list("message_id", flat=True)
    )


def test_worker_killed_mid_batch_loses_nothing(
    worker: WorkerProcess, receiver: Receiver, gate: Gate
) -> None:
    # shorter attempts, so the claims of the killed worker run out sooner (the lease
    # covers the three attempts it would make one after another)
    worker.env.update(SYSPROMPT_WEBHOOK_TIMEOUT="1", SYSPROMPT_WEBHOOK_CONNECT_TIMEOUT="0.5")
    author = _subscribe(receiver)
    gate.open.clear()
    for n in range(3):  # waiting in the outbox: the worker takes them as one batch
        template_save(text=f"version {n}", author=author)
    worker.start()
    assert gate.held.wait(timeout=LOADED), worker.log()
    wait_until(lambda: Delivery.objects.filter(locked_by__gt="").count() == 3, what="claims")
    worker.kill()  # the batch claimed, the first of it sent, none of it recorded
    gate.open.set()
    worker.start()
    wait_until(
        lambda: not Delivery.objects.exclude(state="delivered").exists(),
        timeout=LOADED,
        what="every delivery delivered",
    )

    received = receiver.wait_for(3)
    by_version: dict[int, set[str]] = {}
    for item in received:
        assert item.verified is not None
        by_version.setdefault(item.verified["data"]["version"], set()).add(item.message_id)
    assert sorted(by_version) == [1, 2, 3]
    assert all(len(message_ids) == 1 for message_ids in by_version.values())

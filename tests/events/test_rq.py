"""The RQ backend, on the Redis at ``TEST_REDIS_URL`` (``scripts/test`` starts a
throwaway one where none answers): the job is enqueued when the change commits, never
for a change that rolls back; a real RQ worker (``events_worker`` with
``SYSPROMPT_TASKS_BACKEND=rq``) delivers, survives being killed mid-delivery, and the
sweep sends what a commit could not enqueue because Redis did not answer.

Each test has a queue of its own, emptied afterwards, so runs side by side never share
one.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.models import Delivery, Event
from sysprompt.prompts.services import template_save
from tests import rq_queues
from tests.events.support import ALLOW_LOCAL, Receiver, receiving
from tests.events.test_worker import Gate
from tests.events.workers import LOADED, WorkerProcess, environment, wait_until

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def queue_name(request: pytest.FixtureRequest) -> str:
    return f"sysprompt-tests-{os.getpid()}-{request.node.name}"[:32]


def _use_rq(settings: Settings, queue: str, url: str) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": [queue]}}
    settings.RQ_QUEUES = {queue: {"URL": url}}


@pytest.fixture
def rq_settings(settings: Settings, queue_name: str) -> Iterator[dict[str, object]]:
    # The held delivery must still be in flight when the worker is killed, however long a
    # loaded machine takes to get there; its claim (2 × 20 + 5 s) ends well within LOADED.
    values = {**ALLOW_LOCAL, "WEBHOOK_TIMEOUT": 20.0, "TASKS_QUEUE": queue_name}
    settings.SYSPROMPT = values
    _use_rq(settings, queue_name, REDIS_URL)
    yield values
    _use_rq(settings, queue_name, REDIS_URL)
    rq_queues.emptied(queue_name)


@pytest.fixture
def worker(
    transactional_db: None, rq_settings: dict[str, object], tmp_path: Path
) -> Iterator[WorkerProcess]:
    env = environment(rq_settings, SYSPROMPT_TASKS_BACKEND="rq", REDIS_URL=REDIS_URL)
    process = WorkerProcess(env, tmp_path / "worker.log")
    yield process
    process.close()


def _subscribe(receiver: Receiver) -> User:
    author = User.objects.create_user("ada")
    receiver.secret = services.webhook_create(
        url=receiver.url, events=["template.saved"], author=author
    ).secret
    return author


def test_commit_enqueues_and_rollback_does_not(
    transactional_db: None, rq_settings: dict[str, object], queue_name: str
) -> None:
    author = User.objects.create_user("ada")
    services.webhook_create(url="https://ci.example.com/", events=["template.saved"], author=author)
    with rq_queues.opened(queue_name) as queue:
        with pytest.raises(RuntimeError), transaction.atomic():
            template_save(text="rolled back", author=author)
            assert queue.count == 0  # not before the commit
            raise RuntimeError("the change fails")
        assert queue.count == 0
        template_save(text="kept", author=author)

        assert queue.count == 1
        [job] = queue.get_jobs()
    assert job.kwargs["event_id"] == Event.objects.get().pk


def test_rq_worker_delivers_and_survives_a_kill(worker: WorkerProcess) -> None:
    gate = Gate()
    with receiving(gate.respond) as receiver:
        author = _subscribe(receiver)
        worker.start()
        template_save(text="one", author=author)
        receiver.wait_for(1)

        gate.open.clear()
        template_save(text="two", author=author)
        assert gate.held.wait(timeout=LOADED), worker.log()
        worker.kill()
        gate.open.set()
        template_save(text="three", author=author)
        worker.start()
        wait_until(
            lambda: not Delivery.objects.exclude(state="delivered").exists(),
            what="every delivery delivered",
        )
        received = receiver.wait_for(4)

    versions = sorted(item.verified["data"]["version"] for item in received if item.verified)
    assert versions == [1, 2, 2, 3]
    assert "events worker: rq backend" in worker.log()


def test_sweep_sends_what_redis_refused_at_commit(
    worker: WorkerProcess, settings: Settings, queue_name: str
) -> None:
    with receiving() as receiver:
        author = _subscribe(receiver)
        _use_rq(settings, queue_name, f"redis://127.0.0.1:{_closed_port()}/0")  # Redis away
        template_save(text="while Redis is away", author=author)
        assert not Event.objects.get().fanned_out  # the outbox kept it

        worker.start()  # with the real Redis: its sweep enqueues the event again
        [item] = receiver.wait_for(1)
        wait_until(lambda: Delivery.objects.filter(state="delivered").exists(), what="the log")

    assert item.verified is not None

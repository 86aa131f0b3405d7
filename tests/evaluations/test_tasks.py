"""Evaluations §3: runs go through Django's Tasks API on their own queue — a run's task
is enqueued as it starts; a webhook is delivered while a long run is in progress (the
webhooks' queue is worked apart); with the RQ backend (real Redis at ``TEST_REDIS_URL``)
two RQ worker processes share one run, each call made once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from pytest_django import Settings

from sysprompt.evaluations import services
from sysprompt.evaluations.background import run_slice
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import RunCall
from sysprompt.events import services as events
from sysprompt.prompts.services import template_save
from sysprompt.releases import services as releases
from tests import rq_queues
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import kill_tree, models_setting, wait_for
from tests.evaluations.test_worker import started_run, status
from tests.events.support import ALLOW_LOCAL, receiving
from tests.events.workers import REPO, database_url

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

Start = Callable[[list[str], dict[str, str]], subprocess.Popen[bytes]]


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Start]:
    started: list[subprocess.Popen[bytes]] = []

    def start(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(tmp_path / f"process-{len(started)}.log", "ab")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "manage.py", *command],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        started.append(process)
        return process

    yield start
    for process in started:
        kill_tree(process)


def _environment(
    settings: Settings, fake: FakeModel, allowed_root: Path, **extra: str
) -> dict[str, str]:
    models = models_setting(fake, max_concurrency=2)
    settings.SYSPROMPT = {
        **settings.SYSPROMPT,
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models,
        "EVAL_CLAIM_SECONDS": 1.5,
    }
    releases.production_ensure()
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "tests-only-not-a-secret",
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
        "SYSPROMPT_ALLOWED_ROOTS": str(allowed_root),
        "SYSPROMPT_MODELS": json.dumps(models),
        "SYSPROMPT_EVAL_CLAIM_SECONDS": "1.5",
        **extra,
    }


def test_run_start_enqueues_its_task_on_the_evaluations_queue(
    settings: Settings, fake: FakeModel, allowed_root: Path
) -> None:
    _environment(settings, fake, allowed_root)

    run = started_run(2)

    [task] = DBTaskResult.objects.all()
    assert task.queue_name == "evaluations"
    assert task.task_path == "sysprompt.evaluations.tasks.run_work"
    assert task.args_kwargs["kwargs"] == {"run_id": run.pk}


def test_webhook_is_delivered_while_a_long_run_is_in_progress(
    settings: Settings, fake: FakeModel, allowed_root: Path, processes: Start
) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    env = _environment(
        settings,
        fake,
        allowed_root,
        SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS="127.0.0.1,localhost",
        SYSPROMPT_WEBHOOK_ALLOW_PRIVATE="127.0.0.1",
        SYSPROMPT_WEBHOOK_TIMEOUT="2",
    )
    fake.control(latency_ms=600)
    with receiving() as receiver:
        author = User.objects.create_user("ada")
        receiver.secret = events.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).secret
        run = started_run(20)  # 40 calls, 2 at a time
        processes(["worker"], env)
        wait_for(lambda: RunCall.objects.filter(run=run, done=True).count() >= 2, seconds=120)
        # From now on each call waits far longer than the webhook may take on a loaded
        # machine: the run is surely still going when the delivery arrives, however
        # slow the machine (the test asserts what happens, not how fast).
        fake.control(latency_ms=600_000)
        receiver.received.clear()  # the saves of started_run, delivered meanwhile

        template_save(text="saved while the run goes on", author=author)
        receiver.wait_for(1, timeout=120)

        assert status(run) == "running"
        assert RunCall.objects.filter(run=run, done=False).count() >= 10


@pytest.fixture
def rq_queue(settings: Settings, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"sysprompt-eval-{os.getpid()}-{request.node.name}"[:32]
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": [name]}}
    settings.RQ_QUEUES = {name: {"URL": REDIS_URL}}
    settings.SYSPROMPT = {"EVAL_TASKS_QUEUE": name}
    yield name
    rq_queues.emptied(name)


def _rq_environment(
    settings: Settings, fake: FakeModel, allowed_root: Path, rq_queue: str
) -> dict[str, str]:
    """Worker processes on RQ: the runs on ``rq_queue``, the webhooks on one beside it."""
    return _environment(
        settings,
        fake,
        allowed_root,
        SYSPROMPT_TASKS_BACKEND="rq",
        REDIS_URL=REDIS_URL,
        SYSPROMPT_EVAL_TASKS_QUEUE=rq_queue,
        SYSPROMPT_TASKS_QUEUE=f"{rq_queue}-hooks"[:32],
    )


def test_rq_two_worker_processes_share_a_run_each_call_once(
    settings: Settings,
    fake: FakeModel,
    allowed_root: Path,
    rq_queue: str,
    processes: Start,
) -> None:
    env = _rq_environment(settings, fake, allowed_root, rq_queue)
    fake.control(latency_ms=1000)  # 10 s for one worker alone: both are up before the end
    run = started_run(10)
    with rq_queues.opened(rq_queue) as queue:
        assert queue.count == 1  # enqueued on commit

    processes(["evaluations_worker"], env), processes(["evaluations_worker"], env)
    wait_for(lambda: status(run) == "finished", seconds=180)

    assert len(fake.requests()) == run.total == 20
    assert fake.most_at_once() > 2  # one worker makes at most 2 calls at a time
    assert run.summary is not None and run.summary["regressions"] == 10


def test_rq_worker_killed_mid_run_resumes_without_calling_finished_items_again(
    settings: Settings,
    fake: FakeModel,
    allowed_root: Path,
    rq_queue: str,
    processes: Start,
) -> None:
    env = _rq_environment(settings, fake, allowed_root, rq_queue)
    fake.control(latency_ms=300)
    run = started_run(8)
    first = processes(["evaluations_worker"], env)
    wait_for(lambda: RunCall.objects.filter(run=run, done=True).count() >= 4)
    kill_tree(first)
    done_before = set(RunCall.objects.filter(run=run, done=True).values_list("pk", flat=True))

    processes(["evaluations_worker"], env)
    wait_for(lambda: status(run) == "finished", seconds=60)

    assert RunCall.objects.filter(run=run, done=True).count() == 16
    assert len(fake.requests()) - 16 <= 2  # at most the calls in flight at the kill
    assert (
        set(RunCall.objects.filter(pk__in=done_before, done=True).values_list("pk", flat=True))
        == done_before
    )


# The follower rule, in-process (each task a call of run_slice, as a worker makes it).


def _queued() -> list[DBTaskResult[Any, Any]]:
    return list(DBTaskResult.objects.ready().order_by("enqueued_at"))


def test_task_of_an_ended_run_does_nothing_and_enqueues_nothing(
    settings: Settings, fake: FakeModel, allowed_root: Path
) -> None:
    _environment(settings, fake, allowed_root)
    run = started_run(2)
    services.run_cancel(run_id=run.pk, author=None)
    before = DBTaskResult.objects.count()

    assert run_slice(run.pk) == "cancelled"

    assert DBTaskResult.objects.count() == before
    assert fake.requests() == []


def test_task_stopped_by_its_slice_leaves_one_follower_to_go_on(
    settings: Settings, fake: FakeModel, allowed_root: Path
) -> None:
    _environment(settings, fake, allowed_root)
    run = started_run(4)
    DBTaskResult.objects.all().delete()  # the run's first task: this call stands for it

    assert run_slice(run.pk, seconds=0) == "running"

    [follower] = _queued()
    assert follower.queue_name == "evaluations"
    assert follower.args_kwargs["kwargs"] == {"run_id": run.pk}
    assert run_slice(run.pk) == "finished"  # the follower's work: the rest of the run
    run.refresh_from_db()
    assert len(fake.requests()) == run.total == 8


def test_task_finding_every_call_held_looks_again_when_the_first_lease_runs_out(
    settings: Settings, fake: FakeModel, allowed_root: Path
) -> None:
    _environment(settings, fake, allowed_root)
    fake.control(latency_ms=1500)
    run = started_run(2)  # 4 calls: another worker (max_concurrency 2) claims them all
    DBTaskResult.objects.all().delete()

    def elsewhere() -> None:
        run_execute(run.pk, worker="elsewhere")
        connection.close()

    other = threading.Thread(target=elsewhere)
    other.start()
    try:
        wait_for(lambda: RunCall.objects.filter(run=run, claimed_by="elsewhere").count() == 4)
        asked = timezone.now()

        assert run_slice(run.pk) == "running"

        [task] = DBTaskResult.objects.all()
        assert task.args_kwargs["kwargs"] == {"run_id": run.pk}
        assert task.run_after is not None
        assert asked + timedelta(seconds=1) <= task.run_after <= asked + timedelta(seconds=2)
    finally:
        other.join(timeout=30)
    assert status(run) == "finished"
    assert len(fake.requests()) == 4  # the task took nothing

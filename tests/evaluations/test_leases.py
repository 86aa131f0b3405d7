"""Evaluations §3, the leases on claimed calls: a worker renews the lease of every call it
holds while it works, however long its coordinating thread is held up, so another
worker never makes that call again; a call another worker did take up (its holder died
or stalled) is logged with why. Real worker threads (``run_execute``) against the fake
model process, with a short ``EVAL_CLAIM_SECONDS``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone
from pytest_django import Settings

from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run, RunCall
from sysprompt.releases import services as releases
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import (
    case,
    kill_tree,
    models_setting,
    production_on_release,
    run,
    suite_with,
    wait_for,
)
from tests.events.workers import REPO, database_url

pytestmark = pytest.mark.django_db(transaction=True)

CLAIM_SECONDS = 2.0
SLOW = {"type": "regex", "pattern": "(a|aa)+$"}
"""Backtracks on an answer of many a's and a "!" until its time limit (0.25 s) stops it:
checking a cached answer against it holds the coordinating thread up."""


@pytest.fixture
def configured(settings: Settings, fake: FakeModel, allowed_root: Path) -> FakeModel:
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models_setting(fake, max_concurrency=2),
        "EVAL_CLAIM_SECONDS": CLAIM_SECONDS,
    }
    releases.production_ensure()
    production_on_release("ANSWER: " + "a" * 60 + "!", then="ANSWER: " + "a" * 60 + "!!")
    return fake


def _other_worker(run_id: int, stop: threading.Event) -> threading.Thread:
    """A second worker, taking the run up again and again (as followers do) until it ends."""

    def work() -> None:
        try:
            while not stop.is_set():
                if run_execute(run_id, worker="other") != "running":
                    return
                time.sleep(0.05)
        finally:
            connection.close()

    thread = threading.Thread(target=work)
    thread.start()
    return thread


def test_lease_is_renewed_while_the_worker_is_held_up_and_each_call_made_once(
    configured: FakeModel,
) -> None:
    # w's answers are in the cache; n0's and n1's need the (slow) model.
    suite_with("warm", case("w"))
    assert run_execute(run("warm", "latest", model="fake").pk) == "finished"
    suite_with("held", case("n0"), case("n1"), case("w", *[SLOW] * 8))
    configured.reset()
    configured.control(latency_ms=2500)  # each model call outlasts the claim
    held = run("held", "latest", model="fake")
    stop = threading.Event()

    def first() -> None:
        try:
            run_execute(held.pk, worker="first")
        finally:
            connection.close()

    # "first" claims n0's and n1's calls (two with the model at a time); as n0's come
    # back it takes w's cached answers up and checks them — seconds in its coordinating
    # thread — while n1's calls are with the model. Then another worker joins.
    worker = threading.Thread(target=first)
    worker.start()
    try:
        wait_for(lambda: RunCall.objects.filter(run=held, claimed_by="first").count() == 6, 60)
        other = _other_worker(held.pk, stop)
        wait_for(lambda: Run.objects.get(pk=held.pk).status == "finished", seconds=120)
    finally:
        stop.set()
        worker.join(timeout=120)
    other.join(timeout=120)

    made = [request["body"]["messages"][-1]["content"] for request in configured.requests()]
    assert sorted(made) == ["question n0"] * 2 + ["question n1"] * 2  # once each side
    calls = RunCall.objects.filter(run=held)
    assert calls.filter(done=True).count() == calls.count() == 6
    assert set(calls.values_list("claimed_by", flat=True)) == {"first"}


def test_call_taken_up_after_a_killed_workers_lease_ran_out_is_logged_with_why(
    configured: FakeModel, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    suite_with("style", case("one"), case("two"))
    configured.control(latency_ms=60_000)  # the worker is killed with its calls in flight
    started = run("style", "latest", model="fake")
    worker = _worker_process(configured, tmp_path)
    try:  # it claims all four calls (twice its max_concurrency), two with the model
        wait_for(
            lambda: RunCall.objects.filter(run=started).exclude(claimed_by="").count() == 4,
            seconds=120,  # the worker process starts slowly on a loaded machine
        )
        time.sleep(CLAIM_SECONDS)  # its leases renewed while it lives
    finally:
        kill_tree(worker)
    held: dict[int, tuple[str, datetime]] = {}
    for call in RunCall.objects.filter(run=started, done=False).exclude(claimed_by=""):
        assert call.claimed_until is not None
        held[call.pk] = (call.claimed_by, call.claimed_until)
    assert len(held) == 4
    configured.control(latency_ms=0)
    wait_for(lambda: all(until < timezone.now() for _, until in held.values()), seconds=10)

    with caplog.at_level(logging.WARNING, logger="sysprompt.evaluations"):
        assert run_execute(started.pk, worker="next") == "finished"

    said = [r.getMessage() for r in caplog.records if "is made again" in r.getMessage()]
    assert len(said) == 4
    for call_id, (holder, until) in held.items():
        [message] = [m for m in said if m.startswith(f"evaluation {started.pk}: call {call_id} ")]
        assert "is made again by next" in message
        assert f"worker {holder}'s lease ran out at {until.isoformat()}" in message
        assert "held up longer than SYSPROMPT_EVAL_CLAIM_SECONDS" in message


def _worker_process(fake: FakeModel, tmp_path: Path) -> subprocess.Popen[bytes]:
    """``manage.py evaluations_worker`` on the test database, with this module's settings."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "tests-only-not-a-secret",
        "DEBUG": "false",
        "SYSPROMPT_ALLOWED_ROOTS": str(tmp_path),
        "SYSPROMPT_MODELS": json.dumps(models_setting(fake, max_concurrency=2)),
        "SYSPROMPT_EVAL_CLAIM_SECONDS": str(CLAIM_SECONDS),
        "PYTHONUNBUFFERED": "1",
        "LOG_LEVEL": "INFO",
    }
    with open(tmp_path / "worker.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "manage.py", "evaluations_worker", "--interval", "0.1"],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

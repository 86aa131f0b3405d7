"""Evaluations §3: runs in the background, through the Tasks API's database backend —
real ``evaluations_worker`` processes share a run, survive a kill, stop on cancel, and
a stopped worker leaves the rest of its run to the next."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable

import pytest

from sysprompt.evaluations import services
from sysprompt.evaluations.models import Run, RunCall
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import case, kill_tree, production_on_release, suite_with, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

TABS = {"type": "contains", "value": "tabs"}


def started_run(cases: int) -> Run:
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    suite_with("bg", *(case(f"c{n}", TABS) for n in range(cases)))
    return services.run_create(suite="bg", candidate="latest", author=None)


def status(run: Run) -> str:
    run.refresh_from_db()
    return run.status


def test_worker_two_processes_share_a_run_each_call_once(
    workers: Callable[[], subprocess.Popen[bytes]], fake: FakeModel
) -> None:
    fake.control(latency_ms=200, gather=3)  # one worker makes at most 2 calls at a time
    run = started_run(8)
    workers(), workers()

    wait_for(lambda: status(run) == "finished")

    assert len(fake.requests()) == run.total == 16
    claimed = RunCall.objects.filter(run=run).values_list("claimed_by", flat=True)
    assert len({name.split(":")[1] for name in claimed}) == 2  # host:pid:task
    assert fake.most_at_once() > 2


def test_worker_killed_mid_run_resumes_without_calling_finished_items_again(
    workers: Callable[[], subprocess.Popen[bytes]], fake: FakeModel
) -> None:
    fake.control(latency_ms=300)
    run = started_run(8)
    first = workers()
    wait_for(lambda: RunCall.objects.filter(run=run, done=True).count() >= 4)
    kill_tree(first)
    done_before = set(RunCall.objects.filter(run=run, done=True).values_list("pk", flat=True))

    workers()
    wait_for(lambda: status(run) == "finished")

    requests = len(fake.requests())
    assert RunCall.objects.filter(run=run, done=True).count() == 16
    assert requests - 16 <= 2  # at most the calls in flight at the kill (max_concurrency 2)
    assert (
        set(RunCall.objects.filter(pk__in=done_before, done=True).values_list("pk", flat=True))
        == done_before
    )
    assert run.summary is not None and run.summary["regressions"] == 8


def test_worker_cancel_stops_a_running_run_before_its_end(
    workers: Callable[[], subprocess.Popen[bytes]], fake: FakeModel
) -> None:
    fake.control(latency_ms=400)
    run = started_run(20)
    workers()
    wait_for(lambda: status(run) == "running" and run.done >= 1)

    services.run_cancel(run_id=run.pk, author=None)
    wait_for(lambda: status(run) == "cancelled")

    assert run.done < run.total  # stopped, not run to its end


def test_worker_sigterm_lets_calls_in_flight_finish_and_be_saved(
    workers: Callable[[], subprocess.Popen[bytes]], fake: FakeModel
) -> None:
    fake.control(latency_ms=400)
    run = started_run(6)
    process = workers()
    wait_for(lambda: RunCall.objects.filter(run=run).exclude(claimed_by="").exists())

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0

    answered = len(fake.requests())
    assert RunCall.objects.filter(run=run, done=True).count() == answered
    assert status(run) == "running"

    workers()  # the task the stopped one left takes the rest up
    wait_for(lambda: status(run) == "finished")
    assert len(fake.requests()) == run.total == 12

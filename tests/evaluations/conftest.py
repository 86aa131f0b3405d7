"""The evaluations' tests: one fake model process per test module; real
``evaluations_worker`` processes on the test's database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_django import Settings

from sysprompt.releases import services as releases
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import kill_tree, models_setting
from tests.events.workers import REPO, database_url


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def fake(fake_model: FakeModel) -> FakeModel:
    """The module's fake model, its record and script cleared, no latency."""
    fake_model.reset()
    fake_model.control(latency_ms=0)
    return fake_model


@pytest.fixture
def workers(
    settings: Settings, fake: FakeModel, allowed_root: Path, tmp_path: Path
) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Start ``manage.py evaluations_worker`` processes (each call one more) on the
    test's database, with the fake model as ``fake`` (2 calls at once); killed at the
    end. The test must use ``django_db(transaction=True)``."""
    models = models_setting(fake, max_concurrency=2)
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models,
        "EVAL_CLAIM_SECONDS": 1.5,
    }
    releases.production_ensure()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "tests-only-not-a-secret",
        "DEBUG": "false",
        "SYSPROMPT_ALLOWED_ROOTS": str(allowed_root),
        "SYSPROMPT_MODELS": json.dumps(models),
        "SYSPROMPT_EVAL_CLAIM_SECONDS": "1.5",
    }
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        log = open(tmp_path / f"worker-{len(started)}.log", "ab")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "manage.py", "evaluations_worker", "--interval", "0.1"],
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

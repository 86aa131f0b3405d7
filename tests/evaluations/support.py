"""What the evaluations tests share: a fake-model endpoint setting, a publisher, a
working copy whose production release answers differently from latest, and the
stopping of worker processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User

from sysprompt.evaluations import services
from sysprompt.evaluations.models import Run
from sysprompt.prompts import services as prompts
from sysprompt.releases import services as releases
from tests.evaluations.fake_model_process import FakeModel
from tests.events.workers import descendants
from tests.releases.support import AUTHOR, PUBLISH, user


def models_setting(fake: FakeModel, **more: Any) -> dict[str, Any]:
    return {
        "fake": {
            "kind": "openai",
            "model": "fake-1",
            "base_url": f"{fake.url}/v1",
            "retries": 0,
            **more,
        },
        "fake-claude": {"kind": "anthropic", "model": "claude-fake", "base_url": fake.url},
    }


def publisher() -> User:
    return user("publisher", AUTHOR, PUBLISH)


def production_on_release(text: str, *, then: str) -> int:
    """Release the template ``text``, point production at it, then make ``then`` the
    working copy (latest); the release's number."""
    prompts.template_save(text=text)
    number = releases.release_create(message="reviewed", author=None).release.number
    releases.label_set(name="production", target={"release": number}, author=publisher())
    prompts.template_save(text=then)
    return number


def case(name: str, *checks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "messages": [{"role": "user", "content": f"question {name}"}],
        "checks": list(checks),
        **fields,
    }


def suite_with(name: str, *cases: dict[str, Any]) -> None:
    services.suite_create(name=name, author=None)
    for fields in cases:
        services.case_create(suite=name, fields=fields, author=None)


def run(suite: str, candidate: object, **options: Any) -> Run:
    return services.run_create(suite=suite, candidate=candidate, author=None, **options)


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the worker and the task workers under it: nothing finishes."""
    for pid in [process.pid, *descendants(process.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait(timeout=30)


def wait_for(condition: Callable[[], bool], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)

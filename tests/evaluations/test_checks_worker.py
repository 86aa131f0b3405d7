"""Issue 31, points 1 and 4, against a real ``evaluations_worker`` process: a stored
JSON Schema check that would fetch a URL or a file answers an error and fetches
nothing, and one whose ``unevaluatedProperties`` re-runs a pattern Python's ``re``
cannot finish lets the run finish.

Before: the worker fetched the ``$id`` — a listener that never answers held it for
ever (cancel and SIGTERM did not help), a file's content showed in the reason — and
``^(a+)+$`` on 40 a's ran in ``re`` for hours, holding the GIL.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.utils import timezone

from sysprompt.evaluations import services
from sysprompt.evaluations.models import Case, Run, RunCall, Suite
from tests.core.evaluations.listening import SECRET, Listener, id_trick, secret_file
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import case, production_on_release, suite_with, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

Workers = Callable[[], subprocess.Popen[bytes]]
FINISHES = 90
"""Seconds a run of two cases is given on a loaded machine; the attacks never end."""


@pytest.fixture
def silent() -> Iterator[Listener]:
    served = Listener(silent=True)
    yield served
    served.close()


def stored_case(suite: Suite, name: str, checks: list[dict[str, object]]) -> None:
    """A case as an older version stored it: its checks not refused then."""
    now = timezone.now()
    Case.objects.create(
        suite=suite,
        name=name,
        messages=[{"role": "user", "content": "answer"}],
        checks=checks,
        created_at=now,
        updated_at=now,
    )


def finished(run: Run) -> bool:
    run.refresh_from_db()
    return run.status == "finished"


def test_worker_stored_schema_that_would_fetch_is_an_error_and_fetches_nothing(
    workers: Workers, fake: FakeModel, silent: Listener, tmp_path: Path
) -> None:
    production_on_release('ANSWER: {"a": "x"}', then='ANSWER: {"a": "y"}')
    services.suite_create(name="fetch", author=None)
    suite = Suite.objects.get(name="fetch")
    for name, uri in (("silent", silent.url), ("file", secret_file(tmp_path))):
        stored_case(suite, name, [{"type": "json_schema", "schema": id_trick(uri)}])
    run = services.run_create(suite="fetch", candidate="latest", author=None)

    workers()
    wait_for(lambda: finished(run), seconds=FINISHES)

    assert silent.connections == []
    calls = RunCall.objects.filter(run=run)
    assert calls.count() == 4
    for call in calls:
        assert call.error.startswith(
            "the checks are refused: checks[0].schema: at x-hidden/properties/a/$id"
        ), call.error
        assert SECRET not in json.dumps([call.error, call.checks])
    assert fake.requests() == []  # a case that cannot be checked costs no model call
    assert run.summary is not None and run.summary["errors"] == 2


def test_worker_schema_pattern_python_re_cannot_finish_lets_the_run_finish(
    workers: Workers, fake: FakeModel
) -> None:
    key = "a" * 40 + "!"
    production_on_release(f'ANSWER: {{"{key}": 1}}', then='ANSWER: {"b": 1}')
    schema = {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False}
    suite_with("re", case("strict", {"type": "json_schema", "schema": schema}))
    run = services.run_create(suite="re", candidate="latest", author=None)

    workers()
    wait_for(lambda: finished(run), seconds=FINISHES)

    checks = {call.side: call.checks for call in RunCall.objects.filter(run=run)}
    assert checks["baseline"] == [
        {
            "type": "json_schema",
            "passed": False,
            "reason": f"unevaluated properties are not allowed ({key!r} unexpected)",
        }
    ]
    assert checks["candidate"] == [
        {
            "type": "json_schema",
            "passed": False,
            "reason": "unevaluated properties are not allowed ('b' unexpected)",
        }
    ]

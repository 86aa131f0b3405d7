"""Evaluations §5: ``manage.py evaluate`` starts a run, shows its progress on stderr,
prints the summary, writes JUnit XML and exits 0 (passed), 1 (failed) or 2 (error).
The run is done in-process (``--inline``); a worker is the point of test_worker.py."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from django.core.management import call_command
from django.utils import timezone
from pytest_django import Settings

from sysprompt.evaluations import services
from sysprompt.evaluations.models import Run, RunCall
from sysprompt.prompts.models import Prompt
from sysprompt.prompts.services import template_save
from sysprompt.releases import services as releases
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import case, models_setting, production_on_release, suite_with
from tests.events.workers import REPO, database_url

pytestmark = pytest.mark.django_db(transaction=True)


def evaluate(*arguments: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``manage.py evaluate``."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("evaluate", *arguments, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def configured(settings: Settings, fake: FakeModel, allowed_root: Path) -> FakeModel:
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(allowed_root)], "MODELS": models_setting(fake)}
    releases.production_ensure()
    return fake


def contains(text: str) -> dict[str, Any]:
    return {"type": "contains", "value": text}


def test_evaluate_exits_1_with_a_junit_failure_when_the_candidate_regresses(
    configured: FakeModel, tmp_path: Path
) -> None:
    production_on_release("Be brief.", then="Be long.")
    suite_with(
        "style",
        case("brief", contains("first line: Be brief")),
        case("asked", contains("question asked")),
    )
    junit = tmp_path / "junit.xml"

    code, out, err = evaluate(
        "--suite",
        "style",
        "--candidate",
        "latest",
        "--model",
        "echo",
        "--inline",
        "--junit",
        str(junit),
    )

    assert code == 1, (out, err)
    assert "1 regression(s)" in out
    assert "FAILED: 1 regression(s), at most 0" in out
    assert "finished: 4/4 calls" in err
    root = ElementTree.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "1", "0")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["brief"].find("failure") is not None
    assert "contains" in (cases["brief"].find("failure").text or "")  # type: ignore[union-attr]
    assert cases["asked"].find("failure") is None


def test_evaluate_exits_0_when_the_fake_model_passes_on_both_sides(
    configured: FakeModel, tmp_path: Path
) -> None:
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use tabs, always.")
    suite_with("style", case("indent", contains("tabs")), case("other", contains("Use")))
    junit = tmp_path / "junit.xml"

    code, out, _ = evaluate(
        "--suite", "style", "--candidate", "latest", "--baseline", "production",
        "--model", "fake", "--repeat", "2", "--inline", "--junit", str(junit),
    )  # fmt: skip

    assert code == 0, out
    assert "PASSED" in out
    assert "pass rate: baseline 100.0%, candidate 100.0%" in out
    assert len(configured.requests()) == 8  # 2 cases × 2 sides × 2 repetitions
    root = ElementTree.parse(junit).getroot()
    assert [c.get("name") for c in root.iter("testcase")] == ["indent", "other"]
    assert not list(root.iter("failure")) and not list(root.iter("error"))


def test_evaluate_exits_1_when_a_call_ends_in_an_error(configured: FakeModel) -> None:
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    suite_with("style", case("indent", contains("Use")))
    configured.control(script=[{"status": 400}])

    code, out, _ = evaluate(
        "--suite", "style", "--candidate", "latest", "--model", "fake", "--inline"
    )

    assert code == 1
    assert "1 case(s) ended in an error" in out
    assert out.splitlines()[0].endswith("— finished with 1 case(s) in error")  # said first


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("--suite", "missing", "--candidate", "latest"), "There is no suite 'missing'"),
        (("--suite", "style", "--candidate", "Bad Label"), "candidate.label"),
        (("--suite", "style", "--candidate", "latest", "--model", "nowhere"), "model"),
        (("--suite", "style", "--candidate", "99"), "candidate: There is no release 99"),
        (("--suite", "style", "--candidate", "latest", "--baseline", "7"), "baseline: There"),
        (
            ("--suite", "style", "--candidate", "latest", "--baseline", "staging"),
            "baseline.label: There is no label 'staging'",
        ),
    ],
)
def test_evaluate_exits_2_and_starts_nothing_when_the_run_cannot_start(
    configured: FakeModel, arguments: tuple[str, ...], said: str
) -> None:
    suite_with("style", case("indent", contains("Use")))

    code, _, err = evaluate(*arguments)

    assert code == 2
    assert said in err
    assert not Run.objects.exists()


def test_evaluate_exits_2_when_no_worker_takes_the_run_in_time(configured: FakeModel) -> None:
    suite_with("style", case("indent", contains("Use")))

    code, out, err = evaluate(
        "--suite", "style", "--candidate", "latest", "--wait-timeout", "0.2", "--poll", "0.05"
    )

    assert code == 2
    assert "is still queued after 0.2 s" in err
    assert "queued" in out
    assert Run.objects.get().status == "queued"


def test_evaluate_inline_exits_2_and_leaves_the_run_to_a_worker_after_the_timeout(
    configured: FakeModel,
) -> None:
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    suite_with("style", *(case(f"c{n}", contains("Use")) for n in range(8)))
    configured.control(latency_ms=300)  # 16 calls: 8 claimed at a time, 4 in flight

    code, _, err = evaluate(
        "--suite", "style", "--candidate", "latest", "--model", "fake", "--inline",
        "--wait-timeout", "0.3", "--poll", "0.05",
    )  # fmt: skip

    assert code == 2
    assert re.search(r"running: \d+/(0|16) calls", err), err  # 0: not yet prepared (loaded)
    assert "is still running after 0.3 s" in err
    run = Run.objects.get()
    assert run.status == "running" and run.done < 16  # left to a worker
    assert run.done == RunCall.objects.filter(run=run, done=True).count()  # claimed, saved


def test_evaluate_naming_no_model_uses_the_configured_real_model_and_says_so(
    configured: FakeModel,
) -> None:
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    suite_with("style", case("indent", contains("tabs")))

    code, out, err = evaluate("--suite", "style", "--candidate", "latest", "--inline")

    run = Run.objects.get()
    assert code == 1, (out, err)
    assert err.splitlines()[0] == (
        f"evaluation {run.pk} started (suite style, model fake (the default: none was "
        "named); at most 2 model call(s))"
    )
    assert "model fake (the default: none was named)" in out
    assert len(configured.requests()) == 2  # the real model answered, not echo


def test_evaluate_in_another_shell_uses_the_models_of_the_env_file(
    fake: FakeModel, allowed_root: Path, tmp_path: Path
) -> None:
    releases.production_ensure()
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    suite_with("style", case("indent", contains("tabs")))
    env_file = tmp_path / "sysprompt.env"
    env_file.write_text(
        "# the models, for every shell and the worker\n"
        f"SYSPROMPT_MODELS='{json.dumps(models_setting(fake))}'\n"
        f"SYSPROMPT_ALLOWED_ROOTS={allowed_root}\n"
    )
    shell = {  # a shell that exported none of the app's settings
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SYSPROMPT_", "DJANGO_")) and key != "DATABASE_URL"
    }

    result = subprocess.run(
        [sys.executable, "manage.py", "evaluate", "--suite", "style", "--candidate", "latest"]
        + ["--inline"],
        cwd=REPO,
        env=shell
        | {
            "SYSPROMPT_ENV_FILE": str(env_file),
            "DATABASE_URL": database_url(),
            "SECRET_KEY": "tests-only-not-a-secret",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    run = Run.objects.get()
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.splitlines()[0] == (
        f"evaluation {run.pk} started (suite style, model fake (the default: none was "
        "named); at most 2 model call(s))"
    )
    assert (run.baseline_model, run.candidate_model, run.default_model) == ("fake", "fake", True)
    assert len(fake.requests()) == 2  # the file's model answered, not echo


def test_evaluate_exits_2_when_a_limit_refuses_the_run(
    configured: FakeModel, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_MAX_CALLS_PER_RUN": 1}
    suite_with("style", case("indent", contains("tabs")))

    code, _, err = evaluate("--suite", "style", "--candidate", "latest")

    assert code == 2
    assert "evaluate: calls: This run would make up to 2 model calls" in err
    assert not Run.objects.exists()


def test_evaluate_with_prompt_runs_that_prompts_suite_on_its_working_copy(
    configured: FakeModel,
) -> None:
    now = timezone.now()
    triage = Prompt.objects.create(name="support/triage", created_at=now, updated_at=now)
    template_save(text="Default first.", author=None)
    template_save(text="Triage first.", author=None, prompt=triage)
    services.suite_create(name="smoke", author=None, prompt=triage)
    services.case_create(
        suite="smoke",
        fields=case("one", contains("first line: Triage first.")),
        author=None,
        prompt=triage,
    )

    code, out, err = evaluate(
        "--prompt", "support/triage", "--suite", "smoke", "--candidate", "latest",
        "--baseline", "latest", "--model", "echo", "--inline",
    )  # fmt: skip
    unknown = evaluate("--prompt", "nowhere", "--suite", "smoke", "--candidate", "latest")
    in_default = evaluate("--suite", "smoke", "--candidate", "latest")

    assert code == 0, (out, err)
    assert "PASSED" in out
    assert list(Run.objects.values_list("prompt__name", flat=True)) == ["support/triage"]
    assert unknown[0] == 2
    assert "nowhere" in unknown[2]
    assert in_default[0] == 2  # default has no suite smoke

"""``gate_check`` and ``run_gate``: the rule one run is held to (the label move and
``manage.py evaluate`` share it), on runs as the database keeps them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt.evaluations import services as evaluations
from sysprompt.evaluations.gate import gate_check, run_gate
from sysprompt.evaluations.management.commands.evaluate import thresholds_for
from sysprompt.evaluations.models import Run, Suite
from sysprompt.model_endpoints import ECHO
from sysprompt.releases import services
from sysprompt.releases.gates import Gate
from sysprompt_core.evaluations.report import Thresholds
from tests.releases.gate_support import release_of

pytestmark = pytest.mark.django_db

PASSING = {"regressions": 0, "errors": 0, "candidate": {"pass_rate": 1.0}}
ON_ECHO = (ECHO,)


def stored(status: str = "finished", **summary: Any) -> Run:
    if not Suite.objects.filter(name="style").exists():
        evaluations.suite_create(name="style", author=None)
    run = evaluations.run_create(suite="style", candidate="latest", author=None)
    Run.objects.filter(pk=run.pk).update(status=status, summary={**PASSING, **summary})
    return Run.objects.select_related("suite").get(pk=run.pk)


@pytest.mark.parametrize(
    ("gate", "summary", "reason"),
    [
        (Gate("style", models=ON_ECHO), {}, None),
        (
            Gate("style", models=ON_ECHO),
            {"regressions": 2},
            "run {id} regressed 2 cases (at most 0 allowed)",
        ),
        (Gate("style", max_regressions=2, models=ON_ECHO), {"regressions": 2}, None),
        (
            Gate("style", min_pass_rate=0.8, models=ON_ECHO),
            {"candidate": {"pass_rate": 0.75}},
            "run {id}'s candidate pass rate 75% is below 80%",
        ),
        (
            Gate("style", min_pass_rate=0.75, models=ON_ECHO),
            {"candidate": {"pass_rate": 0.75}},
            None,
        ),
        (Gate("style", models=ON_ECHO), {"errors": 1}, "run {id} had 1 case in error"),
    ],
)
def test_gate_check_thresholds(gate: Gate, summary: dict[str, Any], reason: str | None) -> None:
    run = stored(**summary)

    reasons = gate_check(run, gate)

    assert reasons == ([] if reason is None else [reason.format(id=run.pk)])


@pytest.mark.parametrize("status", ["queued", "running", "failed", "cancelled"])
def test_gate_check_unfinished_run_fails(status: str) -> None:
    run = stored(status)

    assert gate_check(run, Gate("style", models=ON_ECHO)) == [
        f"run {run.pk} is {status}, not finished"
    ]


def test_gate_check_cases_changed_after_the_run_fail() -> None:
    run = stored()
    Suite.objects.filter(name="style").update(
        cases_changed_at=run.created_at + timedelta(seconds=1)
    )
    run = Run.objects.select_related("suite").get(pk=run.pk)

    assert gate_check(run, Gate("style", models=ON_ECHO)) == [
        f"cases of suite style changed after run {run.pk} started"
    ]


def test_run_gate_is_the_baseline_labels_gate_when_it_names_the_suite() -> None:
    run = stored()
    boss = User.objects.create_superuser("boss", "", None)
    number = release_of("Use tabs.")
    gate = {"suite": "style", "max_regressions": 3, "min_pass_rate": 0.5, "models": [ECHO]}
    services.label_set(name="production", target={"release": number}, gate=gate, author=boss)

    assert run_gate(run) == Gate("style", 3, 0.5, ON_ECHO)
    assert run_gate(stored()) == Gate("style", 3, 0.5, ON_ECHO)
    evaluations.suite_create(name="other", author=None)
    services.label_set(
        name="production",
        target={"release": number},
        gate={"suite": "other", "models": [ECHO]},
        author=boss,
    )
    assert run_gate(run) == Gate("style")  # the label's gate is another suite's


def test_evaluate_command_thresholds_are_the_run_gate() -> None:
    run = stored()
    boss = User.objects.create_superuser("boss", "", None)
    number = release_of("Use tabs.")
    gate = {"suite": "style", "max_regressions": 2, "min_pass_rate": 0.75, "models": [ECHO]}

    before = thresholds_for(run)
    services.label_set(name="production", target={"release": number}, gate=gate, author=boss)

    assert before == Thresholds()
    assert thresholds_for(run) == Thresholds(max_regressions=2, min_pass_rate=0.75)

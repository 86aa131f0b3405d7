"""Issue 31, point 7 and issue 32, point 2 (the gate's half): a gate names the models
its runs must use, and a run in error is no evidence.

Runs are made in-process against the fake model process (OpenAI's and Anthropic's
SDKs over loopback) and the built-in ``echo``. The releases answer ``ANSWER: tabs``
(``old``) and ``ANSWER: spaces`` (``bad``); the case's check wants the answer
``tabs`` exactly: the fake model passes it on ``old`` and fails it on ``bad``, while
``echo`` (which quotes the prompt) fails every check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.errors import GateNotPassed, InvalidInput
from sysprompt.evaluations import services as evaluations
from sysprompt.evaluations.models import Run, RunCall
from sysprompt.releases import services
from sysprompt.releases.models import Label
from sysprompt.releases.selectors import label_get
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import models_setting
from tests.releases.gate_support import add_case, executed, release_of
from tests.releases.support import AUTHOR, PUBLISH, user

pytestmark = pytest.mark.django_db(transaction=True)

EXACTLY_TABS = {"type": "equals", "value": "tabs"}


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def fake(fake_model: FakeModel, settings: Settings, allowed_root: Path) -> FakeModel:
    """The fake model as ``fake`` (OpenAI, the default model: the first named) and
    ``fake-claude`` (Anthropic) beside the built-in ``echo``."""
    fake_model.reset()
    fake_model.control(latency_ms=0)
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models_setting(fake_model),
    }
    services.production_ensure()
    return fake_model


@pytest.fixture
def boss() -> User:
    return user("boss", AUTHOR, PUBLISH)


@dataclass(frozen=True)
class Releases:
    old: int
    good: int
    bad: int


@pytest.fixture
def made(fake: FakeModel, boss: User) -> Releases:
    """production on ``old``, ungated yet; suite ``style`` with one case."""
    made = Releases(
        old=release_of("ANSWER: tabs"),
        good=release_of("ANSWER: tabs\nBe kind."),
        bad=release_of("ANSWER: spaces"),
    )
    evaluations.suite_create(name="style", author=None)
    add_case("indent", EXACTLY_TABS)
    services.label_set(name="production", target={"release": made.old}, author=boss)
    return made


def gate(boss: User, **fields: Any) -> None:
    """Gate production (on release ``old``) on suite ``style``."""
    old = label_get("production").target.as_json()
    services.label_set(
        name="production", target=old, gate={"suite": "style", **fields}, author=boss
    )


def move(boss: User, release: int) -> list[str]:
    """The gate's reasons against moving production to ``release``; [] when it moved."""
    try:
        services.label_set(name="production", target={"release": release}, author=boss)
    except GateNotPassed as refused:
        return refused.reasons
    assert label_get("production").target.as_json() == {"release": release}
    return []


def test_gate_newer_run_with_an_echo_baseline_does_not_hide_a_regression(
    made: Releases, boss: User
) -> None:
    gate(boss, models=["fake"])
    regressed = executed({"release": made.bad}, model="fake")
    hiding = executed({"release": made.bad}, candidate_model="fake", baseline_model="echo")
    assert (regressed.summary or {})["regressions"] == 1
    assert (hiding.summary or {})["regressions"] == 0  # echo's baseline failed too

    assert move(boss, made.bad) == [f"run {regressed.pk} regressed 1 case (at most 0 allowed)"]


def test_gate_left_without_models_is_the_default_model_as_named(made: Releases, boss: User) -> None:
    gate(boss)

    shown = label_get("production").gate
    stored = Label.objects.get(name="production").gate
    assert shown is not None and shown.as_json()["models"] == ["fake"]
    assert isinstance(stored, dict) and stored["models"] == ["fake"]


def test_gate_run_on_echo_does_not_count_for_the_default_model(made: Releases, boss: User) -> None:
    gate(boss)
    on_echo = executed({"release": made.good}, model="echo")

    assert move(boss, made.good) == [
        f"no run of suite style on model fake compares release {made.good} with what "
        f"production serves now (release {made.old}): run {on_echo.pk} used echo "
        "(candidate) and echo (baseline)"
    ]
    executed({"release": made.good}, model="fake")
    assert move(boss, made.good) == []


def test_gate_with_two_models_needs_a_passing_run_on_each(made: Releases, boss: User) -> None:
    gate(boss, models=["fake", "fake-claude"])
    executed({"release": made.good}, model="fake")

    reasons = move(boss, made.good)

    assert reasons == [
        f"no run of suite style on model fake-claude compares release {made.good} with what "
        f"production serves now (release {made.old}): run {Run.objects.latest('id').pk} "
        "used fake (candidate) and fake (baseline)"
    ]
    executed({"release": made.good}, model="fake-claude")
    assert move(boss, made.good) == []


def test_gate_stored_before_models_reads_the_default_model(made: Releases, boss: User) -> None:
    old_style = {"suite": "style", "max_regressions": 0, "min_pass_rate": 0.0}
    Label.objects.filter(name="production").update(gate=old_style)
    executed({"release": made.good}, model="echo")

    assert label_get("production").gate.as_json()["models"] == ["fake"]  # type: ignore[union-attr]
    assert "run" in move(boss, made.good)[0]  # echo's run does not count
    executed({"release": made.good}, model="fake")
    assert move(boss, made.good) == []


def test_gate_stored_before_models_counts_no_run_while_the_default_is_echo(
    made: Releases, boss: User, settings: Settings
) -> None:
    old_style = {"suite": "style", "max_regressions": 0, "min_pass_rate": 0.0}
    Label.objects.filter(name="production").update(gate=old_style)
    settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_DEFAULT_MODEL": "echo"}
    executed({"release": made.good}, model="echo")

    assert move(boss, made.good) == [
        "the gate names no model, and the default model is an echo, which answers without "
        "a model: no run counts until the gate names its models"
    ]


@pytest.mark.parametrize(
    "setting",
    [
        {"EVAL_DEFAULT_MODEL": "echo"},
        {"MODELS": {"mirror": {"kind": "echo"}}},  # an echo under another name
    ],
    ids=["echo", "echo kind"],
)
def test_gate_without_models_while_the_default_is_an_echo_is_refused(
    made: Releases, boss: User, settings: Settings, setting: dict[str, Any]
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, **setting}

    with pytest.raises(InvalidInput) as refused:
        gate(boss)

    assert refused.value.field == "gate.models"
    assert label_get("production").gate is None
    gate(boss, models=["echo"])  # named, echo counts
    assert label_get("production").gate.models == ("echo",)  # type: ignore[union-attr]


def test_gate_run_whose_every_call_failed_is_refused(
    made: Releases, boss: User, fake: FakeModel
) -> None:
    gate(boss, models=["fake"])
    fake.control(script=[{"status": 500}] * 4)
    failed = executed({"release": made.good}, model="fake")
    assert failed.status == "finished"
    assert not RunCall.objects.filter(run=failed, error="").exists()

    assert move(boss, made.good) == [f"run {failed.pk} had 1 case in error"]


def test_gate_errors_are_read_from_the_runs_calls_not_its_summary(
    made: Releases, boss: User, fake: FakeModel
) -> None:
    gate(boss, models=["fake"])
    fake.control(script=[{"status": 500}] * 4)
    failed = executed({"release": made.good}, model="fake")
    green = {**(failed.summary or {}), "errors": 0, "regressions": 0}
    Run.objects.filter(pk=failed.pk).update(summary=green)  # a summary that counts no error

    assert move(boss, made.good) == [f"run {failed.pk} had 1 case in error"]

"""Evaluations §4 through the releases services: every move of a gated label (set,
rollback, publish) needs a passing run, or a publisher's forced move with a message."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import GateForceForbidden, GateNotPassed, InvalidInput
from sysprompt.evaluations import services as evaluations
from sysprompt.events.models import AuditRecord
from sysprompt.model_endpoints import ECHO
from sysprompt.prompts import services as prompts
from sysprompt.releases import services
from sysprompt.releases.models import Label, Release
from sysprompt.releases.selectors import label_get
from tests.releases.gate_support import TABS, add_case, executed, gated, release_of
from tests.releases.support import AUTHOR, PUBLISH, user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _roots(allowed_root: Path) -> None:
    services.production_ensure()


@pytest.fixture
def boss() -> User:
    return user("boss", AUTHOR, PUBLISH)


def refusal(boss: User, target: object, force: bool = False, message: str = "") -> GateNotPassed:
    with pytest.raises(GateNotPassed) as refused:
        services.label_set(
            name="production", target=target, force=force, message=message, author=boss
        )
    return refused.value


def arm(release: int, weight: int) -> dict[str, int]:
    return {"release": release, "weight": weight}


def serves() -> object:
    return label_get("production").target.as_json()


def test_gate_without_run_is_refused_naming_the_suite(boss: User) -> None:
    made = gated(boss)

    error = refusal(boss, {"release": made.good})

    assert "suite 'style'" in str(error)
    assert error.reasons == [
        f"no finished run of suite style on model echo with release {made.good} as candidate and "
        f"production (release {made.old}) as baseline"
    ]
    assert serves() == {"release": made.old}


def test_gate_passing_run_lets_the_label_move(boss: User) -> None:
    made = gated(boss)
    executed({"release": made.good})

    done = services.label_set(name="production", target={"release": made.good}, author=boss)

    assert done.moved and serves() == {"release": made.good}


def test_gate_run_against_the_same_release_as_baseline_counts(boss: User) -> None:
    made = gated(boss)
    executed({"release": made.good}, baseline={"release": made.old})

    services.label_set(name="production", target={"release": made.good}, author=boss)

    assert serves() == {"release": made.good}


def test_gate_regressed_run_is_refused(boss: User) -> None:
    made = gated(boss)
    run = executed({"release": made.bad})

    error = refusal(boss, {"release": made.bad})

    assert error.reasons == [f"run {run.pk} regressed 1 case (at most 0 allowed)"]


def test_gate_regressions_within_the_allowance_pass(boss: User) -> None:
    made = gated(boss, max_regressions=1)
    executed({"release": made.bad})

    services.label_set(name="production", target={"release": made.bad}, author=boss)

    assert serves() == {"release": made.bad}


def test_gate_pass_rate_below_the_minimum_is_refused(boss: User) -> None:
    made = gated(boss, min_pass_rate=0.9)
    add_case("never", {"type": "contains", "value": "never there"})
    run = executed({"release": made.good})

    error = refusal(boss, {"release": made.good})

    assert error.reasons == [f"run {run.pk}'s candidate pass rate 50% is below 90%"]


def test_gate_run_with_errors_is_refused(boss: User, allowed_root: Path) -> None:
    made = gated(boss)
    services.test_context_save(name="laptop", fields={"cwd": str(allowed_root)}, author=boss)
    add_case("broken", TABS, context={"test_context": "laptop"})
    services.test_context_delete(name="laptop", author=boss)  # the case can no longer render
    run = executed({"release": made.good})

    error = refusal(boss, {"release": made.good})

    assert error.reasons == [f"run {run.pk} had 1 case in error"]


def test_gate_cases_changed_after_the_run_are_refused(boss: User) -> None:
    made = gated(boss)
    run = executed({"release": made.good})
    add_case("new", TABS)

    error = refusal(boss, {"release": made.good})

    assert error.reasons == [f"cases of suite style changed after run {run.pk} started"]


@pytest.mark.parametrize("baseline", ["latest", "good", "staging"])
def test_gate_run_with_another_baseline_is_refused(boss: User, baseline: str) -> None:
    made = gated(boss)
    services.label_set(name="staging", target={"release": made.old}, author=boss)
    side = {"latest": "latest", "good": made.good, "staging": {"label": "staging"}}[baseline]
    run = executed({"release": made.good}, baseline=side)

    error = refusal(boss, {"release": made.good})

    assert error.reasons == [
        f"no run of suite style on model echo compares release {made.good} with what "
        f"production serves now (release {made.old}): run {run.pk} had another baseline"
    ]


def test_gate_run_against_the_label_when_it_served_another_target_is_refused(
    boss: User,
) -> None:
    made = gated(boss)
    run = executed({"release": made.good})  # production was on `old`
    services.label_set(
        name="production", target={"release": made.bad}, force=True, message="hotfix", author=boss
    )

    error = refusal(boss, {"release": made.good})

    assert f"run {run.pk} had another baseline" in error.reasons[0]


def test_gate_split_including_a_new_release_needs_its_run(boss: User) -> None:
    made = gated(boss)
    canary = {"split": [arm(made.old, 9000), arm(made.good, 1000)]}

    error = refusal(boss, canary)
    assert f"release {made.good} as candidate" in error.reasons[0]

    executed({"release": made.good})
    services.label_set(name="production", target=canary, author=boss)
    assert serves() == canary


def test_gate_split_of_releases_served_already_needs_no_run(boss: User) -> None:
    made = gated(boss)
    executed({"release": made.good})
    wide = {"split": [arm(made.old, 5000), arm(made.good, 5000)]}
    services.label_set(name="production", target=wide, author=boss)

    services.label_set(name="production", target={"release": made.good}, author=boss)

    assert serves() == {"release": made.good}


@pytest.mark.parametrize("force", [False, True])
def test_gate_label_cannot_follow_latest_even_forced(boss: User, force: bool) -> None:
    gated(boss)

    error = refusal(boss, "latest", force=force, message="ship it")

    assert "cannot follow latest" in error.reasons[0]


def test_gate_cannot_be_set_on_a_label_that_follows_latest(boss: User) -> None:
    evaluations.suite_create(name="style", author=None)

    with pytest.raises(InvalidInput) as refused:
        services.label_set(
            name="production",
            target="latest",
            gate={"suite": "style", "models": [ECHO]},
            author=boss,
        )

    assert refused.value.field == "gate"
    assert Label.objects.get(name="production").gate is None


@pytest.mark.parametrize(
    ("gate", "field"),
    [
        ({"suite": "nowhere"}, "gate.suite"),
        ({"suite": "style", "max_regressions": -1}, "gate.max_regressions"),
        ({"suite": "style", "min_pass_rate": 1.5}, "gate.min_pass_rate"),
        ({"suite": "style", "extra": 1}, "gate"),
        ({"suite": "style"}, "gate.models"),  # the default model is echo: name it
        ({"suite": "style", "models": []}, "gate.models"),
        ({"suite": "style", "models": ["nowhere"]}, "gate.models"),
        ({"suite": "style", "models": [ECHO, ECHO]}, "gate.models"),
        ({"suite": "style", "models": ECHO}, "gate.models"),
        ("style", "gate"),
    ],
)
def test_gate_bad_gate_is_refused_naming_the_field(boss: User, gate: object, field: str) -> None:
    evaluations.suite_create(name="style", author=None)
    number = release_of("Use tabs.")

    with pytest.raises(InvalidInput) as refused:
        services.label_set(name="staging", target={"release": number}, gate=gate, author=boss)

    assert refused.value.field == field
    assert not Label.objects.filter(name="staging").exists()


def test_gate_set_and_removed_is_audited(boss: User) -> None:
    made = gated(boss, max_regressions=2, min_pass_rate=0.5)
    assert label_get("production").gate is not None

    services.label_set(name="production", target={"release": made.old}, gate=None, author=boss)

    assert label_get("production").gate is None
    gates = AuditRecord.objects.filter(action="label.gate").order_by("id")
    assert list(gates.values_list("summary", flat=True)) == [
        "gated label production on suite style (max regressions 2, min pass rate 0.5, models echo)",
        "removed the gate of label production",
    ]


def test_gate_forced_move_with_a_message_moves_and_is_audited(boss: User) -> None:
    made = gated(boss)

    done = services.label_set(
        name="production",
        target={"release": made.bad},
        force=True,
        message="incident 42",
        author=boss,
    )

    assert done.moved and serves() == {"release": made.bad}
    forced = AuditRecord.objects.get(action="label.forced")
    assert forced.actor == "boss"
    assert "incident 42" in forced.summary and "no finished run of suite style" in forced.summary
    assert AuditRecord.objects.filter(action="label.moved").exists()


def test_gate_forced_move_without_a_message_is_refused(boss: User) -> None:
    made = gated(boss)

    with pytest.raises(InvalidInput) as refused:
        services.label_set(name="production", target={"release": made.bad}, force=True, author=boss)

    assert refused.value.field == "message"
    assert serves() == {"release": made.old}


def test_gate_forced_move_needs_a_publisher(boss: User) -> None:
    made = gated(boss)
    services.label_set(
        name="staging",
        target={"release": made.old},
        gate={"suite": "style", "models": [ECHO]},
        author=boss,
    )
    writer = user("writer", AUTHOR)

    with pytest.raises(GateForceForbidden):
        services.label_set(
            name="staging", target={"release": made.bad}, force=True, message="x", author=writer
        )
    with pytest.raises(GateNotPassed):  # the writer may move it: with a passing run
        services.label_set(name="staging", target={"release": made.bad}, author=writer)


def test_gate_rollback_goes_through_the_gate(boss: User) -> None:
    made = gated(boss)
    executed({"release": made.good})
    services.label_set(name="production", target={"release": made.good}, author=boss)

    with pytest.raises(GateNotPassed):
        services.label_rollback(name="production", author=boss)
    services.label_rollback(name="production", force=True, message="back", author=boss)

    assert serves() == {"release": made.old}


def test_gate_publish_goes_through_the_gate_and_leaves_no_release(boss: User) -> None:
    made = gated(boss)
    with pytest.raises(GateNotPassed):
        services.release_publish(label="production", candidate=made.bad, author=boss)
    prompts.template_save(text="Use nothing.")
    releases_before = Release.objects.count()

    with pytest.raises(GateNotPassed):
        services.release_publish(label="production", candidate="latest", author=boss)

    assert Release.objects.count() == releases_before
    assert serves() == {"release": made.old}


def test_gate_ungated_label_moves_as_before(boss: User) -> None:
    made = gated(boss)

    services.label_set(name="staging", target="latest", author=boss)
    services.label_set(name="staging", target={"release": made.bad}, author=boss)

    assert label_get("staging").target.as_json() == {"release": made.bad}

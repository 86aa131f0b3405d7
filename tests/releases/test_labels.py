"""Releases §2, §4: labels, their moves and history, protection and rollback."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import InvalidInput, LabelNotFound, LabelProtected, ReleaseNotFound
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Label, LabelMove
from sysprompt_core.releases import LATEST, Arm, Single, Split
from tests.releases.support import save

pytestmark = pytest.mark.django_db

SPLIT = {"split": [{"release": 1, "weight": 9000}, {"release": "latest", "weight": 1000}]}


@pytest.fixture
def release(writer: User) -> int:
    save("core", "v1")
    return services.release_create(author=writer).release.number


def snapshot() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    labels = list(Label.objects.order_by("pk").values_list())
    moves = list(LabelMove.objects.order_by("pk").values_list())
    return labels, moves


def test_production_follows_latest_and_is_protected_on_a_fresh_install() -> None:
    production = selectors.label_get("production")

    assert production.target == Single(LATEST)
    assert production.protected and production.follows_latest
    [created] = selectors.label_history("production")
    assert (created.from_target, created.to_target) == (None, "latest")


def test_production_answers_latest_when_its_row_is_missing() -> None:
    LabelMove.objects.all().delete()
    Label.objects.all().delete()

    assert selectors.label_get("production").target == Single(LATEST)
    assert [label.name for label in selectors.labels_list()] == ["production"]


def test_label_set_creates_moves_and_keeps_every_move(writer: User, release: int) -> None:
    created = services.label_set(name="staging", target="latest", message="new", author=writer)
    moved = services.label_set(
        name="staging", target={"release": release}, message="ship 1", author=writer
    )
    split = services.label_set(name="staging", target=SPLIT, message="canary", author=writer)

    assert (created.created, created.moved) == (True, True)
    assert (moved.created, moved.moved) == (False, True)
    assert split.label.target == Split((Arm(1, 9000), Arm(LATEST, 1000)))
    history = [
        (move.from_target, move.to_target, move.message, move.author.username)  # type: ignore[union-attr]
        for move in selectors.label_history("staging")
    ]
    assert history == [
        ({"release": 1}, SPLIT, "canary", "writer"),
        ("latest", {"release": 1}, "ship 1", "writer"),
        (None, "latest", "new", "writer"),
    ]


def test_label_set_writes_nothing_when_nothing_changes(writer: User) -> None:
    services.label_set(name="staging", target="latest", author=writer)
    before = snapshot()

    again = services.label_set(name="staging", target="latest", message="again", author=writer)

    assert not again.moved
    assert snapshot() == before


def test_label_set_protected_label_needs_the_publish_permission(
    writer: User, publisher: User, release: int
) -> None:
    before = snapshot()

    with pytest.raises(LabelProtected) as caught:
        services.label_set(name="production", target={"release": release}, author=writer)

    assert "releases.publish_release" in str(caught.value)
    assert snapshot() == before
    moved = services.label_set(name="production", target={"release": release}, author=publisher)
    assert moved.label.target == Single(release)


def test_label_set_authors_protect_a_label_and_only_publishers_unprotect_it(
    writer: User, publisher: User
) -> None:
    services.label_set(name="staging", target="latest", protected=True, author=writer)

    with pytest.raises(LabelProtected):
        services.label_set(name="staging", target="latest", protected=False, author=writer)
    unprotected = services.label_set(
        name="staging", target="latest", protected=False, author=publisher
    )

    assert not unprotected.label.protected
    assert [move.to_target for move in selectors.label_history("staging")] == ["latest"]


def test_label_set_refuses_to_unprotect_production(publisher: User) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.label_set(name="production", target="latest", protected=False, author=publisher)

    assert caught.value.field == "protected"
    assert selectors.label_get("production").protected


@pytest.mark.parametrize(
    ("name", "target", "field"),
    [
        ("Staging", "latest", "name"),
        ("latest", "latest", "name"),
        ("a" * 64, "latest", "name"),
        ("staging", "main", "target"),
        ("staging", {"split": [{"release": 1, "weight": 10000}]}, "target.split"),
        (
            "staging",
            {"split": [{"release": 1, "weight": 5000}, {"release": "latest", "weight": 4000}]},
            "target.split",
        ),
        (
            "staging",
            {"split": [{"release": n, "weight": 909} for n in range(11)]},
            "target.split",
        ),
        ("staging", {"release": "1"}, "target.release"),
    ],
)
def test_label_set_refuses_bad_input_naming_the_field_and_changes_nothing(
    writer: User, release: int, name: str, target: object, field: str
) -> None:
    services.label_set(name="staging", target="latest", author=writer)
    before = snapshot()

    with pytest.raises(InvalidInput) as caught:
        services.label_set(name=name, target=target, author=writer)

    assert caught.value.field == field
    assert snapshot() == before


@pytest.mark.parametrize(
    "target",
    [
        {"release": 9},
        {"split": [{"release": 1, "weight": 5000}, {"release": 9, "weight": 5000}]},
    ],
)
def test_label_set_refuses_an_unknown_release_and_changes_nothing(
    writer: User, release: int, target: object
) -> None:
    before = snapshot()

    with pytest.raises(ReleaseNotFound):
        services.label_set(name="staging", target=target, author=writer)

    assert snapshot() == before


def test_label_rollback_goes_one_step_further_back_each_time(writer: User) -> None:
    for text in ("one", "two", "three"):
        save("core", text)
        services.release_create(author=writer)
    services.label_set(name="staging", target="latest", author=writer)
    services.label_set(name="staging", target={"release": 1}, author=writer)
    services.label_set(name="staging", target={"release": 2}, author=writer)
    services.label_set(name="staging", target=SPLIT, author=writer)

    first = services.label_rollback(name="staging", author=writer)
    second = services.label_rollback(name="staging", message="further", author=writer)
    third = services.label_rollback(name="staging", author=writer)
    with pytest.raises(InvalidInput) as caught:
        services.label_rollback(name="staging", author=writer)

    assert [first.label.target, second.label.target, third.label.target] == [
        Single(2),
        Single(1),
        Single(LATEST),
    ]
    assert caught.value.field == "name"
    newest, previous = list(selectors.label_history("staging"))[:2]
    assert (newest.rollback, newest.message) == (True, "Rollback to latest.")
    assert (previous.rollback, previous.message) == (True, "further")


def test_label_rollback_after_a_move_starts_from_the_new_step(writer: User) -> None:
    for text in ("one", "two", "three"):
        save("core", text)
        services.release_create(author=writer)
    services.label_set(name="staging", target="latest", author=writer)
    services.label_set(name="staging", target={"release": 1}, author=writer)
    services.label_set(name="staging", target={"release": 2}, author=writer)
    services.label_rollback(name="staging", author=writer)  # → 1
    services.label_set(name="staging", target={"release": 3}, author=writer)  # a new step

    back = services.label_rollback(name="staging", author=writer)
    further = services.label_rollback(name="staging", author=writer)

    assert (back.label.target, further.label.target) == (Single(1), Single(LATEST))
    assert selectors.rollback_target("staging") is None


def test_label_rollback_refuses_a_label_with_no_history(writer: User) -> None:
    services.label_set(name="staging", target="latest", author=writer)
    before = snapshot()

    with pytest.raises(InvalidInput) as caught:
        services.label_rollback(name="staging", author=writer)

    assert caught.value.field == "name"
    assert "no earlier target to roll back to" in caught.value.message
    assert snapshot() == before


def test_label_rollback_of_a_protected_label_needs_the_permission(
    writer: User, publisher: User, release: int
) -> None:
    services.label_set(name="production", target={"release": release}, author=publisher)

    with pytest.raises(LabelProtected):
        services.label_rollback(name="production", author=writer)
    back = services.label_rollback(name="production", author=publisher)

    assert back.label.target == Single(LATEST)


def test_label_get_and_rollback_raise_not_found_when_unknown(writer: User) -> None:
    with pytest.raises(LabelNotFound):
        selectors.label_get("nope")
    with pytest.raises(LabelNotFound):
        services.label_rollback(name="nope", author=writer)
    with pytest.raises(LabelNotFound):
        selectors.label_history("nope")


def test_release_publish_releases_and_moves_in_one_call(publisher: User) -> None:
    save("core", "v1")

    published = services.release_publish(label="production", message="ship", author=publisher)

    assert published.release.created
    assert published.label.label.target == Single(1)
    with pytest.raises(InvalidInput) as caught:  # nothing changed: release 1 again
        services.release_publish(label="production", weight=1000, author=publisher)
    assert "serves release 1 already" in caught.value.message
    save("core", "v2")
    canary = services.release_publish(label="production", weight=1000, author=publisher)
    assert canary.label.label.target == Split((Arm(1, 9000), Arm(2, 1000)))


def test_release_publish_changes_nothing_when_the_label_is_protected(writer: User) -> None:
    save("core", "v1")

    with pytest.raises(LabelProtected):
        services.release_publish(label="production", author=writer)

    assert selectors.label_get("production").target == Single(LATEST)
    assert not selectors.releases_list().exists()

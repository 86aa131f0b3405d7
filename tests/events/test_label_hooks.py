"""Every entry of a label's history — its creation, a move, a rollback, a publish — is
a ``label.moved`` with an audit record, in the move's transaction; a protection change
is audited without an event; a call that writes nothing or is refused records
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult
from pytest_django import Settings

from sysprompt.errors import LabelProtected, ReleaseNotFound
from sysprompt.events import services
from sysprompt.events.models import AuditRecord, Event
from sysprompt.releases.models import Label, LabelMove, Release
from sysprompt.releases.services import (
    PRODUCTION_MESSAGE,
    label_rollback,
    label_set,
    production_ensure,
    release_create,
    release_publish,
)
from tests.events.support import ALLOW_LOCAL, receiving, run_queued
from tests.releases.support import save


def _moved() -> list[dict[str, Any]]:
    return [
        {key: value for key, value in event.data.items() if key != "actor"}
        for event in Event.objects.filter(type="label.moved").order_by("id")
    ]


def _label_actions() -> list[tuple[str, str, str]]:
    """The label records of people (not production re-created by the system when a
    transactional test emptied the tables before the fixture ran)."""
    return list(
        AuditRecord.objects.filter(action__startswith="label.")
        .exclude(actor="")
        .order_by("id")
        .values_list("action", "actor", "summary")
    )


def _counts() -> tuple[int, int, int]:
    return AuditRecord.objects.count(), Event.objects.count(), DBTaskResult.objects.count()


def test_label_create_move_and_rollback_each_send_label_moved(
    writer: User, everything: int
) -> None:
    save("core", "One.")
    release_create(author=writer)

    label_set(name="canary", target="latest", message="new", author=writer)
    label_set(name="canary", target={"release": 1}, message="pin", author=writer)
    label_rollback(name="canary", author=writer)

    base = {"prompt": "default", "label": "canary", "protected": False}
    assert _moved() == [
        {
            **base,
            "from": None,
            "to": "latest",
            "message": "new",
            "created": True,
            "rollback": False,
        },
        {
            **base,
            **{"from": "latest", "to": {"release": 1}, "message": "pin"},
            **{"created": False, "rollback": False},
        },
        {
            **base,
            **{"from": {"release": 1}, "to": "latest", "message": "Rollback to latest."},
            **{"created": False, "rollback": True},
        },
    ]
    assert _label_actions() == [
        ("label.created", "writer", "created label canary → latest: new"),
        ("label.moved", "writer", "moved label canary from latest to release 1: pin"),
        (
            "label.rolled_back",
            "writer",
            "rolled back label canary from release 1 to latest: Rollback to latest.",
        ),
    ]
    assert {event.data["actor"] for event in Event.objects.filter(type="label.moved")} == {"writer"}


def test_label_set_of_a_split_names_both_arms(writer: User, everything: int) -> None:
    save("core", "One.")
    release_create(author=writer)
    split = {"split": [{"release": "latest", "weight": 9000}, {"release": 1, "weight": 1000}]}

    label_set(name="canary", target=split, author=writer)

    [moved] = _moved()
    assert moved["to"] == split
    assert _label_actions()[0][2] == "created label canary → split: latest 90%, release 1 10%"


def test_release_publish_sends_release_created_then_label_moved(
    publisher: User, everything: int
) -> None:
    save("core", "One.")

    release_publish(label="production", message="Go", author=publisher)

    sent = Event.objects.exclude(type="fragment.saved").order_by("id")
    assert list(sent.values_list("type", flat=True)) == [
        "release.created",
        "label.moved",
    ]
    [moved] = _moved()
    assert moved == {
        "prompt": "default",
        "label": "production",
        "from": "latest",
        "to": {"release": 1},
        "message": "Go",
        "protected": True,
        "created": False,
        "rollback": False,
    }


def test_release_publish_refused_after_the_release_records_nothing(
    writer: User, everything: int
) -> None:
    """The release is made first, then moving protected production is refused: the
    release, its record and its event roll back with it."""
    save("core", "One.")
    before = _counts()

    with pytest.raises(LabelProtected):
        release_publish(label="production", message="Go", author=writer)

    assert not Release.objects.exists()
    assert _counts() == before


def test_label_set_to_a_missing_release_records_nothing(writer: User, everything: int) -> None:
    label_set(name="canary", target="latest", author=writer)
    before = _counts()

    with pytest.raises(ReleaseNotFound):
        label_set(name="canary", target={"release": 7}, author=writer)

    assert _counts() == before


def test_label_set_that_changes_nothing_records_nothing(writer: User, everything: int) -> None:
    label_set(name="canary", target="latest", author=writer)
    before = _counts()

    again = label_set(name="canary", target="latest", message="same", author=writer)

    assert not again.moved
    assert _counts() == before


def test_label_protection_is_audited_without_an_event(
    writer: User, publisher: User, everything: int
) -> None:
    label_set(name="canary", target="latest", author=writer)
    events = Event.objects.count()

    label_set(name="canary", target="latest", protected=True, author=writer)
    label_set(name="canary", target="latest", protected=False, author=publisher)

    assert Event.objects.count() == events
    assert _label_actions()[1:] == [
        ("label.protected", "writer", "protected label canary"),
        ("label.unprotected", "publisher", "removed the protection of label canary"),
    ]


def test_label_move_with_protection_records_both(writer: User, everything: int) -> None:
    save("core", "One.")
    release_create(author=writer)
    label_set(name="canary", target="latest", author=writer)

    label_set(name="canary", target={"release": 1}, protected=True, author=writer)

    assert [action for action, _, _ in _label_actions()] == [
        "label.created",
        "label.moved",
        "label.protected",
    ]
    assert _moved()[-1]["protected"] is True


def test_label_moved_reaches_a_receiver_with_the_rollback_flag(
    publisher: User, settings: Settings
) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    save("core", "One.")
    release_publish(label="production", author=publisher)
    with receiving() as receiver:
        receiver.secret = services.webhook_create(
            url=receiver.url, events=["label.moved"], author=publisher
        ).secret

        label_rollback(name="production", message="Bad release", author=publisher)
        run_queued()

        [item] = receiver.wait_for(1)
    assert item.verified is not None
    assert item.verified["type"] == "label.moved"
    assert item.verified["data"] == {
        "actor": "publisher",
        "prompt": "default",
        "label": "production",
        "from": {"release": 1},
        "to": "latest",
        "message": "Bad release",
        "protected": True,
        "created": False,
        "rollback": True,
    }


def test_production_recreated_by_bootstrap_is_recorded_as_the_system(
    writer: User, everything: int
) -> None:
    LabelMove.objects.filter(label__name="production").delete()
    Label.objects.filter(name="production").delete()  # a database emptied by hand
    last = AuditRecord.objects.order_by("-id").values_list("id", flat=True).first() or 0

    production_ensure()
    production_ensure()  # there already: nothing

    [record] = AuditRecord.objects.filter(action="label.created", id__gt=last)
    assert (record.actor, record.object) == ("", "label production")
    [moved] = Event.objects.filter(type="label.moved")
    assert moved.data == {
        "actor": None,
        "prompt": "default",
        "label": "production",
        "from": None,
        "to": "latest",
        "message": PRODUCTION_MESSAGE,
        "protected": True,
        "created": True,
        "rollback": False,
    }

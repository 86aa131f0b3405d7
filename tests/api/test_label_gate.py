"""Evaluations §4-5 over the API: PUT /api/labels/{name} sets a gate, and a gated move
is refused with 409 saying what is missing, unless a run passed or a publisher forces
it with a message."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from sysprompt.events.models import AuditRecord
from tests.api.release_support import label_url, put_label, tables
from tests.releases.gate_support import Gated, executed, gated

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("production")]


@pytest.fixture
def made(publisher: User, allowed_root: Path) -> Gated:
    return gated(publisher, min_pass_rate=0.5)


def test_label_gate_is_shown_in_label_answers(publisher_client: APIClient, made: Gated) -> None:
    shown = publisher_client.get(label_url("production")).json()

    assert shown["gate"] == {
        "suite": "style",
        "max_regressions": 0,
        "min_pass_rate": 0.5,
        "models": ["echo"],
    }
    listed = publisher_client.get("/api/labels").json()["results"]
    assert [label["gate"] for label in listed] == [shown["gate"]]


def test_label_gate_without_run_is_409_naming_the_suite(
    publisher_client: APIClient, made: Gated
) -> None:
    before = tables()

    answer = put_label(publisher_client, "production", {"release": made.good})

    assert answer.status_code == 409
    body = answer.json()
    assert "gated by suite 'style'" in body["detail"]
    assert body["reasons"] == [
        f"no finished run of suite style on model echo with release {made.good} as candidate and "
        f"production (release {made.old}) as baseline"
    ]
    assert tables() == before


def test_label_gate_regressed_run_is_409(publisher_client: APIClient, made: Gated) -> None:
    run = executed({"release": made.bad})

    answer = put_label(publisher_client, "production", {"release": made.bad})

    assert answer.status_code == 409
    assert f"run {run.pk} regressed 1 case" in answer.json()["detail"]


def test_label_gate_passing_run_moves(publisher_client: APIClient, made: Gated) -> None:
    executed({"release": made.good})

    answer = put_label(publisher_client, "production", {"release": made.good})

    assert answer.status_code == 200
    assert answer.json()["target"] == {"release": made.good}


def test_label_gate_forced_with_a_message_moves_and_is_audited(
    publisher_client: APIClient, made: Gated
) -> None:
    answer = put_label(
        publisher_client, "production", {"release": made.bad}, force=True, message="incident"
    )

    assert answer.status_code == 200
    assert AuditRecord.objects.filter(action="label.forced", actor="publisher").count() == 1


def test_label_gate_forced_without_a_message_is_400(
    publisher_client: APIClient, made: Gated
) -> None:
    answer = put_label(publisher_client, "production", {"release": made.bad}, force=True)

    assert answer.status_code == 400
    assert "message" in answer.json()


def test_label_gate_forced_by_an_author_is_403(
    publisher_client: APIClient, author_client: APIClient, made: Gated
) -> None:
    put_label(
        publisher_client,
        "staging",
        {"release": made.old},
        gate={"suite": "style", "models": ["echo"]},
    )

    answer = put_label(
        author_client, "staging", {"release": made.bad}, force=True, message="please"
    )

    assert answer.status_code == 403


def test_label_gate_to_latest_is_409(publisher_client: APIClient, made: Gated) -> None:
    answer = put_label(publisher_client, "production", "latest", force=True, message="x")

    assert answer.status_code == 409
    assert "cannot follow latest" in answer.json()["reasons"][0]


def test_label_gate_set_on_latest_is_400(publisher_client: APIClient, made: Gated) -> None:
    answer = put_label(
        publisher_client, "staging", "latest", gate={"suite": "style", "models": ["echo"]}
    )

    assert answer.status_code == 400
    assert "gate" in answer.json()


def test_label_gate_needs_the_permission_to_move_the_label(
    author_client: APIClient, made: Gated
) -> None:
    answer = put_label(author_client, "production", {"release": made.old}, gate=None)

    assert answer.status_code == 403
    assert not AuditRecord.objects.filter(action="label.gate", actor="author").exists()


def test_label_gate_removed_with_null_is_audited(publisher_client: APIClient, made: Gated) -> None:
    answer = put_label(publisher_client, "production", {"release": made.old}, gate=None)

    assert answer.status_code == 200 and answer.json()["gate"] is None
    last = AuditRecord.objects.filter(action="label.gate").latest("id")
    assert (last.actor, last.summary) == ("publisher", "removed the gate of label production")


def test_label_gate_rollback_is_409_then_forced(publisher_client: APIClient, made: Gated) -> None:
    executed({"release": made.good})
    put_label(publisher_client, "production", {"release": made.good})
    rollback = label_url("production", "/rollback")

    refused = publisher_client.post(rollback, {}, format="json")
    forced = publisher_client.post(rollback, {"force": True, "message": "back"}, format="json")

    assert (refused.status_code, forced.status_code) == (409, 200)
    assert forced.json()["target"] == {"release": made.old}


def test_label_gate_alone_is_set_and_the_target_kept(
    publisher_client: APIClient, made: Gated
) -> None:
    gate = {"suite": "style", "max_regressions": 1, "min_pass_rate": 0.25, "models": ["echo"]}
    moves = publisher_client.get(label_url("production", "/history")).json()["results"]

    answer = publisher_client.put(label_url("production"), {"gate": gate}, format="json")

    assert answer.status_code == 200, answer.json()
    assert answer.json()["target"] == {"release": made.old}
    assert answer.json()["gate"] == gate
    assert publisher_client.get(label_url("production", "/history")).json()["results"] == moves


def test_label_gate_removed_alone_keeps_the_target(
    publisher_client: APIClient, made: Gated
) -> None:
    answer = publisher_client.put(label_url("production"), {"gate": None}, format="json")

    assert answer.status_code == 200
    assert (answer.json()["target"], answer.json()["gate"]) == ({"release": made.old}, None)

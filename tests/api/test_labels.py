"""Releases §5: labels over the API: create, move, history, rollback, protection."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import put_fragment
from tests.api.release_support import (
    LABELS,
    create_release,
    label_url,
    put_label,
    tables,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

SPLIT = {"split": [{"release": 1, "weight": 9000}, {"release": "latest", "weight": 1000}]}


@pytest.fixture
def released(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "v1")
    create_release(author_client, "one")


def test_production_is_listed_following_latest_and_protected(author_client: APIClient) -> None:
    listed = author_client.get(LABELS).json()

    assert listed["next"] is None
    [production] = listed["results"]
    assert {key: production[key] for key in ("name", "target", "protected", "follows_latest")} == {
        "name": "production",
        "target": "latest",
        "protected": True,
        "follows_latest": True,
    }
    assert author_client.get(label_url("production")).json() == {**production, "rollback_to": None}


def test_put_label_creates_201_then_moves_200_and_keeps_history(
    author_client: APIClient, released: None
) -> None:
    created = put_label(author_client, "staging", "latest", message="new")
    moved = put_label(author_client, "staging", {"release": 1}, message="ship one")
    split = put_label(author_client, "staging", SPLIT, message="canary")

    assert (created.status_code, moved.status_code, split.status_code) == (201, 200, 200)
    assert split.json()["target"] == SPLIT
    assert split.json()["follows_latest"] is True
    history = author_client.get(label_url("staging", "/history")).json()["results"]
    assert [(m["from"], m["to"], m["message"], m["author"]) for m in history] == [
        ({"release": 1}, SPLIT, "canary", "author"),
        ("latest", {"release": 1}, "ship one", "author"),
        (None, "latest", "new", "author"),
    ]
    assert all(m["at"].endswith("Z") and m["rollback"] is False for m in history)


def test_history_pages_with_a_cursor(author_client: APIClient, released: None) -> None:
    for target in ("latest", {"release": 1}, "latest", {"release": 1}):
        put_label(author_client, "staging", target)

    first = author_client.get(label_url("staging", "/history"), {"page_size": 3}).json()
    rest = author_client.get(first["next"]).json()

    assert len(first["results"]) == 3 and len(rest["results"]) == 1
    assert rest["results"][0]["from"] is None


def test_rollback_moves_back_in_one_call(author_client: APIClient, released: None) -> None:
    put_label(author_client, "staging", {"release": 1})
    put_label(author_client, "staging", "latest")

    response = author_client.post(label_url("staging", "/rollback"), {}, format="json")

    assert response.status_code == 200
    assert response.json()["target"] == {"release": 1}
    newest = author_client.get(label_url("staging", "/history")).json()["results"][0]
    assert (newest["rollback"], newest["message"]) == (True, "Rollback to release 1.")


def test_rollback_goes_one_step_further_back_and_says_where_it_goes(
    author_client: APIClient, released: None
) -> None:
    put_label(author_client, "staging", "latest")
    put_label(author_client, "staging", {"release": 1})
    moved = put_label(author_client, "staging", SPLIT).json()

    first = author_client.post(label_url("staging", "/rollback"), {}, format="json").json()
    second = author_client.post(label_url("staging", "/rollback"), {}, format="json").json()
    shown = author_client.get(label_url("staging")).json()
    third = author_client.post(label_url("staging", "/rollback"), {}, format="json")

    assert moved["rollback_to"] == {"release": 1}
    assert (first["target"], first["rollback_to"]) == ({"release": 1}, "latest")
    assert (second["target"], second["rollback_to"]) == ("latest", None)
    assert shown["rollback_to"] is None
    assert third.status_code == 400 and list(third.json()) == ["name"]


def test_author_unprotecting_production_answers_403_before_the_input_is_checked(
    author_client: APIClient,
) -> None:
    before = tables()

    response = put_label(author_client, "production", "latest", protected=False)

    assert response.status_code == 403, response.content
    assert "releases.publish_release" in response.json()["detail"]
    assert tables() == before


def test_protected_label_answers_403_without_publish_and_changes_nothing(
    author_client: APIClient, publisher_client: APIClient, released: None
) -> None:
    before = tables()

    refused = put_label(author_client, "production", {"release": 1})
    rolled = author_client.post(label_url("production", "/rollback"), {}, format="json")

    assert refused.status_code == 403 and rolled.status_code == 403
    assert "releases.publish_release" in refused.json()["detail"]
    assert tables() == before
    moved = put_label(publisher_client, "production", {"release": 1}, message="review on")
    assert moved.status_code == 200
    assert moved.json()["follows_latest"] is False


def test_authors_protect_labels_and_only_publishers_unprotect_them(
    author_client: APIClient, publisher_client: APIClient
) -> None:
    made = put_label(author_client, "tenant-a", "latest", protected=True)

    refused = put_label(author_client, "tenant-a", "latest", protected=False)
    allowed = put_label(publisher_client, "tenant-a", "latest", protected=False)

    assert made.json()["protected"] is True
    assert refused.status_code == 403
    assert allowed.json()["protected"] is False


def test_put_the_same_target_writes_nothing(author_client: APIClient) -> None:
    put_label(author_client, "staging", "latest")
    before = tables()

    again = put_label(author_client, "staging", "latest", message="no-op")

    assert again.status_code == 200
    assert tables() == before


def test_protected_label_answers_403_before_looking_at_the_release(
    author_client: APIClient,
) -> None:
    response = put_label(author_client, "production", {"release": 99})

    assert response.status_code == 403

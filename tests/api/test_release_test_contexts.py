"""Releases §5: test contexts and agent hosts' labels over the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.api.release_support import (
    TEST_CONTEXTS,
    put_label,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]


def test_test_context_create_read_replace_list_delete(
    author_client: APIClient, workdir: Path
) -> None:
    body = {
        "name": "ci",
        "cwd": str(workdir),
        "provider": "openai",
        "model": "gpt-5",
        "tools": ["shell"],
        "variables": {"team": "infra"},
        "values": {"git:branch": "main", "file:NOTES.md": None},
        "override": "Be brief.",
    }

    created = author_client.post(TEST_CONTEXTS, body, format="json")
    duplicate = author_client.post(TEST_CONTEXTS, body, format="json")
    replaced = author_client.put(f"{TEST_CONTEXTS}/ci", {"cwd": str(workdir)}, format="json")
    new = author_client.put(f"{TEST_CONTEXTS}/other", {"cwd": str(workdir)}, format="json")
    listed = author_client.get(TEST_CONTEXTS).json()["results"]
    deleted = author_client.delete(f"{TEST_CONTEXTS}/ci")

    assert (created.status_code, duplicate.status_code) == (201, 400)
    assert list(duplicate.json()) == ["name"]
    data = created.json()
    assert {key: data[key] for key in body} == body
    assert data["updated_by"] == "author"
    assert (replaced.status_code, new.status_code) == (200, 201)
    assert replaced.json()["override"] is None and replaced.json()["values"] == {}
    assert [item["name"] for item in listed] == ["ci", "other"]
    assert deleted.status_code == 204 and deleted.content == b""
    assert author_client.get(f"{TEST_CONTEXTS}/ci").status_code == 404


@pytest.mark.usefixtures("author_publishes")  # off production and back: a publisher's
def test_agent_host_label_is_set_read_and_removed_by_authors(
    author_client: APIClient, host_client: APIClient
) -> None:
    put_label(author_client, "canary", "latest")
    url = "/api/agent-hosts/host-1/label"

    unset = author_client.get(url).json()
    set_ = author_client.put(url, {"label": "canary"}, format="json").json()
    removed = author_client.put(url, {"label": None}, format="json").json()

    assert (unset["label"], unset["effective"], unset["updated_at"]) == (None, "production", None)
    assert (set_["label"], set_["effective"], set_["updated_by"]) == ("canary", "canary", "author")
    assert (removed["label"], removed["effective"]) == (None, "production")


def test_test_context_without_a_cwd_is_saved_with_its_values_and_reported(
    author_client: APIClient,
) -> None:
    author_client.put("/api/system-prompt", {"template": "On [git:branch]."}, format="json")
    body = {"name": "central", "values": {"git:branch": "main"}, "provider": "openai"}

    created = author_client.post(TEST_CONTEXTS, body, format="json")
    null_cwd = author_client.put(f"{TEST_CONTEXTS}/central", {**body, "cwd": None}, format="json")
    neither = author_client.post(TEST_CONTEXTS, {"name": "none"}, format="json")
    report = author_client.post(
        "/api/releases/impact", {"label": "production", "candidate": "latest"}, format="json"
    )

    assert created.status_code == 201, created.content
    assert (created.json()["cwd"], created.json()["values"]) == (None, {"git:branch": "main"})
    assert null_cwd.status_code == 200 and null_cwd.json()["cwd"] is None
    assert neither.status_code == 400 and list(neither.json()) == ["cwd"]
    [row] = report.json()["contexts"]
    assert (row["key"], row["cwd"], row["host_values"]) == ("test:central", None, "supplied")
    assert row["problem"] is None

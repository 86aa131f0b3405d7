"""Evaluations §5: suites (list, create, get, change, delete) and the models a run may
use (never a key or a credential)."""

from __future__ import annotations

import json

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from tests.api.evaluation_support import MODELS, SUITES, case_body, make_suite, stored, suite_url

pytestmark = pytest.mark.django_db


def test_models_lists_each_endpoint_without_its_key_when_configured(
    author_client: APIClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_KEY_VARIABLE", "sk-very-secret")
    settings.SYSPROMPT = {
        "MODELS": {
            "gpt": {
                "kind": "openai",
                "model": "gpt-4o-mini",
                "base_url": "https://user:hunter2@proxy.example/v1",
                "api_key_env": "SECRET_KEY_VARIABLE",
                "max_concurrency": 2,
            }
        },
        "EVAL_DEFAULT_MODEL": "gpt",
    }

    response = author_client.get(MODELS)

    assert response.status_code == 200
    assert response.json()["results"] == [
        {"name": "echo", "kind": "echo", "model": "echo", "max_concurrency": 4, "default": False},
        {
            "name": "gpt",
            "kind": "openai",
            "model": "gpt-4o-mini",
            "max_concurrency": 2,
            "default": True,
        },
    ]
    text = json.dumps(response.json())
    for secret in ("sk-very-secret", "SECRET_KEY_VARIABLE", "hunter2", "proxy.example"):
        assert secret not in text


def test_suite_is_created_listed_changed_and_deleted(author_client: APIClient) -> None:
    made = author_client.post(SUITES, {"name": "style", "description": "Tabs."}, format="json")
    author_client.post(suite_url("style", "/cases"), case_body("one"), format="json")
    author_client.post(SUITES, {"name": "another"}, format="json")

    listed = author_client.get(SUITES, {"page_size": 1})
    changed = author_client.put(suite_url("style"), {"description": "Spaces."}, format="json")
    deleted = author_client.delete(suite_url("style"))

    assert made.status_code == 201
    assert made.json()["cases_count"] == 0
    assert [s["name"] for s in listed.json()["results"]] == ["another"]
    assert listed.json()["next"]
    assert changed.json()["description"] == "Spaces."
    assert changed.json()["cases_count"] == 1
    assert deleted.status_code == 204
    assert author_client.get(suite_url("style")).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Bad Name"}, "name"),
        ({"name": 3}, "name"),
        ({}, "name"),
        ({"name": "ok", "description": "x" * 2001}, "description"),
    ],
)
def test_suite_create_names_the_bad_field_and_stores_nothing(
    author_client: APIClient, body: dict[str, object], field: str
) -> None:
    before = stored()

    response = author_client.post(SUITES, body, format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert stored() == before


def test_suite_create_refuses_a_name_taken(author_client: APIClient) -> None:
    make_suite(author_client, "style")

    response = author_client.post(SUITES, {"name": "style"}, format="json")

    assert response.status_code == 400
    assert "already" in response.json()["name"][0]


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "missing"), ("put", "missing"), ("delete", "missing"), ("get", "missing/cases")],
)
def test_suite_answers_404_in_the_error_shape_when_missing(
    author_client: APIClient, method: str, path: str
) -> None:
    response = getattr(author_client, method)(f"{SUITES}/{path}", {}, format="json")

    assert response.status_code == 404
    assert "There is no suite 'missing'" in response.json()["detail"]

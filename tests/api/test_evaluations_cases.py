"""Evaluations §2 and §5: cases (add, list, get, replace, rename, delete), each bad field
named with nothing stored, and a case made from a recorded conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.evaluation_support import case_body, make_suite, stored, suite_url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

CASES = suite_url("style", "/cases")


@pytest.fixture
def suite(author_client: APIClient) -> None:
    make_suite(author_client, "style")


@pytest.mark.usefixtures("suite")
def test_case_is_added_listed_replaced_renamed_and_deleted(author_client: APIClient) -> None:
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
    made = author_client.post(
        CASES, case_body("one", tools=tools, reference="Use tabs."), format="json"
    )
    author_client.post(CASES, case_body("two"), format="json")

    listed = author_client.get(CASES, {"page_size": 1})
    replaced = author_client.put(
        suite_url("style", "/cases/one"),
        case_body("uno", {"type": "max_chars", "value": 10}),
        format="json",
    )
    got = author_client.get(suite_url("style", "/cases/uno"))
    deleted = author_client.delete(suite_url("style", "/cases/two"))

    assert made.status_code == 201
    assert made.json() == {
        "name": "one",
        "context": {},
        "messages": [{"role": "user", "content": "question one"}],
        "tools": tools,
        "checks": [{"type": "contains", "value": "first line"}],
        "reference": "Use tabs.",
    }
    assert [c["name"] for c in listed.json()["results"]] == ["one"]
    assert replaced.status_code == 200
    assert got.json()["checks"] == [{"type": "max_chars", "value": 10}]
    assert author_client.get(suite_url("style", "/cases/one")).status_code == 404
    assert deleted.status_code == 204
    assert [c["name"] for c in author_client.get(CASES).json()["results"]] == ["uno"]


BAD_CASES: list[tuple[dict[str, Any], str]] = [
    ({"checks": [{"type": "smells_nice"}]}, "checks[0].type"),
    ({"checks": [{"type": "regex", "pattern": "(unclosed"}]}, "checks[0].pattern"),
    ({"checks": [{"type": "json_schema", "schema": {"type": 12}}]}, "checks[0].schema"),
    ({"checks": "contains"}, "checks"),
    ({"context": {"test_context": "nowhere"}}, "context.test_context"),
    ({"context": {"colour": "red"}}, "context.colour"),
    ({"messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
    ({"messages": []}, "messages"),
    ({"name": "a b"}, "name"),
    ({"reference": 3}, "reference"),
]


@pytest.mark.usefixtures("suite")
@pytest.mark.parametrize(("change", "field"), BAD_CASES)
def test_case_add_names_the_bad_field_and_stores_nothing(
    author_client: APIClient, change: dict[str, Any], field: str
) -> None:
    before = stored()

    response = author_client.post(CASES, {**case_body("bad"), **change}, format="json")

    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert stored() == before


@pytest.mark.usefixtures("suite")
def test_case_replace_names_the_bad_field_and_changes_nothing(author_client: APIClient) -> None:
    author_client.post(CASES, case_body("one"), format="json")
    before = stored()

    response = author_client.put(
        suite_url("style", "/cases/one"),
        case_body("one", {"type": "regex", "pattern": "(a"}),
        format="json",
    )

    assert response.status_code == 400
    assert "checks[0].pattern" in response.json()
    assert stored() == before


@pytest.mark.usefixtures("suite")
def test_case_answers_404_when_missing(author_client: APIClient) -> None:
    response = author_client.get(suite_url("style", "/cases/nowhere"))

    assert response.status_code == 404
    assert "has no case 'nowhere'" in response.json()["detail"]


@pytest.mark.usefixtures("suite")
def test_case_from_conversation_copies_the_recorded_context(
    author_client: APIClient, workdir: Path
) -> None:
    recorded = author_client.post(
        "/api/conversations/conv-1/system-prompt/resolve",
        {
            "cwd": str(workdir),
            "provider": "openai",
            "model": "gpt-4o",
            "tools": ["bash"],
            "variables": {"team": "core"},
            "override": {"content": "Be terse.", "strategy": "append"},
        },
        format="json",
    )
    assert recorded.status_code == 201, recorded.json()

    response = author_client.post(
        CASES,
        {
            "from_conversation": "conv-1",
            "messages": [{"role": "user", "content": "rm -rf /?"}],
            "values": {"git:branch": "main"},
            "checks": [{"type": "contains", "value": "no"}],
        },
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["name"] == "conv-1"
    assert response.json()["context"] == {
        "cwd": str(workdir),
        "label": "production",
        "provider": "openai",
        "model": "gpt-4o",
        "tools": ["bash"],
        "variables": {"team": "core"},
        "override": {"content": "Be terse.", "strategy": "append"},
        "values": {"git:branch": "main"},
    }
    assert response.json()["messages"] == [{"role": "user", "content": "rm -rf /?"}]


@pytest.mark.usefixtures("suite")
def test_case_from_conversation_copies_the_label_it_was_served_from(
    author_client: APIClient, workdir: Path
) -> None:
    recorded = author_client.post(
        "/api/conversations/conv-2/system-prompt/resolve",
        {"cwd": str(workdir), "label": "latest"},
        format="json",
    )
    assert recorded.status_code == 201, recorded.json()

    response = author_client.post(
        CASES,
        {"from_conversation": "conv-2", "messages": [{"role": "user", "content": "q"}]},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["context"] == {"cwd": str(workdir), "label": "latest"}
    exported = author_client.get(suite_url("style", "/cases/conv-2"))
    assert exported.json()["context"]["label"] == "latest"


@pytest.mark.usefixtures("suite")
def test_case_context_label_that_is_no_label_name_is_refused(author_client: APIClient) -> None:
    response = author_client.post(
        CASES,
        {
            "name": "n",
            "messages": [{"role": "user", "content": "q"}],
            "context": {"label": "not a label!"},
        },
        format="json",
    )

    assert response.status_code == 400, response.json()
    assert "context.label" in response.json()


@pytest.mark.usefixtures("suite")
@pytest.mark.parametrize(
    ("body", "status", "key"),
    [
        ({"from_conversation": "never-recorded"}, 404, "detail"),
        ({"from_conversation": "a b"}, 400, "from_conversation"),
        ({"from_conversation": "x", "context": {}}, 400, "context"),
        ({"values": {"git:branch": "main"}}, 400, "values"),
    ],
)
def test_case_from_conversation_refuses_and_stores_nothing(
    author_client: APIClient, body: dict[str, Any], status: int, key: str
) -> None:
    before = stored()

    response = author_client.post(
        CASES, {"messages": [{"role": "user", "content": "q"}], "name": "n", **body}, format="json"
    )

    assert response.status_code == status, response.json()
    assert key in response.json()
    assert stored() == before


@pytest.mark.usefixtures("suite")
@pytest.mark.parametrize("method", ["get", "put", "delete"])
@pytest.mark.parametrize("name", ["%00", "a%20b", "x" * 201])
def test_case_path_answers_400_naming_case_when_not_a_case_name(
    author_client: APIClient, method: str, name: str
) -> None:
    before = stored()

    response = getattr(author_client, method)(
        suite_url("style", f"/cases/{name}"), case_body("ok"), format="json"
    )

    assert response.status_code == 400
    assert "case" in response.json()
    assert stored() == before


@pytest.mark.usefixtures("suite")
@pytest.mark.parametrize(
    "context",
    [
        {"provider": "anthropic", "model": "claude-sonnet-4-5"},
        {"provider": "openai"},
        {"model": "gpt-4.1"},
    ],
)
def test_case_inline_context_of_provider_and_model_alone_is_accepted(
    author_client: APIClient, context: dict[str, Any]
) -> None:
    response = author_client.post(CASES, case_body("variant", context=context), format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["context"] == context

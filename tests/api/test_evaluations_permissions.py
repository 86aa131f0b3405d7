"""Evaluations §5: authors only. An agent host gets 403 on every operation and changes
nothing; without credentials every operation answers 401."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.api.evaluation_support import (
    EVALUATIONS,
    MODELS,
    SUITES,
    case_body,
    make_suite,
    stored,
    suite_url,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

OPERATIONS: list[tuple[str, str, object]] = [
    ("get", MODELS, None),
    ("get", SUITES, None),
    ("post", SUITES, {"name": "other"}),
    ("get", suite_url("s"), None),
    ("put", suite_url("s"), {"description": "x"}),
    ("delete", suite_url("s"), None),
    ("get", suite_url("s", "/cases"), None),
    ("post", suite_url("s", "/cases"), case_body("c2")),
    ("get", suite_url("s", "/cases/c1"), None),
    ("put", suite_url("s", "/cases/c1"), case_body("c1")),
    ("delete", suite_url("s", "/cases/c1"), None),
    ("get", suite_url("s", "/export"), None),
    ("get", EVALUATIONS, None),
    ("post", EVALUATIONS, {"suite": "s", "candidate": "latest"}),
    ("get", f"{EVALUATIONS}/1", None),
    ("get", f"{EVALUATIONS}/1/results", None),
    ("post", f"{EVALUATIONS}/1/cancel", None),
]


@pytest.fixture
def suite(author_client: APIClient) -> None:
    make_suite(author_client, "s", case_body("c1"))
    started = author_client.post(EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json")
    assert started.status_code == 202


@pytest.mark.usefixtures("suite")
@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_agent_host_answers_403_on_every_evaluation_operation_and_changes_nothing(
    host_client: APIClient, method: str, path: str, body: object
) -> None:
    before = stored()

    call = getattr(host_client, method)
    response = call(path) if body is None else call(path, body, format="json")

    assert response.status_code == 403
    assert "Evaluations are for prompt authors" in response.json()["detail"]
    assert stored() == before


@pytest.mark.usefixtures("suite")
def test_agent_host_answers_403_on_import_and_changes_nothing(host_client: APIClient) -> None:
    before = stored()

    response = host_client.post(
        suite_url("s", "/import"),
        b'{"name": "x", "messages": [{"role": "user", "content": "q"}]}\n',
        content_type="application/x-ndjson",
    )

    assert response.status_code == 403
    assert stored() == before


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_evaluation_operation_answers_401_without_credentials(
    method: str, path: str, body: object
) -> None:
    response = getattr(APIClient(), method)(path)

    assert response.status_code == 401
    assert "detail" in response.json()

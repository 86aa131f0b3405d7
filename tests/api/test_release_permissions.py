"""Releases §4: agent hosts do none of the release, label or test-context operations;
reading them is for prompt authors too."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.api.release_support import (
    IMPACT,
    LABELS,
    RELEASES,
    TEST_CONTEXTS,
    create_release,
    label_url,
    release_url,
    tables,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

OPERATIONS: list[tuple[str, str, object]] = [
    ("get", RELEASES, None),
    ("post", RELEASES, {"message": "x"}),
    ("get", release_url(1), None),
    ("get", release_url(1, "/compare"), None),
    ("post", IMPACT, {"label": "production", "candidate": "latest"}),
    ("get", LABELS, None),
    ("get", label_url("production"), None),
    ("put", label_url("mine"), {"target": "latest"}),
    ("get", label_url("production", "/history"), None),
    ("post", label_url("production", "/rollback"), {}),
    ("get", TEST_CONTEXTS, None),
    ("post", TEST_CONTEXTS, {"name": "t", "cwd": "/tmp"}),
    ("get", f"{TEST_CONTEXTS}/t", None),
    ("put", f"{TEST_CONTEXTS}/t", {"cwd": "/tmp"}),
    ("delete", f"{TEST_CONTEXTS}/t", None),
    ("get", "/api/agent-hosts/host-1/label", None),
    ("put", "/api/agent-hosts/host-1/label", {"label": "production"}),
]


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_agent_host_answers_403_on_every_release_operation_and_changes_nothing(
    author_client: APIClient, host_client: APIClient, method: str, path: str, body: object
) -> None:
    create_release(author_client)
    before = tables()

    call = getattr(host_client, method)
    response = call(path) if body is None else call(path, body, format="json")

    assert response.status_code == 403
    assert "Releases and labels are for prompt authors" in response.json()["detail"]
    assert tables() == before

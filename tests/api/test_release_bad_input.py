"""Releases §5, issue point 7: bad input gets a clear JSON error naming the field (or a
404 for an unknown release or label), and nothing changes."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import put_fragment
from tests.api.release_support import (
    IMPACT,
    RELEASES,
    TEST_CONTEXTS,
    create_release,
    label_url,
    put_label,
    release_url,
    tables,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]


def split(*arms: tuple[object, object]) -> dict[str, Any]:
    return {"split": [{"release": r, "weight": w} for r, w in arms]}


CASES: list[tuple[str, str, object, int, str | None]] = [
    # method, path, body, status, the field named (None: a {"detail"})
    ("put", label_url("Staging"), {"target": "latest"}, 400, "name"),
    ("put", label_url("latest"), {"target": "latest"}, 400, "name"),
    ("put", label_url("a" * 64), {"target": "latest"}, 400, "name"),
    ("put", label_url("-x"), {"target": "latest"}, 400, "name"),
    ("get", label_url("Bad.Name"), None, 400, "name"),
    ("get", label_url("nope"), None, 404, None),
    ("get", label_url("nope", "/history"), None, 404, None),
    ("post", label_url("nope", "/rollback"), {}, 404, None),
    ("post", label_url("staging", "/rollback"), {}, 400, "name"),
    ("put", label_url("newbie"), {}, 400, "target"),  # a new label needs a target
    ("put", label_url("newbie"), {"gate": None}, 400, "target"),
    ("put", label_url("staging"), {"target": "main"}, 400, "target"),
    ("put", label_url("staging"), {"target": {"release": "1"}}, 400, "target.release"),
    ("put", label_url("staging"), {"target": {"release": 99}}, 404, None),
    ("put", label_url("staging"), {"target": split((1, 9000), (99, 1000))}, 404, None),
    (
        "put",
        label_url("staging"),
        {"target": split((1, 9000), ("latest", 900))},
        400,
        "target.split",
    ),
    ("put", label_url("staging"), {"target": split((1, 10000))}, 400, "target.split"),
    (
        "put",
        label_url("staging"),
        {"target": {"split": [{"release": "latest", "weight": 909}] * 11}},
        400,
        "target.split",
    ),
    (
        "put",
        label_url("staging"),
        {"target": split((1, 0), ("latest", 10000))},
        400,
        "target.split[0].weight",
    ),
    (
        "put",
        label_url("staging"),
        {"target": split((1, 5000), (1, 5000))},
        400,
        "target.split[1].release",
    ),
    ("put", label_url("staging"), {"target": "latest", "protected": "yes"}, 400, "protected"),
    ("put", label_url("staging"), {"target": "latest", "message": 3}, 400, "message"),
    ("put", label_url("staging"), {"target": "latest", "message": "m" * 4001}, 400, "message"),
    ("put", label_url("production"), {"target": "latest", "protected": False}, 400, "protected"),
    ("post", RELEASES, {"message": ["x"]}, 400, "message"),
    ("get", release_url(7), None, 404, None),
    ("get", release_url(1, "/compare?with=7"), None, 404, None),
    ("post", IMPACT, {"label": "nope", "candidate": "latest"}, 400, "label"),
    ("post", IMPACT, {"label": "production", "candidate": 7}, 404, None),
    ("post", IMPACT, {"label": "production", "candidate": "main"}, 400, "candidate"),
    ("post", IMPACT, {"label": "production"}, 400, "candidate"),
    (
        "post",
        IMPACT,
        {"label": "production", "candidate": "latest", "window_days": 0},
        400,
        "window_days",
    ),
    (
        "post",
        IMPACT,
        {"label": "production", "candidate": "latest", "window_days": "7"},
        400,
        "window_days",
    ),
    ("post", TEST_CONTEXTS, {"name": "Bad", "cwd": "/tmp"}, 400, "name"),
    ("post", TEST_CONTEXTS, {"name": "t", "cwd": "relative"}, 400, "cwd"),
    ("get", f"{TEST_CONTEXTS}/nope", None, 404, None),
    ("delete", f"{TEST_CONTEXTS}/nope", None, 404, None),
    ("put", "/api/agent-hosts/host-1/label", {"label": "nope"}, 400, "label"),
    ("put", "/api/agent-hosts/host-1/label", {"label": "Bad Name"}, 400, "label"),
    ("put", "/api/agent-hosts/host-1/label", {}, 400, "label"),
    ("put", "/api/agent-hosts/nobody/label", {"label": "production"}, 404, None),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "field"), CASES)
def test_bad_input_answers_a_json_error_naming_the_field_and_changes_nothing(
    publisher_client: APIClient,
    host_client: APIClient,
    method: str,
    path: str,
    body: object,
    status: int,
    field: str | None,
) -> None:
    put_fragment(publisher_client, "core", "v1")
    create_release(publisher_client)
    put_label(publisher_client, "staging", {"release": 1})
    before = tables()

    call = getattr(publisher_client, method)
    response = call(path) if body is None else call(path, body, format="json")

    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert list(response.json()) == ([field] if field else ["detail"])
    assert tables() == before

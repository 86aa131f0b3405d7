"""What the evaluations API tests share: paths, a suite made through the API, the rows
the evaluations store (to prove a refused call stored nothing)."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from sysprompt.evaluations.models import Case, Run, Suite

MODELS = "/api/models"
SUITES = "/api/suites"
EVALUATIONS = "/api/evaluations"
CONTAINS_FIRST = {"type": "contains", "value": "first line"}


def suite_url(name: str, rest: str = "") -> str:
    return f"{SUITES}/{name}{rest}"


def case_body(name: str, *checks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "messages": [{"role": "user", "content": f"question {name}"}],
        "checks": list(checks) or [CONTAINS_FIRST],
        **fields,
    }


def make_suite(client: APIClient, name: str, *cases: dict[str, Any]) -> None:
    assert client.post(SUITES, {"name": name}, format="json").status_code == 201
    for body in cases:
        response = client.post(suite_url(name, "/cases"), body, format="json")
        assert response.status_code == 201, response.json()


def stored() -> tuple[list[Any], ...]:
    """Every suite, case and run, as values: equal before and after a refused call."""
    return (
        list(Suite.objects.order_by("id").values()),
        list(Case.objects.order_by("id").values()),
        list(Run.objects.order_by("id").values()),
    )

"""PUT /api/agent-hosts/{username}/override and /label for a host on protected
production: 403 in the API's JSON shape, naming the permission, and nothing changes,
for an author who may not publish; 200 for a publisher."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from sysprompt.events.models import AuditRecord
from sysprompt.library.selectors import host_override_state
from sysprompt.releases import selectors, services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

CHANGES = [
    ("override", {"override": "Ignore the release."}),
    ("label", {"label": "staging"}),
]


@pytest.fixture
def staging(publisher: object) -> None:
    services.label_set(name="staging", target="latest", author=publisher)  # type: ignore[arg-type]


@pytest.mark.parametrize(("what", "body"), CHANGES, ids=[c[0] for c in CHANGES])
@pytest.mark.usefixtures("staging")
def test_author_changing_a_production_host_gets_403_and_nothing_changes(
    author_client: APIClient, host: AgentHost, what: str, body: dict[str, object]
) -> None:
    records = AuditRecord.objects.count()

    answer = author_client.put(f"/api/agent-hosts/{host.username}/{what}", body, format="json")

    assert answer.status_code == 403
    assert answer["Content-Type"].startswith("application/json")
    assert set(answer.json()) == {"detail"}
    assert "releases.publish_release" in answer.json()["detail"]
    assert host_override_state(host.username).override is None
    assert selectors.host_label_state(host.username).label is None
    assert AuditRecord.objects.count() == records


@pytest.mark.parametrize(("what", "body"), CHANGES, ids=[c[0] for c in CHANGES])
@pytest.mark.usefixtures("staging")
def test_publisher_changes_a_production_host(
    publisher_client: APIClient, host: AgentHost, what: str, body: dict[str, object]
) -> None:
    answer = publisher_client.put(f"/api/agent-hosts/{host.username}/{what}", body, format="json")

    assert answer.status_code == 200, answer.json()
    assert answer.json()[what] == body[what]

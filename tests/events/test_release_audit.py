"""Agent hosts' labels are ``host.changed`` events; test contexts are audited without
an event; both over the API name who did it, and the log stays closed to agent
hosts."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.events.catalog import EVENT_TYPES
from sysprompt.events.models import AuditRecord, Event
from sysprompt.releases import services as releases
from tests.conftest import token_client
from tests.editor.library_support import web


def _records(prefix: str) -> list[tuple[str, str, str]]:
    return list(
        AuditRecord.objects.filter(action__startswith=prefix)
        .order_by("id")
        .values_list("action", "object", "summary")
    )


def test_host_label_set_and_removed_send_host_changed(
    writer: User, publisher: User, everything: int
) -> None:
    agent_host_ensure(name="build-01")
    releases.label_set(name="canary", target="latest", author=writer)

    releases.host_label_set(username="build-01", label="canary", author=publisher)
    releases.host_label_set(
        username="build-01", label="canary", author=publisher
    )  # unchanged: nothing
    releases.host_label_set(username="build-01", label="production", author=publisher)
    releases.host_label_set(username="build-01", label=None, author=publisher)
    releases.host_label_set(username="build-01", label=None, author=publisher)  # nothing to remove

    host = "agent host build-01"
    assert _records("host.label") == [
        ("host.label_set", host, "set the label of agent host build-01 to canary"),
        ("host.label_set", host, "set the label of agent host build-01 to production (was canary)"),
        ("host.label_removed", host, "removed the label of agent host build-01 (was production)"),
    ]
    sent = Event.objects.filter(type="host.changed", data__change__startswith="label_")
    assert [event.data for event in sent.order_by("id")] == [
        {
            "actor": "publisher",
            "prompt": "default",
            "host": "build-01",
            "change": "label_set",
            "label": "canary",
        },
        {
            "actor": "publisher",
            "prompt": "default",
            "host": "build-01",
            "change": "label_set",
            "label": "production",
        },
        {
            "actor": "publisher",
            "prompt": "default",
            "host": "build-01",
            "change": "label_removed",
            "label": None,
        },
    ]


def test_test_contexts_are_audited_without_an_event(
    writer: User, everything: int, workdir: Path
) -> None:
    events = Event.objects.count()

    releases.test_context_save(name="ci", fields={"cwd": str(workdir)}, author=writer)
    releases.test_context_save(name="ci", fields={"cwd": str(workdir)}, author=writer)  # unchanged
    releases.test_context_save(
        name="ci",
        fields={"cwd": str(workdir), "provider": "openai", "tools": ["shell"]},
        author=writer,
    )

    assert _records("test_context.") == [
        ("test_context.created", "test context ci", "created test context ci"),
        ("test_context.changed", "test context ci", "changed test context ci: provider, tools"),
    ]
    assert Event.objects.count() == events


def test_test_context_delete_over_the_api_names_its_author(
    author: User, author_client: APIClient, workdir: Path
) -> None:
    releases.test_context_save(name="ci", fields={"cwd": str(workdir)}, author=author)

    first = author_client.delete("/api/test-contexts/ci")
    again = author_client.delete("/api/test-contexts/ci")

    assert (first.status_code, again.status_code) == (204, 404)
    assert AuditRecord.objects.filter(action="test_context.deleted").get().actor == "author"
    [record] = author_client.get("/api/audit", {"action": "test_context.deleted"}).json()["results"]
    assert (record["actor"], record["summary"]) == ("author", "deleted test context ci")


def test_release_audit_is_closed_to_agent_hosts(
    writer: User, everything: int, agent_host: User
) -> None:
    releases.label_set(name="canary", target="latest", author=writer)

    answer = token_client(agent_host).get("/api/audit", {"action": "label."})
    seen = token_client(writer).get("/api/audit", {"action": "label.", "actor": "writer"})

    assert answer.status_code == 403
    assert [r["action"] for r in seen.json()["results"]] == ["label.created"]


def test_new_event_types_are_offered_by_the_api_and_the_editor(writer: User) -> None:
    schema = token_client(writer).get("/api/schema/", {"format": "json"}).json()
    created = token_client(writer).post(
        "/api/webhooks",
        {"url": "https://ci.example.com/", "events": ["release.created", "label.moved"]},
        format="json",
    )
    page = web(writer).get("/webhooks/")

    assert EVENT_TYPES[:2] == ("release.created", "label.moved")
    assert schema["components"]["schemas"]["EventType"]["enum"] == list(EVENT_TYPES)
    assert created.status_code == 201
    assert created.json()["events"] == ["release.created", "label.moved"]
    assert page.status_code == 200
    for event in ("release.created", "label.moved"):
        assert f'value="{event}"' in page.content.decode()

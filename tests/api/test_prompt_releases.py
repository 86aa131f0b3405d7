"""Named prompts §4: a prompt's releases, labels and test contexts under
``/api/prompts/{name}/-/``, an agent host's label per prompt (``?prompt=``), a
fragment's ``used_by`` and the impact of a change of its text across prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.db.models import Max
from django.utils import timezone
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from sysprompt.events.models import AuditRecord
from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion
from tests.api.library_support import fragment_url, put_fragment
from tests.api.release_support import tables

pytestmark = pytest.mark.django_db

TRIAGE = "/api/prompts/support/triage/-"
REVIEWER = "/api/prompts/coding/reviewer/-"


def prompt(name: str, text: str) -> Prompt:
    now = timezone.now()
    made = Prompt.objects.create(name=name, created_at=now, updated_at=now)
    top = TemplateVersion.objects.aggregate(top=Max("number"))["top"] or 0
    TemplateVersion.objects.create(number=top + 1, prompt=made, text=text, created_at=now)
    return made


@pytest.fixture
def two(production: None) -> tuple[Prompt, Prompt]:
    return prompt("support/triage", "Triage [fragment:tone]"), prompt(
        "coding/reviewer", "Reviewer [fragment:tone]"
    )


def test_prompt_routes_release_and_label_each_prompt_when_called(
    two: tuple[Prompt, Prompt], publisher_client: APIClient
) -> None:
    made = [
        publisher_client.post(f"{base}/releases", {}, format="json") for base in (TRIAGE, REVIEWER)
    ]
    moved = publisher_client.put(
        f"{TRIAGE}/labels/production", {"target": {"release": 1}}, format="json"
    )

    assert [(r.status_code, r.json()["prompt"], r.json()["number"]) for r in made] == [
        (201, "support/triage", 1),
        (201, "coding/reviewer", 1),
    ]
    assert (moved.status_code, moved.json()["prompt"], moved.json()["target"]) == (
        201,  # its production row is written now (it was production → latest, virtually)
        "support/triage",
        {"release": 1},
    )
    reviewer = publisher_client.get(f"{REVIEWER}/labels/production").json()
    assert (reviewer["prompt"], reviewer["target"]) == ("coding/reviewer", "latest")
    assert publisher_client.get("/api/releases").json()["results"] == []
    listed = publisher_client.get(f"{TRIAGE}/releases").json()["results"]
    assert [(r["prompt"], r["number"]) for r in listed] == [("support/triage", 1)]
    compared = publisher_client.get(f"{TRIAGE}/releases/1/compare").json()
    assert (compared["prompt"], compared["changed"]) == ("support/triage", False)
    history = publisher_client.get(f"{TRIAGE}/labels/production/history").json()["results"]
    assert history[0]["to"] == {"release": 1}


def test_prompt_route_answers_404_and_400_when_the_prompt_is_unknown_or_invalid(
    publisher_client: APIClient, production: None
) -> None:
    unknown = publisher_client.get("/api/prompts/nope/-/labels")
    invalid = publisher_client.get("/api/prompts/Bad_Name/-/labels")

    assert unknown.status_code == 404
    assert "nope" in unknown.json()["detail"]
    assert invalid.status_code == 400
    assert "prompt" in invalid.json()


def test_label_move_is_403_audited_and_changes_nothing_when_the_prompt_is_restricted(
    two: tuple[Prompt, Prompt], publisher: User, publisher_client: APIClient
) -> None:
    triage, _ = two
    triage.editor_groups.add(Group.objects.create(name="support-team"))
    before = tables()

    refused = publisher_client.put(
        f"{TRIAGE}/labels/production", {"target": "not a target"}, format="json"
    )

    assert refused.status_code == 403
    assert "support/triage" in refused.json()["detail"]
    assert tables() == before
    record = AuditRecord.objects.get(action="prompt.refused")
    assert (record.actor, record.object) == ("publisher", "prompt support/triage")
    publisher.groups.add(Group.objects.get(name="support-team"))
    assert (
        publisher_client.put(f"{TRIAGE}/labels/canary", {"target": "latest"}, format="json")
    ).status_code == 201


def test_test_contexts_are_per_prompt_when_saved_through_the_prompt_route(
    two: tuple[Prompt, Prompt], author_client: APIClient, workdir: Path
) -> None:
    saved = author_client.put(f"{TRIAGE}/test-contexts/repo", {"cwd": str(workdir)}, format="json")

    assert (saved.status_code, saved.json()["prompt"]) == (201, "support/triage")
    assert author_client.get(f"{REVIEWER}/test-contexts").json()["results"] == []
    assert author_client.get(f"{REVIEWER}/test-contexts/repo").status_code == 404
    assert author_client.get("/api/test-contexts/repo").status_code == 404


def test_host_label_is_per_prompt_when_set_with_the_prompt_query(
    two: tuple[Prompt, Prompt], publisher_client: APIClient, host: AgentHost
) -> None:
    publisher_client.put(f"{TRIAGE}/labels/canary", {"target": "latest"}, format="json")
    url = f"/api/agent-hosts/{host.username}/label"

    set_triage = publisher_client.put(
        f"{url}?prompt=support/triage", {"label": "canary"}, format="json"
    )
    refused = publisher_client.put(
        f"{url}?prompt=coding/reviewer", {"label": "canary"}, format="json"
    )

    assert (set_triage.status_code, set_triage.json()["prompt"]) == (200, "support/triage")
    assert set_triage.json()["label"] == "canary"
    assert refused.status_code == 400
    assert publisher_client.get(f"{url}?prompt=coding/reviewer").json()["label"] is None
    assert publisher_client.get(url).json() | {"updated_at": None} == {
        "prompt": "default",
        "username": "host-1",
        "label": None,
        "effective": "production",
        "updated_at": None,
        "updated_by": None,
    }


def test_fragment_answers_used_by_and_its_impact_across_prompts_when_asked(
    two: tuple[Prompt, Prompt], author_client: APIClient, workdir: Path
) -> None:
    triage, reviewer = two
    put_fragment(author_client, "tone", "Be kind.")
    now = timezone.now()
    for of, cid in ((triage, "t1"), (reviewer, "r1")):
        ConversationPrompt.objects.create(
            prompt=of,
            conversation_id=cid,
            system_prompt="frozen",
            cwd=str(workdir),
            created_at=now,
            constructed_at=now,
        )

    variant = author_client.get(fragment_url("tone")).json()
    impact = author_client.post(
        fragment_url("tone", "/impact"), {"text": "Be terse."}, format="json"
    )

    assert variant["used_by"] == ["coding/reviewer", "support/triage"]
    assert impact.status_code == 200
    report = impact.json()
    assert [
        (p["prompt"], [label["label"] for label in p["labels"]]) for p in report["prompts"]
    ] == [
        ("coding/reviewer", ["production"]),
        ("support/triage", ["production"]),
    ]
    assert report["summary"]["conversations_changed"] == 2
    assert (
        author_client.post(
            fragment_url("nope", "/impact"), {"text": "x"}, format="json"
        ).status_code
        == 404
    )

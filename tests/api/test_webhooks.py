"""The webhook endpoints: subscriptions (the secret shown once), their delivery log and
the test event; prompt authors only."""

from __future__ import annotations

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.events.models import Delivery, Event
from tests.events.support import ALLOW_LOCAL, receiving, run_queued

WEBHOOKS = "/api/webhooks"


@pytest.fixture(autouse=True)
def allow_local(settings: Settings) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)


def _create(client: APIClient, **body: object) -> dict[str, object]:
    answer = client.post(
        WEBHOOKS,
        {"url": "https://ci.example.com/hooks", "events": ["template.saved"], **body},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    data: dict[str, object] = answer.json()
    return data


def test_create_shows_the_secret_once(author_client: APIClient) -> None:
    created = _create(author_client, events=["fragment.saved", "template.saved"])

    assert str(created["secret"]).startswith("whsec_")
    assert created["events"] == ["template.saved", "fragment.saved"]
    assert (created["active"], created["include_text"], created["pending"]) == (True, False, 0)
    shown = author_client.get(f"{WEBHOOKS}/{created['id']}").json()
    listed = author_client.get(WEBHOOKS).json()
    assert "secret" not in shown
    assert [item["id"] for item in listed] == [created["id"]]
    assert str(created["secret"]) not in str(listed) + str(shown)


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"url": "http://ci.example.com/"}, "url", "Webhooks use https"),
        ({"url": "https://127.0.0.2/"}, "url", "not an address webhooks may reach"),
        ({"url": "https://169.254.169.254/latest"}, "url", "not an address webhooks may reach"),
        ({"url": "https://user:pw@ci.example.com/"}, "url", "user name or password"),
        ({"url": "ftp://ci.example.com/"}, "url", "webhooks use https"),
        ({"url": "https:///nohost"}, "url", "names no host"),
        ({"events": []}, "events", "at least one"),
        ({"events": ["release.exploded"]}, "events", "no event type"),
        ({"events": "template.saved"}, "events", "at least one"),
    ],
)
def test_create_refuses_with_400_naming_the_field(
    author_client: APIClient, body: dict[str, object], field: str, words: str
) -> None:
    answer = author_client.post(
        WEBHOOKS,
        {"url": "https://ci.example.com/", "events": ["template.saved"], **body},
        format="json",
    )

    assert answer.status_code == 400
    assert words in answer.json()[field][0]
    assert author_client.get(WEBHOOKS).json() == []


def test_agent_host_gets_403_everywhere(author_client: APIClient, agent_client: APIClient) -> None:
    created = _create(author_client)
    one = f"{WEBHOOKS}/{created['id']}"

    answers = [
        agent_client.get(WEBHOOKS),
        agent_client.post(
            WEBHOOKS, {"url": "https://x.example/", "events": ["ping"]}, format="json"
        ),
        agent_client.get(one),
        agent_client.put(one, {"active": False}, format="json"),
        agent_client.delete(one),
        agent_client.get(f"{one}/deliveries"),
        agent_client.post(f"{one}/test"),
        agent_client.get("/api/audit"),
    ]

    assert [answer.status_code for answer in answers] == [403] * 8
    assert "prompt authors" in answers[0].json()["detail"]


def test_update_keeps_what_is_left_out(author_client: APIClient) -> None:
    created = _create(author_client, include_text=True)

    answer = author_client.put(
        f"{WEBHOOKS}/{created['id']}", {"events": ["host.changed"]}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["events"] == ["host.changed"]
    assert answer.json()["include_text"] is True
    assert answer.json()["url"] == "https://ci.example.com/hooks"


def test_delete_then_404(author_client: APIClient) -> None:
    created = _create(author_client)
    one = f"{WEBHOOKS}/{created['id']}"

    assert author_client.delete(one).status_code == 204
    assert author_client.get(one).status_code == 404
    assert author_client.delete(one).json() == {
        "detail": f"There is no webhook subscription {created['id']}."
    }


@pytest.mark.parametrize(
    "path", ["/api/webhooks/0", "/api/webhooks/" + "9" * 30, "/api/webhooks/x"]
)
def test_unknown_or_impossible_id_is_404_json(author_client: APIClient, path: str) -> None:
    answer = author_client.get(path)

    assert answer.status_code == 404
    assert "detail" in answer.json()


def test_test_event_lands_in_the_delivery_log(author_client: APIClient) -> None:
    with receiving() as receiver:
        created = _create(author_client, url=receiver.url)
        one = f"{WEBHOOKS}/{created['id']}"

        sent = author_client.post(f"{one}/test")
        run_queued()
        [item] = receiver.wait_for(1)

    assert sent.status_code == 202
    assert item.message_id == sent.json()["event_id"]
    [attempt] = author_client.get(f"{one}/deliveries").json()["results"]
    assert attempt["event_id"] == sent.json()["event_id"]
    assert (attempt["type"], attempt["attempt"], attempt["status_code"]) == ("ping", 1, 200)
    assert attempt["error"] == "" and attempt["response"] == "thanks"
    assert attempt["duration_ms"] >= 0
    assert Event.objects.get().type == "ping" and Delivery.objects.get().state == "delivered"


def test_delivery_log_pages_newest_first(author_client: APIClient) -> None:
    with receiving() as receiver:
        created = _create(author_client, url=receiver.url)
        one = f"{WEBHOOKS}/{created['id']}"
        for _ in range(3):
            author_client.post(f"{one}/test")
        run_queued()

    first = author_client.get(f"{one}/deliveries", {"page_size": 2}).json()
    rest = author_client.get(first["next"]).json()

    ids = [item["event_id"] for item in first["results"] + rest["results"]]
    assert len(set(ids)) == 3 and rest["next"] is None
    assert ids == list(Event.objects.order_by("-id").values_list("message_id", flat=True))

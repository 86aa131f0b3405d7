"""GET /api/audit: every change, newest first, filtered by actor and action, in cursor
pages; never a token or a secret."""

from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from sysprompt.accounts import services as accounts
from sysprompt.library import services as library
from sysprompt.prompts.services import template_save


def test_audit_lists_changes_newest_first(author: User, author_client: APIClient) -> None:
    template_save(text="one", author=author)
    library.variant_save(name="core", text="Core.", author=author)
    library.variant_delete(name="core", author=author)

    results = author_client.get("/api/audit").json()["results"]

    assert [(r["actor"], r["action"], r["object"]) for r in results] == [
        ("author", "fragment.deleted", "fragment core (default variant)"),
        ("author", "fragment.saved", "fragment core (default variant)"),
        ("author", "template.saved", "template version 1"),
        # the fixtures' author and its token, made by the system (no request)
        (None, "token.created", "token of user author"),
        (None, "user.permission_added", "user author"),
        (None, "user.created", "user author"),
    ]
    assert results[2]["summary"] == "saved template version 1 (3 characters)"


def test_audit_filters_by_actor_and_action(author: User, author_client: APIClient) -> None:
    other = User.objects.create_user("grace")
    template_save(text="a", author=author)
    template_save(text="b", author=other)
    library.variant_save(name="core", text="Core.", author=other)

    by_grace = author_client.get("/api/audit", {"actor": "grace"}).json()["results"]
    saves = author_client.get("/api/audit", {"action": "template.saved"}).json()["results"]
    fragments = author_client.get("/api/audit", {"action": "fragment."}).json()["results"]

    assert [r["action"] for r in by_grace] == ["fragment.saved", "template.saved"]
    assert [r["actor"] for r in saves] == ["grace", "author"]
    assert [r["action"] for r in fragments] == ["fragment.saved"]


def test_audit_pages_with_a_cursor(author: User, author_client: APIClient) -> None:
    for index in range(5):
        template_save(text=f"v{index}", author=author)

    # (the fixtures' user and token are in the log too: the filter leaves them out)
    first = author_client.get("/api/audit", {"page_size": "2", "action": "template."}).json()
    second = author_client.get(first["next"]).json()
    third = author_client.get(second["next"]).json()

    objects = [r["object"] for page in (first, second, third) for r in page["results"]]
    assert objects == [f"template version {n}" for n in (5, 4, 3, 2, 1)]
    assert third["next"] is None


def test_audit_never_holds_a_token_or_secret(author: User, author_client: APIClient) -> None:
    created = accounts.agent_host_create(name="build-01", author=author)
    rotated = accounts.agent_host_rotate(name="build-01", author=author)
    webhook = author_client.post(
        "/api/webhooks",
        {"url": "https://ci.example.com/hook?token=abc123", "events": ["host.changed"]},
        format="json",
    ).json()
    secret = webhook["secret"]

    text = str(author_client.get("/api/audit").json())

    for hidden in (created.token, rotated.token, secret, "abc123", "/hook"):
        assert hidden not in text
    assert "rotated the token of agent host build-01" in text
    assert f"created webhook {webhook['id']} to https://ci.example.com for host.changed" in text

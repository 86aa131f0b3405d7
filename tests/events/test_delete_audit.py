"""Every delete is in the audit log, whoever makes it and wherever: a conversation's
frozen prompt (the API, the editor, the Django admin one by one and in bulk, its own
host), a fragment variant, a test context, a webhook, an agent host's label, override
and token, a user, a group, a failed-login record (tests/accounts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from sysprompt.accounts import services as accounts
from sysprompt.events import services as events
from sysprompt.events.models import AuditRecord
from sysprompt.groups import PROMPT_AUTHORS_GROUP, PROMPT_PUBLISHERS_GROUP
from sysprompt.library import services as library
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.releases import services as releases
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

HOST = "build-01"


@dataclass
class World:
    writer: User  # a prompt author and publisher ("Prompt authors", "Prompt publishers")
    root: User  # a superuser, in the Django admin
    host: User
    host_token: str
    workdir: Path


@pytest.fixture
def world(db: None, workdir: Path) -> World:
    accounts.groups_ensure()
    writer = User.objects.create_user("writer")
    writer.groups.add(
        *Group.objects.filter(name__in=[PROMPT_AUTHORS_GROUP, PROMPT_PUBLISHERS_GROUP])
    )
    root = User.objects.create_superuser("root", password="Root-pw-1a2b")
    made = accounts.agent_host_ensure(name=HOST)
    host = User.objects.get(username=HOST)
    return World(User.objects.get(pk=writer.pk), root, host, made.token, workdir)


def conversation(owner: User, conversation_id: str = "c-1") -> ConversationPrompt:
    now = timezone.now()
    return ConversationPrompt.objects.create(
        prompt=default_prompt(),
        conversation_id=conversation_id,
        system_prompt="Be brief.",
        cwd="/srv/project",
        constructed_at=now,
        created_at=now,
        owner=owner,
    )


def web(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api(user: User) -> APIClient:
    return token_client(user)


def _api_delete(w: World) -> None:
    conversation(w.host)
    assert api(w.writer).delete("/api/conversations/c-1/system-prompt").status_code == 204


def _editor_forget(w: World) -> None:
    conversation(w.host)
    assert web(w.writer).post("/conversations/c-1/forget").status_code == 302


def _host_deletes_its_own(w: World) -> None:
    conversation(w.host)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {w.host_token}")
    assert client.delete("/api/conversations/c-1/system-prompt").status_code == 204


def _admin_delete_one(w: World) -> None:
    row = conversation(w.host)
    url = f"/admin/sysprompt/conversationprompt/{row.pk}/delete/"
    assert web(w.root).post(url, {"post": "yes"}).status_code == 302


def _admin_delete_selected(w: World) -> None:
    rows = [conversation(w.host, "c-1"), conversation(w.host, "c-2")]
    answer = web(w.root).post(
        "/admin/sysprompt/conversationprompt/",
        {"action": "delete_selected", "_selected_action": [r.pk for r in rows], "post": "yes"},
    )
    assert answer.status_code == 302


def _fragment(w: World) -> None:
    library.variant_save(name="core", text="Core.", author=w.writer)
    library.variant_delete(name="core", author=w.writer)


def _test_context(w: World) -> None:
    releases.test_context_save(name="ci", fields={"cwd": str(w.workdir)}, author=w.writer)
    releases.test_context_delete(name="ci", author=w.writer)


def _webhook(w: World) -> None:
    made = events.webhook_create(
        url="https://ci.example.com/hook", events=["host.changed"], author=w.writer
    )
    events.webhook_delete(webhook_id=made.webhook.id, author=w.writer)


def _host_label(w: World) -> None:
    releases.label_set(name="staging", target="latest", author=w.writer)
    releases.host_label_set(username=HOST, label="staging", author=w.writer)
    releases.host_label_set(username=HOST, label=None, author=w.writer)


def _host_override(w: World) -> None:
    releases.host_override_set(username=HOST, override="Be kind.", author=w.writer)
    releases.host_override_set(username=HOST, override=None, author=w.writer)


def _host_token(w: World) -> None:
    accounts.agent_host_rotate(name=HOST, author=w.writer)


def _host_user_in_admin(w: World) -> None:
    assert (
        web(w.root).post(f"/admin/auth/user/{w.host.pk}/delete/", {"post": "yes"}).status_code
        == 302
    )


def _group_in_admin(w: World) -> None:
    group = Group.objects.create(name="Night shift")
    assert (
        web(w.root).post(f"/admin/auth/group/{group.pk}/delete/", {"post": "yes"}).status_code
        == 302
    )


DELETES: list[tuple[str, Callable[[World], None], list[tuple[str, str, str]]]] = [
    (
        "an author deletes a host's conversation (API)",
        _api_delete,
        [("writer", "conversation.deleted", "conversation c-1")],
    ),
    (
        "an author forgets a host's conversation (editor)",
        _editor_forget,
        [("writer", "conversation.deleted", "conversation c-1")],
    ),
    (
        "a host deletes its own conversation",
        _host_deletes_its_own,
        [(HOST, "conversation.deleted", "conversation c-1")],
    ),
    (
        "the admin deletes a conversation",
        _admin_delete_one,
        [("root", "conversation.deleted", "conversation c-1")],
    ),
    (
        "the admin deletes conversations in bulk",
        _admin_delete_selected,
        [
            ("root", "conversation.deleted", "conversation c-1"),
            ("root", "conversation.deleted", "conversation c-2"),
        ],
    ),
    (
        "a fragment variant",
        _fragment,
        [("writer", "fragment.deleted", "fragment core (default variant)")],
    ),
    ("a test context", _test_context, [("writer", "test_context.deleted", "test context ci")]),
    ("a webhook", _webhook, [("writer", "webhook.deleted", "{webhook}")]),
    ("a host's label", _host_label, [("writer", "host.label_removed", f"agent host {HOST}")]),
    (
        "a host's override",
        _host_override,
        [("writer", "host.override_removed", f"agent host {HOST}")],
    ),
    (
        "a host's token (rotated)",
        _host_token,
        [("writer", "token.deleted", f"token of user {HOST}")],
    ),
    (
        "an agent host's user, in the admin (its token with it)",
        _host_user_in_admin,
        [
            ("root", "token.deleted", f"token of user {HOST}"),
            ("root", "user.deleted", f"user {HOST}"),
        ],
    ),
    ("a group, in the admin", _group_in_admin, [("root", "group.deleted", "group Night shift")]),
]


@pytest.mark.parametrize(("case", "delete", "expected"), DELETES, ids=[c[0] for c in DELETES])
def test_every_delete_is_recorded(
    world: World, case: str, delete: Callable[[World], None], expected: list[tuple[str, str, str]]
) -> None:
    mark = AuditRecord.objects.order_by("-pk").values_list("pk", flat=True).first() or 0

    delete(world)

    actions = [action for _, action, _ in expected]
    kept = AuditRecord.objects.filter(pk__gt=mark, action__in=actions).order_by("pk")
    made = AuditRecord.objects.filter(pk__gt=mark, action="webhook.created").first()
    named = {"{webhook}": made.object if made else ""}
    wanted = [(actor, action, named.get(what, what)) for actor, action, what in expected]
    assert list(kept.values_list("actor", "action", "object")) == wanted


def test_a_deleted_conversation_is_recorded_with_its_host_and_label(world: World) -> None:
    conversation(world.host)

    api(world.writer).delete("/api/conversations/c-1/system-prompt")

    record = AuditRecord.objects.get(action="conversation.deleted")
    assert record.summary == (
        f"deleted the stored prompt of conversation c-1 of {HOST} (label production)"
    )
    assert "Be brief." not in record.summary  # the prompt's text stays out of the log

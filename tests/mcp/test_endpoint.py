"""``/mcp`` in this process, through Django's test client, on the test database.

The test's data is uncommitted (the test runs in a transaction): an answer that sees
it was computed on the request's own thread and connection, as ``sysprompt.mcp``
promises; a worker thread would have a connection of its own and not see it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings
from rest_framework.authtoken.models import Token

from sysprompt.library import services as library
from sysprompt.prompts import selectors

PROTOCOL = "2025-06-18"


def mcp_post(
    client: Client, user: User | None, message: dict[str, Any], **headers: str
) -> tuple[int, dict[str, str], Any]:
    extra: dict[str, Any] = {
        "HTTP_ACCEPT": "application/json, text/event-stream",
        "HTTP_MCP_PROTOCOL_VERSION": PROTOCOL,
        **headers,
    }
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        extra["HTTP_AUTHORIZATION"] = f"Bearer {token.key}"
    answer = client.post("/mcp", data=json.dumps(message), content_type="application/json", **extra)
    return answer.status_code, dict(answer.headers), json.loads(answer.content)


def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.django_db
def test_mcp_prompts_list_sees_the_requests_own_transaction(agent_host: User, author: User) -> None:
    library.variant_save(name="uncommitted", text="Seen in this transaction.", author=author)

    status, _, body = mcp_post(Client(), agent_host, request("prompts/list"))

    assert status == 200, body
    names = [prompt["name"] for prompt in body["result"]["prompts"]]
    assert "fragment/uncommitted" in names


@pytest.mark.django_db
def test_mcp_first_turn_stores_for_the_token_user(agent_host: User, workdir: Path) -> None:
    params = {
        "name": "system-prompt",
        "arguments": {"conversation_id": "in-process", "cwd": str(workdir)},
    }

    status, _, body = mcp_post(Client(), agent_host, request("prompts/get", params))

    assert status == 200, body
    stored = selectors.conversation_prompt_get("in-process", agent_host.pk)
    assert stored is not None and stored.owner_id == agent_host.pk
    assert body["result"]["messages"][0]["content"]["text"] == stored.system_prompt
    assert "Run the tests before you commit." in (stored.system_prompt or "")


@pytest.mark.django_db
def test_mcp_inactive_users_token_is_refused(agent_host: User) -> None:
    agent_host.is_active = False
    agent_host.save()

    status, headers, body = mcp_post(Client(), agent_host, request("prompts/list"))

    assert status == 401
    assert headers["Content-Type"] == "application/json"
    assert body["error"]["message"] == "User inactive or deleted."


@pytest.mark.django_db
def test_mcp_host_matching_a_domain_pattern_passes_both_checks(
    agent_host: User, settings: Settings
) -> None:
    settings.ALLOWED_HOSTS = [".example.com"]

    status, _, body = mcp_post(
        Client(), agent_host, request("prompts/list"), HTTP_HOST="mcp.example.com:8443"
    )
    refused, _, refusal = mcp_post(
        Client(), agent_host, request("prompts/list"), HTTP_HOST="example.org"
    )

    assert status == 200, body
    assert refused == 400
    assert "Invalid Host header" in refusal["error"]["message"]


@pytest.mark.django_db
def test_mcp_origin_is_allowed_when_trusted_or_an_allowed_host(
    agent_host: User, settings: Settings
) -> None:
    settings.ALLOWED_HOSTS = ["testserver", "sysprompt.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://editor.example"]
    client = Client()

    def origin(value: str) -> int:
        return mcp_post(client, agent_host, request("prompts/list"), HTTP_ORIGIN=value)[0]

    assert origin("https://sysprompt.example") == 200
    assert origin("https://editor.example") == 200
    assert origin("https://editor.example.attacker.test") == 403
    assert origin("null") == 403
    assert origin("http://localhost:9999") == 403


@pytest.mark.django_db
def test_mcp_any_host_allowed_still_refuses_foreign_origins(
    agent_host: User, settings: Settings
) -> None:
    settings.ALLOWED_HOSTS = ["*"]
    client = Client()

    def origin(value: str) -> int:
        return mcp_post(client, agent_host, request("prompts/list"), HTTP_ORIGIN=value)[0]

    assert origin("http://testserver") == 200  # the request's own
    assert origin("http://attacker.example") == 403


@pytest.mark.django_db
def test_mcp_notification_is_202_without_a_body_or_html_type(agent_host: User) -> None:
    token, _ = Token.objects.get_or_create(user=agent_host)
    answer = Client().post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION=PROTOCOL,
        HTTP_AUTHORIZATION=f"Bearer {token.key}",
    )

    assert answer.status_code == 202
    assert answer.content == b""
    assert "html" not in answer.headers.get("Content-Type", "")

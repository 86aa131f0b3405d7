"""``GET /api/me``: who the token is and what it may do, by the rules the operations
check (an MCP server lists each caller only the tools it may use from it)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

NONE = {"template": False, "library": False, "releases": False, "publish": False}


def test_me_of_an_agent_host_may_do_nothing_more(host_client: APIClient, host: AgentHost) -> None:
    answer = host_client.get("/api/me")

    assert answer.status_code == 200
    assert answer.json() == {
        "username": "host-1",
        "agent_host": True,
        "permissions": {**NONE, "evaluations": False},
    }
    assert host_client.get("/api/labels").status_code == 403  # as it says


def test_me_of_an_author_may_edit_and_release_but_not_publish(author_client: APIClient) -> None:
    answer = author_client.get("/api/me").json()

    assert answer["agent_host"] is False
    assert answer["permissions"] == {
        "template": True,
        "library": True,
        "releases": True,
        "publish": False,
        "evaluations": True,
    }
    assert author_client.get("/api/labels").status_code == 200


def test_me_of_a_publisher_may_publish(publisher_client: APIClient) -> None:
    assert publisher_client.get("/api/me").json()["permissions"]["publish"] is True


def test_me_of_a_user_with_only_the_publish_permission_may_not_publish(db: None) -> None:
    """Moving a protected label needs the author's permission too."""
    user = User.objects.create_user("publishes-only")
    user.user_permissions.add(Permission.objects.get(codename="publish_release"))

    answer = token_client(user).get("/api/me").json()

    assert answer["permissions"] == {**NONE, "evaluations": False}


def test_me_without_a_token_is_401() -> None:
    answer = APIClient().get("/api/me")

    assert answer.status_code == 401
    assert answer.json()["detail"]

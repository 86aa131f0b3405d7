"""GET and PUT /api/agent-hosts/{username}/override: an agent host's instance override,
for prompt authors only, and what it does to the host's conversations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from tests.api.library_support import call, put_fragment, turn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("author_publishes")]

URL = "/api/agent-hosts/{}/override"


def set_override(client: APIClient, username: str, override: object) -> Any:
    return client.put(URL.format(username), {"override": override}, format="json")


def test_get_answers_null_before_any_set(author_client: APIClient, host: AgentHost) -> None:
    response = author_client.get(URL.format(host.username))

    assert response.status_code == 200
    assert response.json() == {
        "prompt": "default",
        "username": "host-1",
        "override": None,
        "updated_at": None,
        "updated_by": None,
    }


@pytest.mark.parametrize(
    "override",
    [
        "Answer briefly.",
        {"content": "Answer briefly.", "strategy": "prepend"},
        {"preset": "persona", "variables": {"who": "a reviewer"}},
        None,
    ],
)
def test_put_sets_and_get_answers_the_override(
    author_client: APIClient, host: AgentHost, override: object
) -> None:
    put_fragment(author_client, "persona", "You are [var:who].")

    saved = set_override(author_client, host.username, override)
    loaded = author_client.get(URL.format(host.username))

    assert saved.status_code == 200
    assert saved.json()["override"] == override
    assert saved.json()["updated_by"] == "author"
    assert saved.json()["updated_at"] is not None
    assert loaded.json() == saved.json()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"content": "x", "strategy": "replace"}, "override.strategy"),
        ({"preset": "missing"}, "override.preset"),
        ({"content": "x", "preset": "persona"}, "override"),
        ({}, "override"),
        (3, "override"),
        ({"content": "x", "extra": 1}, "override.extra"),
        ({"preset": "Bad Name"}, "override.preset"),
    ],
)
def test_put_answers_400_and_keeps_the_override_when_refused(
    author_client: APIClient, host: AgentHost, override: object, field: str
) -> None:
    put_fragment(author_client, "persona", "You are [var:who].")
    set_override(author_client, host.username, "kept")

    response = set_override(author_client, host.username, override)

    assert response.status_code == 400
    [(key, [message])] = response.json().items()
    assert key == field
    assert message
    assert author_client.get(URL.format(host.username)).json()["override"] == "kept"


def test_put_answers_400_when_the_override_key_is_missing(
    author_client: APIClient, host: AgentHost
) -> None:
    response = author_client.put(URL.format(host.username), {}, format="json")

    assert response.json() == {"override": ["This field is required."]}


@pytest.mark.parametrize("username", ["nobody", "author", "nul%00"])
@pytest.mark.parametrize("method", ["get", "put"])
def test_override_answers_404_when_the_user_is_no_agent_host(
    author_client: APIClient, username: str, method: str
) -> None:
    response = call(author_client, method, URL.format(username), {"override": "x"})

    assert response.status_code == 404
    assert "agent host" in response.json()["detail"]


@pytest.mark.parametrize("method", ["get", "put"])
def test_override_answers_403_when_the_caller_is_no_author(
    host_client: APIClient, host: AgentHost, method: str
) -> None:
    response = call(host_client, method, URL.format(host.username), {"override": "mine"})

    assert response.status_code == 403
    assert "sysprompt.change_templateversion" in response.json()["detail"]


@pytest.mark.parametrize("method", ["get", "put"])
def test_override_answers_401_without_credentials(host: AgentHost, method: str) -> None:
    response = call(APIClient(), method, URL.format(host.username), {})

    assert response.status_code == 401


def test_override_answers_415_when_the_body_is_not_json(
    author_client: APIClient, host: AgentHost
) -> None:
    response = author_client.put(URL.format(host.username), "x", content_type="text/plain")

    assert response.status_code == 415


def test_override_applies_from_the_next_construction_on(
    author_client: APIClient, host_client: APIClient, host: AgentHost, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": "base"}, format="json")
    set_override(author_client, host.username, "instance one")
    first = turn(host_client, "resolve", workdir).json()

    set_override(author_client, host.username, {"content": "instance two", "strategy": "prepend"})
    later = turn(host_client, "resolve", workdir).json()
    rebuilt = turn(host_client, "construct", workdir).json()

    assert first["system_prompt"] == "base\n\ninstance one"
    assert later == first
    assert rebuilt["system_prompt"] == "instance two\n\nbase"


def test_override_of_one_host_leaves_another_alone(
    author_client: APIClient, agent_client: APIClient, host: AgentHost, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": "base"}, format="json")
    set_override(author_client, host.username, "only for host-1")

    response = turn(agent_client, "resolve", workdir)

    assert response.json()["system_prompt"] == "base"

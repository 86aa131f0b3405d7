"""A construct or compact keeps the conversation's frozen context for every field it
leaves out — ``cwd``, ``model``, ``provider``, ``tools``, ``variables``, ``override`` —
and says which (``context_kept``); a field given replaces it. Before, a compaction that
gave only what changed stored ``model: ""`` beside the kept provider, picked another
fragment variant, and every later turn with the conversation's model was a mismatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.prompts.models import ConversationPrompt
from tests.api.library_support import CONVERSATION, put_fragment

pytestmark = pytest.mark.django_db

TEMPLATE = "[prompt:model]|[prompt:provider]|[var:team]|[fragment:core]|[prompt:cwd]"
FIRST: dict[str, Any] = {
    "model": "gpt-5",
    "provider": "openai",
    "tools": ["shell"],
    "variables": {"team": "infra"},
    "override": {"content": "thread", "strategy": "append"},
}
ALL_KEPT = ["cwd", "model", "provider", "tools", "variables", "override"]


def post(client: APIClient, action: str, cid: str = "c1", **body: Any) -> Any:
    return client.post(CONVERSATION.format(cid) + f"/{action}", body, format="json")


@pytest.fixture
def frozen(agent_client: APIClient, author_client: APIClient, workdir: Path) -> dict[str, Any]:
    """A conversation's first turn, for gpt-5 on openai, whose fragment has a variant
    for that model."""
    author_client.put("/api/system-prompt", {"template": TEMPLATE}, format="json")
    put_fragment(author_client, "core", "any model")
    put_fragment(author_client, "core", "openai", query={"provider": "openai"})
    put_fragment(author_client, "core", "gpt-5", query={"provider": "openai", "model": "gpt-5"})
    first = post(agent_client, "resolve", cwd=str(workdir), **FIRST)
    assert first.status_code == 201, first.json()
    data: dict[str, Any] = first.json()
    return data


def context_of(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: answer[key] for key in ("cwd", *FIRST)}


@pytest.mark.parametrize("action", ["compact", "construct"])
def test_call_without_context_keeps_the_whole_frozen_context(
    agent_client: APIClient, frozen: dict[str, Any], workdir: Path, action: str
) -> None:
    answer = post(agent_client, action)

    assert answer.status_code == 200, answer.json()
    data = answer.json()
    assert data["context_kept"] == ALL_KEPT
    assert context_of(data) == context_of(frozen)
    stored = data.get("persisted_system_prompt", data["system_prompt"])
    assert stored == f"gpt-5|openai|infra|gpt-5|{workdir}\n\nthread"
    assert data["fragments_used"] == frozen["fragments_used"]
    row = ConversationPrompt.objects.get(conversation_id="c1")
    assert (row.cwd, row.model, row.provider) == (str(workdir), "gpt-5", "openai")
    later = post(agent_client, "resolve", cwd=str(workdir), model="gpt-5", provider="openai")
    assert "context_mismatch" not in later.json()


def test_compact_replaces_the_fields_given_and_keeps_the_others(
    agent_client: APIClient, frozen: dict[str, Any], workdir: Path
) -> None:
    answer = post(agent_client, "compact", model="gpt-4.1", variables={"team": "web"})

    assert answer.status_code == 200, answer.json()
    data = answer.json()
    assert data["context_kept"] == ["cwd", "provider", "tools", "override"]
    assert (data["model"], data["provider"], data["variables"]) == (
        "gpt-4.1",
        "openai",
        {"team": "web"},
    )
    assert data["persisted_system_prompt"] == f"gpt-4.1|openai|web|openai|{workdir}\n\nthread"


def test_compact_with_every_field_given_keeps_nothing(
    agent_client: APIClient, frozen: dict[str, Any], allowed_root: Path
) -> None:
    other = allowed_root / "other"
    other.mkdir()

    answer = post(
        agent_client,
        "compact",
        cwd=str(other),
        model="",
        provider="",
        tools=[],
        variables={},
        override=None,
    )

    assert answer.status_code == 200, answer.json()
    data = answer.json()
    assert data["context_kept"] == []
    assert data["persisted_system_prompt"] == f"|||any model|{other}"


@pytest.mark.parametrize("action", ["compact", "construct"])
def test_first_call_without_cwd_is_refused_naming_cwd_and_stores_nothing(
    agent_client: APIClient, workdir: Path, action: str
) -> None:
    answer = post(agent_client, action, cid="new-1", model="gpt-5")

    assert answer.status_code == 400
    assert list(answer.json()) == ["cwd"]
    assert "has no stored prompt yet" in answer.json()["cwd"][0]
    assert not ConversationPrompt.objects.filter(conversation_id="new-1").exists()


def test_first_compact_with_a_cwd_keeps_nothing(agent_client: APIClient, workdir: Path) -> None:
    answer = post(agent_client, "compact", cid="new-2", cwd=str(workdir))

    assert answer.status_code == 201
    assert answer.json()["context_kept"] == []


def test_compact_without_cwd_of_another_hosts_conversation_is_a_new_one_and_changes_nothing(
    agent_client: APIClient, frozen: dict[str, Any], host_client: APIClient
) -> None:
    answer = host_client.post(CONVERSATION.format("c1") + "/compact", {}, format="json")

    # ids are scoped to the agent host: for this host, c1 is a conversation not yet made
    assert (answer.status_code, list(answer.json())) == (400, ["cwd"])
    row = ConversationPrompt.objects.get(conversation_id="c1")
    assert row.system_prompt == frozen["system_prompt"]

"""The host context on resolve, construct, compact and the template preview: provider,
tools, variables, the thread override and (resolve only) the call override."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.prompts.models import ConversationPrompt
from tests.api.library_support import CONVERSATION, put_fragment, sha256, turn

pytestmark = pytest.mark.django_db

TEMPLATE = "[prompt:provider]|[if tool:shell]shell[endif]|[var:team]|[fragment:core]"
CONTEXT: dict[str, Any] = {
    "provider": "Anthropic",
    "tools": ["shell", "grep"],
    "variables": {"team": "infra"},
    "override": {"content": "thread", "strategy": "append"},
}


@pytest.fixture
def library(author_client: APIClient) -> None:
    author_client.put("/api/system-prompt", {"template": TEMPLATE}, format="json")
    put_fragment(author_client, "core", "core")
    put_fragment(author_client, "core", "claude core", query={"provider": "anthropic"})


@pytest.mark.parametrize("action", ["resolve", "construct", "compact"])
def test_conversation_renders_and_stores_the_host_context(
    agent_client: APIClient, workdir: Path, library: None, action: str
) -> None:
    response = turn(agent_client, action, workdir, **CONTEXT)

    assert response.status_code == 201
    body = response.json()
    stored = "Anthropic|shell|infra|claude core\n\nthread"
    assert body.get("persisted_system_prompt", body["system_prompt"]) == stored
    assert body["provider"] == "Anthropic"
    assert (body["tools"], body["variables"]) == (["shell", "grep"], {"team": "infra"})
    assert body["override"] == CONTEXT["override"]
    assert body["fragments_used"] == [
        {"name": "core", "provider": "anthropic", "model": None, "version": 1}
    ]
    shown = agent_client.get(CONVERSATION.format("c1")).json()
    assert {key: shown[key] for key in CONTEXT} == {**CONTEXT}
    assert shown["fragments_used"] == body["fragments_used"]


def test_conversation_list_shows_the_host_context(
    agent_client: APIClient, workdir: Path, library: None
) -> None:
    turn(agent_client, "resolve", workdir, **CONTEXT)

    [item] = agent_client.get("/api/conversations").json()["results"]

    assert {key: item[key] for key in CONTEXT} == {**CONTEXT}
    assert [use["name"] for use in item["fragments_used"]] == ["core"]


def test_conversation_without_context_answers_empty_context(
    agent_client: APIClient, workdir: Path, library: None
) -> None:
    body = turn(agent_client, "resolve", workdir).json()

    assert body["system_prompt"] == "|||core"
    assert (body["provider"], body["tools"], body["variables"]) == ("", [], {})
    assert body["override"] is None


def test_compact_keeps_the_thread_override_unless_given_and_null_removes_it(
    agent_client: APIClient, workdir: Path, library: None
) -> None:
    turn(agent_client, "construct", workdir, override="kept")

    kept = turn(agent_client, "compact", workdir).json()
    replaced = turn(agent_client, "compact", workdir, override="other").json()
    removed = turn(agent_client, "compact", workdir, override=None).json()

    assert kept["persisted_system_prompt"] == "|||core\n\nkept"
    assert replaced["persisted_system_prompt"] == "|||core\n\nother"
    assert removed["persisted_system_prompt"] == "|||core"
    assert removed["override"] is None


@pytest.mark.parametrize("first_turn", [True, False])
def test_resolve_call_override_answers_layered_and_stores_nothing(
    agent_client: APIClient, workdir: Path, library: None, first_turn: bool
) -> None:
    if not first_turn:
        turn(agent_client, "resolve", workdir, override="thread")
    stored = "|||core\n\nthread"

    response = turn(
        agent_client,
        "resolve",
        workdir,
        override="thread",
        call_override={"content": "just now", "strategy": "prepend"},
    )
    later = turn(agent_client, "resolve", workdir)

    assert response.status_code == (201 if first_turn else 200)
    body = response.json()
    assert body["system_prompt"] == "just now\n\n" + stored
    assert body["sha256"] == sha256("just now\n\n" + stored)
    assert body["persisted_system_prompt"] == stored
    assert body["persisted_sha256"] == sha256(stored)
    assert later.json()["system_prompt"] == stored
    assert "persisted_system_prompt" not in later.json()
    assert ConversationPrompt.objects.get().system_prompt == stored
    assert agent_client.get(CONVERSATION.format("c1")).json()["sha256"] == sha256(stored)


def test_resolve_call_override_preset_renders_for_the_request(
    author_client: APIClient, agent_client: APIClient, workdir: Path, library: None
) -> None:
    put_fragment(author_client, "persona", "You are [var:who].", defaults={"who": "careful"})
    turn(agent_client, "resolve", workdir)

    body = turn(
        agent_client,
        "resolve",
        workdir,
        call_override={"preset": "persona", "variables": {"who": "quick"}},
    ).json()

    assert body["system_prompt"] == "|||core\n\nYou are quick."
    assert body["persisted_system_prompt"] == "|||core"


HOST_VALUE_LIMIT = 65_536
INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("provider not a string", {"provider": 3}, "provider"),
    ("provider too long", {"provider": "p" * 201}, "provider"),
    ("tools not a list", {"tools": "shell"}, "tools"),
    ("tools over 200", {"tools": [f"t{i}" for i in range(201)]}, "tools"),
    ("tool not a string", {"tools": [1]}, "tools"),
    ("tool with a bracket", {"tools": ["a]b"]}, "tools"),
    ("tool with a space at the end", {"tools": ["shell "]}, "tools"),
    ("variables not an object", {"variables": ["a"]}, "variables"),
    ("variables over 200", {"variables": {f"v{i}": "x" for i in range(201)}}, "variables"),
    (
        "variable value too large",
        {"variables": {"big": "x" * (HOST_VALUE_LIMIT + 1)}},
        "variables.big",
    ),
    ("variable value not a string", {"variables": {"n": 1}}, "variables.n"),
    ("variable name with a bracket", {"variables": {"a[b": "x"}}, "variables"),
    ("variable name with a line break", {"variables": {"a\nb": "x"}}, "variables"),
    ("variable with a NUL", {"variables": {"a": "\0"}}, "variables"),
    (
        "override replace",
        {"override": {"content": "x", "strategy": "replace"}},
        "override.strategy",
    ),
    ("override both", {"override": {"content": "x", "preset": "core"}}, "override"),
    ("override neither", {"override": {"strategy": "append"}}, "override"),
    ("override unknown preset", {"override": {"preset": "missing"}}, "override.preset"),
    ("override a number", {"override": 3}, "override"),
    (
        "call override replace",
        {"call_override": {"content": "x", "strategy": "replace"}},
        "call_override.strategy",
    ),
    (
        "call override unknown preset",
        {"call_override": {"preset": "missing"}},
        "call_override.preset",
    ),
]


@pytest.mark.parametrize(
    ("body", "field"), [(body, field) for _, body, field in INVALID], ids=[i for i, _, _ in INVALID]
)
def test_resolve_answers_400_naming_the_field_when_the_context_is_invalid(
    agent_client: APIClient, workdir: Path, library: None, body: dict[str, Any], field: str
) -> None:
    response = turn(agent_client, "resolve", workdir, **body)

    assert response.status_code == 400
    [key] = response.json()
    assert key == field or key.startswith(field + "."), response.json()
    assert not ConversationPrompt.objects.exists()


def test_variable_value_at_the_limit_is_accepted(
    agent_client: APIClient, workdir: Path, library: None
) -> None:
    value = "é" * (HOST_VALUE_LIMIT // 2)

    response = turn(agent_client, "resolve", workdir, variables={"team": value})

    assert response.status_code == 201
    assert response.json()["variables"] == {"team": value}


@pytest.mark.parametrize("action", ["construct", "compact"])
@pytest.mark.parametrize("body", [{"tools": "x"}, {"override": {"preset": "missing"}}])
def test_construct_and_compact_answer_400_when_the_context_is_invalid(
    agent_client: APIClient, workdir: Path, library: None, action: str, body: dict[str, Any]
) -> None:
    response = turn(agent_client, action, workdir, **body)

    assert response.status_code == 400
    assert not ConversationPrompt.objects.exists()


def test_template_preview_renders_with_the_host_context(
    agent_client: APIClient, workdir: Path, library: None
) -> None:
    response = agent_client.post(
        "/api/system-prompt/preview", {"cwd": str(workdir), **CONTEXT}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["system_prompt"] == "Anthropic|shell|infra|claude core\n\nthread"


def test_template_preview_answers_400_naming_the_field(
    agent_client: APIClient, workdir: Path
) -> None:
    response = agent_client.post(
        "/api/system-prompt/preview", {"cwd": str(workdir), "tools": [None]}, format="json"
    )

    assert response.status_code == 400
    assert "tools" in response.json()

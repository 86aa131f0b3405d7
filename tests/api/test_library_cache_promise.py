"""The cache promise under library edits: editing a fragment, a variant, an agent host's
instance override or a preset between turns changes no frozen prompt (byte for byte, the
same sha256) until construct or compact, which then pick every edit up."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from sysprompt.prompts.models import ConversationPrompt
from tests.api.library_support import put_fragment, sha256, turn

pytestmark = pytest.mark.django_db

TEMPLATE = "Root.\n[fragment:core]\n[fragment:env/tools]"
CONTEXT: dict[str, Any] = {
    "provider": "anthropic",
    "tools": ["shell"],
    "variables": {"team": "infra"},
    "override": {"preset": "persona"},
}


def set_override(client: APIClient, username: str, override: object) -> None:
    response = client.put(
        f"/api/agent-hosts/{username}/override", {"override": override}, format="json"
    )
    assert response.status_code == 200, response.json()


@pytest.mark.usefixtures("author_publishes")
def test_resolve_1000_turns_same_bytes_through_library_edits_until_construct(
    author_client: APIClient, host_client: APIClient, host: AgentHost, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": TEMPLATE}, format="json")
    put_fragment(author_client, "core", "Core v1.")
    put_fragment(author_client, "env/tools", "[if tool:shell]Shell v1 for [var:team].[endif]")
    put_fragment(author_client, "persona", "Persona v1: [var:who].", defaults={"who": "careful"})
    set_override(author_client, host.username, "Instance v1.")

    first = turn(host_client, "resolve", workdir, **CONTEXT)
    assert first.status_code == 201
    frozen = first.json()
    assert frozen["system_prompt"] == (
        "Root.\nCore v1.\nShell v1 for infra.\n\nInstance v1.\n\nPersona v1: careful."
    )
    edits: dict[int, Callable[[], object]] = {
        100: lambda: put_fragment(author_client, "core", "Core v2."),
        200: lambda: put_fragment(
            author_client, "core", "Core claude.", query={"provider": "anthropic"}
        ),
        300: lambda: put_fragment(author_client, "env/tools", "Tools v2.", compress=True),
        400: lambda: set_override(
            author_client, host.username, {"content": "Instance v2.", "strategy": "prepend"}
        ),
        500: lambda: put_fragment(
            author_client, "persona", "Persona v2: [var:who].", defaults={"who": "bold"}
        ),
        600: lambda: author_client.delete("/api/library/fragments/env/tools"),
    }

    answers = set()
    for number in range(1, 1000):
        if number in edits:
            edits[number]()
        body = {} if number % 2 else CONTEXT
        response = turn(host_client, "resolve", workdir, model=f"m-{number % 3}", **body)
        assert response.status_code == 200
        answer = response.json()
        # The frozen prompt whatever the model; the answer says when it differs.
        differs = answer.pop("context_mismatch", [])
        assert differs == ([] if f"m-{number % 3}" == frozen["model"] else ["model"])
        answers.add(json.dumps(answer, sort_keys=True))

    assert answers == {json.dumps(frozen, sort_keys=True)}
    assert ConversationPrompt.objects.get().sha256 == sha256(frozen["system_prompt"])

    rebuilt = turn(host_client, "construct", workdir).json()

    fresh = "Instance v2.\n\nRoot.\nCore claude.\n\n\nPersona v2: bold."
    assert rebuilt["system_prompt"] == fresh
    assert rebuilt["sha256"] == sha256(fresh)
    assert [use["name"] for use in rebuilt["fragments_used"]] == ["core", "persona"]
    stable = {turn(host_client, "resolve", workdir).json()["sha256"] for _ in range(20)}
    assert stable == {sha256(fresh)}


def test_compact_picks_up_library_edits_the_frozen_prompt_ignored(
    author_client: APIClient, host_client: APIClient, host: AgentHost, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": "[fragment:core]"}, format="json")
    put_fragment(author_client, "core", "before")
    frozen = turn(host_client, "resolve", workdir).json()

    put_fragment(author_client, "core", "after")
    same = turn(host_client, "resolve", workdir).json()
    compacted = turn(host_client, "compact", workdir).json()

    assert same == frozen
    assert compacted["persisted_system_prompt"] == "after"
    assert compacted["fragments_used"] == [
        {"name": "core", "provider": None, "model": None, "version": 2}
    ]


def test_later_turn_repeating_a_deleted_preset_still_answers_the_frozen_prompt(
    author_client: APIClient, host_client: APIClient, workdir: Path
) -> None:
    put_fragment(author_client, "persona", "Persona.")
    body: dict[str, Any] = {"override": {"preset": "persona"}}
    frozen = turn(host_client, "resolve", workdir, **body).json()

    author_client.delete("/api/library/fragments/persona")
    later = turn(host_client, "resolve", workdir, **body)

    assert later.status_code == 200
    assert later.json() == frozen

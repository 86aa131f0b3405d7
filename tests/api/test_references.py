"""GET /api/system-prompt/references (agent-hosts.md §0): every ``type:name`` the
current template can reach for a provider and model, through fragments and the caller's
instance override, with a strong ETag and 304 for If-None-Match.

Real API, real database, real library rows; nothing is resolved (no file is opened).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost, agent_host_ensure
from sysprompt.prompts.rendering import TemplateReferences
from tests.api.library_support import put_fragment

pytestmark = pytest.mark.django_db

REFERENCES = "/api/system-prompt/references"
TEMPLATE = "/api/system-prompt"


def set_template(client: APIClient, text: str) -> None:
    assert client.put(TEMPLATE, {"template": text}, format="json").status_code == 200


def references(client: APIClient, **query: str) -> Any:
    return client.get(REFERENCES, query)


def keys(client: APIClient, **query: str) -> list[str]:
    response = references(client, **query)
    assert response.status_code == 200, response.content
    found: list[str] = response.json()["references"]
    return found


def host_client(name: str) -> tuple[AgentHost, APIClient]:
    host = agent_host_ensure(name=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {host.token}")
    return host, client


def test_references_of_the_default_template(host_client_1: APIClient) -> None:
    response = references(host_client_1)

    assert response.status_code == 200
    assert response.json() == {"references": ["file:AGENTS.md", "prompt:cwd"], "host_resolves": []}


def test_every_branch_sorted_without_fragment_keys_or_literal_tags(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    set_template(
        author_client,
        "[if git:branch]On [git:branch].[else][system:time][endif]\n"
        "[File:NOT.md] [if !var:team][tool:shell][endif][prompt:model][fragment:missing]\n"
        "[if file:unclosed.md] is literal text: the block is never closed",
    )

    found = keys(host_client_1)

    assert found == ["git:branch", "prompt:model", "system:time", "tool:shell", "var:team"]
    assert not any(key.startswith("fragment:") for key in found)


def test_fragments_are_followed_for_the_provider_and_model(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    put_fragment(author_client, "core", "Core [file:CORE.md] [fragment:env/git]")
    put_fragment(author_client, "core", "Claude [file:CLAUDE.md]", query={"provider": "anthropic"})
    put_fragment(
        author_client,
        "core",
        "Sonnet [system:date]",
        query={"provider": "anthropic", "model": "claude-sonnet"},
    )
    put_fragment(author_client, "env/git", "[git:status] [fragment:core]")  # a cycle
    set_template(author_client, "[fragment:core] in [prompt:cwd]")

    default = keys(host_client_1)
    anthropic = keys(host_client_1, provider="anthropic", model="claude-opus")
    sonnet = keys(host_client_1, provider="Anthropic", model="Claude Sonnet")

    assert default == ["file:CORE.md", "git:status", "prompt:cwd"]
    assert anthropic == ["file:CLAUDE.md", "prompt:cwd"]
    assert sonnet == ["prompt:cwd", "system:date"]


def test_compressed_template_is_read_as_compiled(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    put_fragment(author_client, "notes", "Notes: [file:NOTES.md]\n", compress=True)
    set_template(author_client, "[fragment:notes]")

    assert keys(host_client_1) == ["file:NOTES.md"]


@pytest.mark.usefixtures("author_publishes")
def test_the_callers_instance_override_counts_and_only_the_callers(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    put_fragment(author_client, "persona", "You are [var:who] in [git:branch].")
    response = author_client.put(
        "/api/agent-hosts/host-1/override", {"override": {"preset": "persona"}}, format="json"
    )
    assert response.status_code == 200, response.content
    _, other = host_client("host-2")

    mine = keys(host_client_1)
    theirs = keys(other)

    assert mine == ["file:AGENTS.md", "git:branch", "prompt:cwd", "var:who"]
    assert theirs == ["file:AGENTS.md", "prompt:cwd"]


def test_etag_is_strong_and_names_the_answer(host_client_1: APIClient) -> None:
    response = references(host_client_1)

    etag = response["ETag"]
    answer = response.json()
    digest = hashlib.sha256(json.dumps(answer).encode()).hexdigest()
    assert list(answer) == ["references", "host_resolves"]
    assert etag == f'"{digest}"'
    assert etag == TemplateReferences(tuple(answer["references"]), ()).etag
    assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize("header", ["{etag}", "W/{etag}", '"other", {etag}', "*"])
def test_if_none_match_naming_the_list_answers_304_without_a_body(
    host_client_1: APIClient, header: str
) -> None:
    etag = references(host_client_1)["ETag"]

    response = host_client_1.get(REFERENCES, headers={"If-None-Match": header.format(etag=etag)})

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag


@pytest.mark.parametrize("header", ['"other"', "not an entity tag", ""])
def test_if_none_match_naming_another_list_answers_200(
    host_client_1: APIClient, header: str
) -> None:
    response = host_client_1.get(REFERENCES, headers={"If-None-Match": header})

    assert response.status_code == 200
    assert response.json()["references"] == ["file:AGENTS.md", "prompt:cwd"]


def test_a_new_template_answers_a_new_list_and_etag(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    old = references(host_client_1)["ETag"]
    set_template(author_client, "[git:branch]")

    stale = host_client_1.get(REFERENCES, headers={"If-None-Match": old})
    same_keys = references(host_client_1)
    set_template(author_client, "On [git:branch]!")  # other text, the same references
    unchanged = host_client_1.get(REFERENCES, headers={"If-None-Match": same_keys["ETag"]})

    assert stale.status_code == 200
    assert stale.json()["references"] == ["git:branch"]
    assert stale["ETag"] != old
    assert unchanged.status_code == 304


def test_provider_and_model_pick_their_own_etag(
    author_client: APIClient, host_client_1: APIClient
) -> None:
    put_fragment(author_client, "core", "[file:A.md]")
    put_fragment(author_client, "core", "[file:B.md]", query={"provider": "openai"})
    set_template(author_client, "[fragment:core]")

    default = references(host_client_1)
    openai = references(host_client_1, provider="openai", model="gpt-5")

    assert default["ETag"] != openai["ETag"]
    assert openai.json()["references"] == ["file:B.md"]


def test_references_are_listed_not_resolved(
    author_client: APIClient, host_client_1: APIClient, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "RULES.md"  # nothing to read: a key, not a value
    set_template(author_client, f"[if file:{missing}][file:{missing}][endif][git:status]")

    assert keys(host_client_1) == [f"file:{missing}", "git:status"]


@pytest.mark.parametrize("query", [{"provider": "p" * 201}, {"model": "m" * 201}])
def test_a_query_too_long_answers_400_naming_it(
    host_client_1: APIClient, query: dict[str, str]
) -> None:
    response = references(host_client_1, **query)

    assert response.status_code == 400
    assert set(response.json()) == set(query)


def test_needs_credentials(db: None) -> None:
    response = APIClient().get(REFERENCES)

    assert response.status_code == 401


def test_an_agent_host_without_permissions_may_ask(agent_client: APIClient) -> None:
    assert references(agent_client).status_code == 200


@pytest.fixture
def host_client_1(host: AgentHost, host_client: APIClient) -> APIClient:
    """The agent host ``host-1`` (tests/api/conftest.py) and its token client."""
    return host_client

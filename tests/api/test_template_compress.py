"""``compress`` of the global template over the API (library.md, Compression): PUT
``/api/system-prompt`` sets it, GET shows it, a PUT that leaves it out keeps the current
version's (as a variant's PUT does), and the prompt a conversation gets is compressed.

Real API, real database, a real working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.prompts.models import TemplateVersion

pytestmark = pytest.mark.django_db

TEMPLATE = "/api/system-prompt"
LOOSE = "## Rules\n\n\n- **Tabs**:   always\n"
COMPRESSED = "# Rules\n\n- Tabs: always"


def put(client: APIClient, body: dict[str, Any], **headers: str) -> Any:
    return client.put(TEMPLATE, body, format="json", headers=headers)


def test_template_get_shows_compress_off_for_the_default(agent_client: APIClient) -> None:
    assert agent_client.get(TEMPLATE).json()["compress"] is False


def test_template_put_compress_sets_it_and_get_shows_it(author_client: APIClient) -> None:
    saved = put(author_client, {"template": LOOSE, "compress": True})

    assert saved.status_code == 200, saved.content
    assert saved.json()["compress"] is True
    assert saved.json()["template"] == LOOSE  # the text stays as written
    assert author_client.get(TEMPLATE).json()["compress"] is True
    assert TemplateVersion.objects.get(number=1).compress is True


# (id, the first PUT's compress, the second PUT's body beyond the template, expected)
KEEP_CASES: list[tuple[str, bool, dict[str, Any], bool]] = [
    ("left out keeps on", True, {}, True),
    ("left out keeps off", False, {}, False),
    ("false turns it off", True, {"compress": False}, False),
    ("true turns it on", False, {"compress": True}, True),
]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [case[1:] for case in KEEP_CASES],
    ids=[case[0] for case in KEEP_CASES],
)
def test_template_put_without_compress_keeps_the_current_setting(
    author_client: APIClient, first: bool, second: dict[str, Any], expected: bool
) -> None:
    assert put(author_client, {"template": "one", "compress": first}).status_code == 200

    again = put(author_client, {"template": "two", **second})

    assert again.status_code == 200
    assert again.json()["compress"] is expected
    assert TemplateVersion.objects.get(number=2).compress is expected


@pytest.mark.parametrize("value", ["yes", 1, None, []])
def test_template_put_compress_not_a_boolean_is_400_and_saves_nothing(
    author_client: APIClient, value: object
) -> None:
    response = put(author_client, {"template": "x", "compress": value})

    assert response.status_code == 400
    assert list(response.json()) == ["compress"]
    assert not TemplateVersion.objects.exists()


def test_template_put_compress_reaches_the_conversations_prompt(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    assert put(author_client, {"template": LOOSE, "compress": True}).status_code == 200

    turn = agent_client.post(
        "/api/conversations/c-compress/system-prompt/resolve",
        {"cwd": str(workdir)},
        format="json",
    )

    assert turn.status_code == 201, turn.content
    assert turn.json()["system_prompt"] == COMPRESSED

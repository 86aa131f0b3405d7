"""What one request can take: the prompt limit, the read budget, the preview's caps.

Each test is an attack or its boundary, on real files and real symlinks, through the
API or the editor as a client sends it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.prompts import rendering, services
from sysprompt.prompts.models import ConversationPrompt

PREVIEW = "/api/system-prompt/preview"
MIB = 1_048_576


def _preview(client: APIClient, cwd: Path, template: str) -> tuple[int, dict[str, Any], int]:
    response = client.post(PREVIEW, {"cwd": str(cwd), "template": template}, format="json")
    return response.status_code, json.loads(response.content), len(response.content)


def _limits(settings: Settings, **limits: int) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, **limits}


@pytest.fixture
def links(workdir: Path) -> Path:
    """``big`` (1,000,000 bytes) and 1,000 symlinks ``l000``…``l999`` to it."""
    (workdir / "big").write_bytes(b"0123456789" * 100_000)
    for index in range(1000):
        (workdir / f"l{index:03}").symlink_to(workdir / "big")
    return workdir


@pytest.mark.django_db
def test_bounds_preview_of_1000_links_to_one_file_is_bounded(
    author_client: APIClient, links: Path
) -> None:
    template = "".join(f"[file:l{index:03}]" for index in range(1000))

    status, body, size = _preview(author_client, links, template)

    assert status == 200
    assert size <= 3 * MIB  # was 2.1 GB
    assert body["system_prompt"] == "0123456789" * 100_000  # l000 fits; no value is cut
    variables, reasons = body["variables"], body["reasons"]
    assert len(variables["file:l000"]) == rendering.PREVIEW_VALUE_CHARS
    assert body["truncated"] == ["file:l000"]
    for index in range(1, 1000):
        key = f"file:l{index:03}"
        assert variables[key] is None
        assert "larger than 1,048,576 bytes (SYSPROMPT_MAX_PROMPT_BYTES)" in reasons[key]


@pytest.mark.django_db
def test_bounds_26000_references_to_one_large_file_is_bounded(
    author_client: APIClient, links: Path
) -> None:
    status, body, size = _preview(author_client, links, "[file:big]" * 26_000)

    assert status == 200
    assert size < 64 * 1024
    assert body["system_prompt"] is None  # the one variable would take it past the limit
    assert body["variables"] == {"file:big": None}
    assert "SYSPROMPT_MAX_PROMPT_BYTES" in body["reasons"]["file:big"]


@pytest.mark.django_db
def test_bounds_read_budget_exhausted_makes_the_rest_missing(
    author_client: APIClient, workdir: Path, settings: Settings
) -> None:
    _limits(settings, MAX_READ_BYTES=2500)
    for index in range(5):
        (workdir / f"f{index}").write_bytes(bytes([65 + index]) * 1000)
    template = "".join(f"[if file:f{index}]{index}[endif]" for index in range(5))

    status, body, _ = _preview(author_client, workdir, template)

    assert status == 200
    assert body["system_prompt"] == "01"
    assert body["variables"]["file:f1"] == "B" * 1000
    for index in (2, 3, 4):
        assert body["variables"][f"file:f{index}"] is None
        assert "SYSPROMPT_MAX_READ_BYTES" in body["reasons"][f"file:f{index}"]


@pytest.mark.django_db
@pytest.mark.parametrize(("value_bytes", "kept"), [(17, True), (18, False)])
def test_bounds_prompt_limit_at_the_boundary(
    author_client: APIClient, workdir: Path, settings: Settings, value_bytes: int, kept: bool
) -> None:
    _limits(settings, MAX_PROMPT_BYTES=20)
    (workdir / "x").write_text("é" + "x" * (value_bytes - 2))  # UTF-8 bytes, not characters

    status, body, _ = _preview(author_client, workdir, "abc[file:x]")

    assert status == 200
    if kept:
        assert body["system_prompt"].encode() == b"abc" + (workdir / "x").read_bytes()
        assert len(body["system_prompt"].encode()) == 20
    else:
        assert body["system_prompt"] == "abc"
        assert body["variables"]["file:x"] is None
        assert body["reasons"]["file:x"] == (
            "would make the prompt larger than 20 bytes (SYSPROMPT_MAX_PROMPT_BYTES)"
        )


@pytest.mark.django_db
def test_bounds_dropped_variable_takes_the_else_branch_when_stored(
    agent_host: User, workdir: Path, settings: Settings
) -> None:
    _limits(settings, MAX_PROMPT_BYTES=30)
    (workdir / "x").write_text("y" * 40)
    services.template_save(text="[file:x]\n[if file:x]has x[else]no x[endif]\n")
    preview = rendering.template_preview(cwd=str(workdir))
    stored = services.conversation_prompt_resolve(
        conversation_id="bounded", cwd=str(workdir), user=agent_host
    )

    assert preview.rendered.prompt == "\nno x\n"
    assert stored.prompt.system_prompt == "\nno x\n"
    assert ConversationPrompt.objects.get(conversation_id="bounded").system_prompt == "\nno x\n"


@pytest.mark.django_db
def test_bounds_literal_text_over_prompt_limit_is_413(
    author_client: APIClient, agent_client: APIClient, workdir: Path, settings: Settings
) -> None:
    _limits(settings, MAX_PROMPT_BYTES=10)

    preview = author_client.post(
        PREVIEW, {"cwd": str(workdir), "template": "0123456789A"}, format="json"
    )
    resolve = agent_client.post(
        "/api/conversations/c-1/system-prompt/resolve", {"cwd": str(workdir)}, format="json"
    )

    assert preview.status_code == 413
    assert preview["Content-Type"] == "application/json"
    assert preview.json()["detail"] == (
        "The template's text alone, without any variable, renders to 11 bytes in UTF-8; "
        "a prompt may have at most 10 bytes (SYSPROMPT_MAX_PROMPT_BYTES)."
    )
    assert resolve.status_code == 413  # the default template is longer than 10 bytes
    assert "SYSPROMPT_MAX_PROMPT_BYTES" in resolve.json()["detail"]
    assert not ConversationPrompt.objects.exists()


@pytest.mark.django_db
def test_bounds_preview_gives_each_distinct_value_once(
    author_client: APIClient, workdir: Path
) -> None:
    (workdir / "a").write_text("same text")
    (workdir / "b").symlink_to(workdir / "a")
    (workdir / "c").write_text("same text")  # another file, equal text

    status, body, _ = _preview(author_client, workdir, "[file:b][file:c][file:a][file:nope]")

    assert status == 200
    assert body["variables"] == {
        "file:a": "same text",
        "file:b": "",
        "file:c": "",
        "file:nope": None,
    }
    assert body["same_as"] == {"file:b": "file:a", "file:c": "file:a"}
    assert body["reasons"] == {"file:nope": "no such file"}
    assert body["truncated"] == []


@pytest.mark.django_db
def test_bounds_preview_section_is_capped(author_client: APIClient, workdir: Path) -> None:
    for index in range(70):
        (workdir / f"v{index:02}").write_text(f"{index:02}" * 2500)  # 5,000 characters
    template = "".join(f"[if file:v{index:02}]·[endif]" for index in range(70))

    status, body, _ = _preview(author_client, workdir, template)

    assert status == 200
    shown = body["variables"]
    assert sum(len(value) for value in shown.values()) == rendering.PREVIEW_SECTION_CHARS
    assert all(len(value) <= rendering.PREVIEW_VALUE_CHARS for value in shown.values())
    assert body["truncated"] == sorted(shown)


@pytest.mark.django_db
def test_bounds_editor_preview_shows_caps_and_duplicates(
    author: User, links: Path, settings: Settings
) -> None:
    web = Client()
    web.force_login(author)
    (links / "small").write_text("tiny")
    (links / "small2").symlink_to(links / "small")
    template = "[file:small][file:small2][file:l000]"

    response = web.post(
        "/editor/preview", {"template": template, "cwd": str(links)}, HTTP_HX_REQUEST="true"
    )
    content = response.content.decode()

    assert response.status_code == 200
    assert len(content) < 1_200_000  # the prompt once (1 MB), the value capped
    assert f"… {1_000_000 - rendering.PREVIEW_VALUE_CHARS:,} more characters".replace(
        ",", ""
    ) in content.replace(",", "")
    assert "same value as <code>[file:small]</code>" in content

    _limits(settings, MAX_PROMPT_BYTES=5)
    too_large = web.post(
        "/editor/preview", {"template": "0123456", "cwd": str(links)}, HTTP_HX_REQUEST="true"
    )
    assert too_large.status_code == 200
    assert "(SYSPROMPT_MAX_PROMPT_BYTES)" in too_large.content.decode()
